// Package otc bridges MCP tools and Open Tool Calling 1.0 (OTC, renamed the
// Open eXecution Protocol, OXP, in March 2025).
//
// Server side, Handler serves a Backend's tools over HTTP as OTC: an
// in-process *server.Server through NewServerBackend, or any MCP server
// through an adapter of two methods. Client side, Client calls any OTC or OXP
// server.
//
// The mapping, in both directions:
//
//   - Tool identity: Naming maps an MCP tool name to an OTC id
//     Toolkit.Tool@X.Y.Z and name Toolkit_Tool ("Gmail.GetEmails" ->
//     "Gmail.GetEmails@1.0.0"; "get-sum" -> "Tools.get_sum@1.0.0"). The
//     _meta keys MetaToolID and MetaToolVersion override it per tool.
//     Collisions are a *MappingError, never an overwrite.
//   - Versions: tool_id "T@X.Y.Z" resolves exactly, "T@X" to X.0.0, "T" to
//     the highest version. Anything else is a 400.
//   - Results: see ResponseFromResult and ResultFromResponse. Tool failures
//     carry mcp.RetryGuidance under _meta[mcp.MetaRetryGuidance], which maps
//     to OTC's developer_message, can_retry, retry_after_ms and
//     additional_prompt_content; tools produce it by returning a
//     *server.RetryableError.
//   - Input: validated against the tool's inputSchema (defaults applied)
//     before the call; a failure is a 422 whose parameter_errors maps each
//     top-level parameter to what is wrong with it.
//   - Traces: a call's trace_id (32 hex digits) becomes the OpenTelemetry
//     trace of the context Backend.CallTool gets (a span context with that
//     trace id and no span id), so that a tracing MCP server or client in
//     between, such as the gateway's (gateway.WithTracerProvider), starts
//     its span in that trace and sends it on in the MCP request's _meta
//     traceparent.
//   - Spellings: requests are read in either spelling ("$schema" otc://1.0
//     or urn:oxp:1.0, {"request": ...} or a bare request (not both: a
//     body with "request" and a top-level "tool_id" is a 400), "tools" or
//     "items", input_schema with or without {"parameters": ...}); responses
//     are written as OTC unless the request sends "$schema": "urn:oxp:1.0"
//     or the OXP-Version header, or the handler is built WithDialect(OXP).
//
// Auth is off unless WithAPIKeys or WithJWT is given; when off, credentials
// and the Authorization header are ignored. GET /health never needs auth.
//
// Whatever the auth, Handler refuses (403) a request whose Host or Origin is
// not allowed (loopback only by default; WithAllowedHosts,
// WithAllowedOrigins), so that a web page cannot reach a local listener by
// DNS rebinding or a cross-site request, and (415) a POST whose Content-Type
// is not application/json, the one form of request a browser cannot send to
// another origin without a preflight. These are the MCP endpoint's rules,
// from the same code.
//
// The directory schema/ holds the JSON Schema of CallToolResponse as
// published and as corrected; see schema/README.md.
package otc
