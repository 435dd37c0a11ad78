// Package hostile holds the hostile-input tests of toolwire: no code, only
// tests that drive a real server (the reference tools) with malformed,
// ambiguous, oversized and adversarial messages over every transport, stdio
// and Streamable HTTP in both protocol eras, and check each reply exactly
// (JSON-RPC error code, the id echoed, HTTP status and Content-Type) and
// that the connection, session or endpoint goes on serving afterwards. It
// also checks that concurrent clients reusing the same request ids and
// progress tokens never see each other's results, progress or
// cancellations.
//
// Run it with:
//
//	go test -race -count=1 ./internal/hostile
package hostile
