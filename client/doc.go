// Package client speaks MCP to servers over stdio (a child process,
// Command), Streamable HTTP (HTTP) or any connection carrying whole
// messages (Conn, such as an in-process server from memory.Serve), in
// either protocol era: 2026-07-28 (server/discover, per-request _meta and
// Mcp-* headers) or 2025-11-25 and older (initialize and a session),
// probing the modern one first by default (WithEra, mcp.EraAuto). It calls
// tools, gets prompts, lists and reads resources and templates, asks for
// completions, sets the log level, and follows changes: resources/subscribe
// in a legacy session (Subscribe), subscriptions/listen in 2026-07-28
// (Listen). What servers ask of it (elicitation, sampling, roots) is
// answered by typed handlers (WithElicitationHandler, WithSamplingHandler,
// WithRoots), which also declare the matching client capabilities, both
// as legacy server-to-client requests and as 2026-07-28 inputRequests.
//
// Every failure carries one of five codes (CodeOf, and errors.As on the
// matching type): ERR_MCP_TRANSPORT, ERR_MCP_PROTOCOL, ERR_MCP_JSON_RPC_ERROR,
// ERR_MCP_TOOL_ERROR and ERR_MCP_SESSION_INVALID. Results are checked on the
// way in: read exactly (member names match case-sensitively and none may
// appear twice, so the client sees what every other reader of the message
// sees), content blocks against their type, structuredContent against the
// tool's outputSchema from tools/list. CallToolRaw and Call return results
// byte for byte as received, for proxies. A lost HTTP session is
// re-initialized once, a dropped legacy SSE stream is resumed with
// Last-Event-ID, and every request has a timeout, cancellation and optional
// progress reports. Over HTTP, HTTP.Auth authorizes every request and
// answers 401 and 403 challenges (package oauth implements it with OAuth
// 2.1); without it a 401 or 403 is a *TransportError carrying the status
// and the WWW-Authenticate value.
//
// Requests are sent and matched through a jsonrpc.Peer, the same pending
// table the server uses for its requests to clients, and wrapped in
// jsonrpc.Middleware, the shape a server's middleware has: WithMiddleware
// for the requests the client sends, WithReceivingMiddleware for the
// requests a server sends it (ping, roots/list, sampling, elicitation, and
// the inputRequests of 2026-07-28 input_required results).
package client
