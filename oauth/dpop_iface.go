package oauth

// DPoPSigner makes RFC 9449 proofs. When Config.DPoP is set, the
// Authorizer sends a proof in the DPoP header of every token request (and
// dpop_jkt, the key's thumbprint, on the authorization request), retries a
// token request once on 400 use_dpop_nonce with the DPoP-Nonce it names,
// and presents a DPoP-bound token (token_type DPoP) to the MCP server as
// "Authorization: DPoP <token>" with a fresh proof, retrying once on a 401
// DPoP error="use_dpop_nonce" with the new nonce.
type DPoPSigner interface {
	// Proof returns a fresh proof JWT (new jti, current iat) for a request
	// with the method and url (htm, htu: the URL without query and
	// fragment). accessToken, when not "", is the token the request carries
	// (the proof's ath is its SHA-256); nonce, when not "", is the server's
	// latest DPoP-Nonce.
	Proof(method, url, accessToken, nonce string) (string, error)
	// Thumbprint is the RFC 7638 SHA-256 thumbprint of the public key,
	// base64url without padding (dpop_jkt).
	Thumbprint() string
}
