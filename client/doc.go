// Package client calls tools on MCP servers over stdio (a child process) or
// Streamable HTTP, in either protocol era: 2026-07-28 (server/discover,
// per-request _meta and Mcp-* headers) or 2025-11-25 and older (initialize
// and a session), probing the modern one first by default.
//
// Every failure carries one of five codes (CodeOf, and errors.As on the
// matching type): ERR_MCP_TRANSPORT, ERR_MCP_PROTOCOL, ERR_MCP_JSON_RPC_ERROR,
// ERR_MCP_TOOL_ERROR and ERR_MCP_SESSION_INVALID. Results are checked on the
// way in: content blocks against their type, structuredContent against the
// tool's outputSchema from tools/list. A lost HTTP session is re-initialized
// once, a dropped legacy SSE stream is resumed with Last-Event-ID, and every
// request has a timeout, cancellation and optional progress reports.
package client
