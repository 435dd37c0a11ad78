package auth

// What the external tests (package auth_test, which share the signing
// helpers of internal/oauthtest) need to see of the package's insides.

// RoundTripFunc answers a verifier's fetches in a test, through
// WithHTTPClient.
type RoundTripFunc = roundTripFunc

// CachedTokens reports what v (a *JWTVerifier or an *IntrospectionVerifier)
// keeps in its cache of token answers: how many tokens, and the keys they
// are kept under (which must never contain the token itself).
func CachedTokens(v any) (n int, keys [][32]byte) {
	var c *tokenCache
	switch v := v.(type) {
	case *JWTVerifier:
		c = v.verified
	case *IntrospectionVerifier:
		c = v.cache
	default:
		panic("CachedTokens: not a verifier")
	}
	c.mu.Lock()
	for k := range c.m {
		keys = append(keys, k)
	}
	c.mu.Unlock()
	return c.len(), keys
}
