package server

import "github.com/toolwire/toolwire/internal/uritemplate"

// uriTemplate is a parsed RFC 6570 template. Matching is linear-time (RE2,
// never a backtracking matcher: see internal/uritemplate), and readResource
// bounds the URIs it matches (Limits.MaxURILength).
type uriTemplate = *uritemplate.Template

// parseURITemplate parses a resource template's uriTemplate. Templates that
// name a variable twice are refused (uritemplate.Parse).
func parseURITemplate(s string) (uriTemplate, error) {
	return uritemplate.Parse(s)
}
