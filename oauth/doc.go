// Package oauth is toolwire's OAuth 2.1 client for MCP servers over
// Streamable HTTP (the authorization specification of MCP 2025-11-25 and
// 2026-07-28, with the 2025-03-26 fallbacks).
//
// An *Authorizer (NewAuthorizer) implements client.HTTPAuth: set it as
// client.HTTP.Auth and every request carries the token bound to the MCP
// endpoint; a 401 starts discovery (WWW-Authenticate, RFC 9728 Protected
// Resource Metadata, RFC 8414 / OpenID Connect discovery), registration
// (pre-registered credentials, a Client ID Metadata Document, or RFC 7591
// dynamic registration) and a grant: the authorization code flow with PKCE
// (S256), state, the RFC 8707 resource and RFC 9207 iss checks through a
// pluggable UserAgent, or a Grant such as ClientCredentials. A 403
// insufficient_scope re-authorizes with the union of the scopes, a bounded
// number of times. Tokens live in a TokenStore (MemoryStore, FileStore),
// keyed and bound by the canonical resource URI, and are refreshed with
// rotation; Authorizers (or processes) sharing a store pick up a token
// another one rotated rather than fail with invalid_grant. Logout revokes
// the tokens (RFC 7009) where the authorization server advertises a
// revocation endpoint, and deletes them. Config.NoInteractive keeps a challenge from ever starting the
// authorization code flow (ErrAuthorizationRequired instead), for a CLI
// that logs in with a command of its own and calls Login there.
//
// Safety: every metadata and endpoint URL must be https, or http on a
// loopback host; every connection the package makes is checked at dial
// time against private, link-local, unspecified and multicast addresses
// (and loopback unless the MCP endpoint is itself loopback), so DNS
// rebinding cannot get round it; responses are size-bounded
// (Config.MaxResponseBytes) and timed (Config.Timeout), redirects counted
// (Config.MaxRedirects);
// tokens are redacted from errors and logs and only ever sent to the
// resource they were issued for.
//
// Extension points: DPoPSigner (RFC 9449 proofs on token and resource
// requests) and Grant (another way to obtain a token from the token
// endpoint, given a *TokenEndpoint that authenticates the client, adds DPoP
// and parses the response).
package oauth
