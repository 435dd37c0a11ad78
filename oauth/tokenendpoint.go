package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// Error is an OAuth error response (RFC 6749 §5.2) or another failure of a
// request to an authorization server. Its text never carries a token or a
// secret the client sent.
type Error struct {
	Op          string // "token request", "registration", "authorization", "revocation"
	StatusCode  int    // HTTP status, 0 when none
	Code        string // the error code, e.g. invalid_grant
	Description string // error_description, redacted and truncated
}

func (e *Error) Error() string {
	s := "oauth: " + e.Op
	if e.StatusCode != 0 {
		s += fmt.Sprintf(": HTTP %d", e.StatusCode)
	}
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// ClientKey is the private key of private_key_jwt client authentication
// (RFC 7523 §2.2): client assertions are signed with it.
type ClientKey struct {
	Signer crypto.Signer // *ecdsa.PrivateKey, *rsa.PrivateKey or ed25519.PrivateKey
	Alg    string        // JWS algorithm, e.g. ES256; "" picks one for the key
	KeyID  string        // kid header, optional
}

// ParsePrivateKeyPEM reads a PKCS #8, SEC 1 (EC) or PKCS #1 (RSA) private
// key in PEM.
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("no PEM block")
	}
	if k, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, fmt.Errorf("unsupported key type %T", k)
	}
	if k, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
		return k, nil
	}
	return nil, errors.New("not a PKCS #8, SEC 1 or PKCS #1 private key")
}

func (k *ClientKey) alg() (jose.SignatureAlgorithm, error) {
	if k.Alg != "" {
		return jose.SignatureAlgorithm(k.Alg), nil
	}
	switch s := k.Signer.(type) {
	case *ecdsa.PrivateKey:
		switch s.Curve.Params().BitSize {
		case 256:
			return jose.ES256, nil
		case 384:
			return jose.ES384, nil
		case 521:
			return jose.ES512, nil
		}
	case *rsa.PrivateKey:
		return jose.RS256, nil
	case ed25519.PrivateKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("no JWS algorithm for a %T", k.Signer)
}

// assertion signs an RFC 7523 client assertion: iss and sub the client
// id, aud the authorization server's issuer, a minute's lifetime.
func (k *ClientKey) assertion(clientID, audience string, now time.Time) (string, error) {
	alg, err := k.alg()
	if err != nil {
		return "", err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if k.KeyID != "" {
		opts = opts.WithHeader("kid", k.KeyID)
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k.Signer}, opts)
	if err != nil {
		return "", fmt.Errorf("client assertion: %w", err)
	}
	claims := jwt.Claims{
		Issuer:    clientID,
		Subject:   clientID,
		Audience:  jwt.Audience{audience},
		ID:        randomString(16),
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now.Add(-5 * time.Second)),
		Expiry:    jwt.NewNumericDate(now.Add(time.Minute)),
	}
	return jwt.Signed(sig).Claims(claims).Serialize()
}

// TokenEndpoint posts requests to an authorization server's token
// endpoint: it authenticates the client (Client.AuthMethod), adds a DPoP
// proof when DPoP is set (retrying once on use_dpop_nonce), bounds and
// parses the response. A Grant receives one; its fields may be copied to
// reach another token endpoint (an identity provider's, say) the same way.
type TokenEndpoint struct {
	URL    string       // the token endpoint
	Issuer string       // the authorization server's issuer (client assertions' audience)
	Client ClientInfo   // the client and how it authenticates
	Key    *ClientKey   // for private_key_jwt
	HTTP   *http.Client // the package's guarded client (nil: a plain one with a timeout)
	DPoP   DPoPSigner   // nil: no DPoP
	Now    func() time.Time

	// Nonces keeps the DPoP-Nonce of each server; shared by the
	// Authorizer's endpoints.
	Nonces *NonceCache

	// MaxResponseBytes bounds a response read (longer is an error); 0
	// means DefaultMaxResponseBytes. The Authorizer sets
	// Config.MaxResponseBytes.
	MaxResponseBytes int
	// MaxRedirects bounds the redirects one request follows, on top of
	// HTTP's own policy: 0 means DefaultMaxRedirects, a negative number
	// none. The Authorizer sets Config.MaxRedirects.
	MaxRedirects int
}

// NonceCache keeps the latest DPoP-Nonce per server (by URL origin).
type NonceCache struct {
	mu sync.Mutex
	m  map[string]string
}

// Get returns the nonce of the server of rawURL.
func (c *NonceCache) Get(rawURL string) string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[originOf(rawURL)]
}

// Set records a nonce ("" is ignored); it reports whether it changed.
func (c *NonceCache) Set(rawURL, nonce string) bool {
	if c == nil || nonce == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]string{}
	}
	k := originOf(rawURL)
	changed := c.m[k] != nonce
	c.m[k] = nonce
	return changed
}

func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// TokenResponse is a successful token response.
type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	TokenType    string          `json:"token_type"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	RefreshToken string          `json:"refresh_token"`
	Scope        string          `json:"scope"`
}

type errorResponse struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// decodeErrorResponse reads an authorization server's error answer (RFC
// 6749 §5.2) by the strict reading; one that is not such an object (a
// member twice, invalid JSON, an HTML page) names no error at all, rather
// than whatever part of it was read before it failed.
func decodeErrorResponse(body []byte) errorResponse {
	var er errorResponse
	if wirejson.Unmarshal(body, &er) != nil {
		return errorResponse{}
	}
	return er
}

// Request posts form (grant_type and the grant's parameters) with the
// client's authentication and returns the token. The Token's Scopes are
// the granted ones (nil when the response names none); Resource, Issuer
// and Client are left for the caller.
func (te *TokenEndpoint) Request(ctx context.Context, form url.Values) (*Token, error) {
	now := time.Now
	if te.Now != nil {
		now = te.Now
	}
	for attempt := 0; ; attempt++ {
		tok, retry, err := te.post(ctx, form, now())
		if !retry || attempt > 0 {
			return tok, err
		}
	}
}

// authenticate adds the client's authentication (Client.AuthMethod) to
// a request to the authorization server: to the form f or the header
// hdr. It returns the secrets it added (to be kept out of errors). op
// names the request in an error.
func (te *TokenEndpoint) authenticate(op string, f url.Values, hdr http.Header, now time.Time) ([]string, error) {
	c := te.Client
	secrets := []string{c.Secret}
	switch c.AuthMethod {
	case "client_secret_basic":
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ID)+":"+url.QueryEscape(c.Secret))))
	case "client_secret_post":
		f.Set("client_id", c.ID)
		f.Set("client_secret", c.Secret)
	case "private_key_jwt":
		if te.Key == nil || te.Key.Signer == nil {
			return nil, &Error{Op: op, Description: "private_key_jwt needs a client key"}
		}
		a, err := te.Key.assertion(c.ID, te.Issuer, now)
		if err != nil {
			return nil, err
		}
		secrets = append(secrets, a)
		f.Set("client_id", c.ID)
		f.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		f.Set("client_assertion", a)
	default: // none
		if c.ID != "" {
			f.Set("client_id", c.ID)
		}
	}
	return secrets, nil
}

// httpClient is HTTP (or a plain client) with the default timeout when it
// has none and MaxRedirects enforced in front of its own redirect policy.
func (te *TokenEndpoint) httpClient() *http.Client {
	return httpguard.Outbound{
		Base: te.HTTP, Timeout: defaultTimeout, Redirects: httpguard.CheckedRedirects, MaxRedirects: redirectLimit(te.MaxRedirects), MaxRedirectsName: "MaxRedirects",
	}.Client()
}

func (te *TokenEndpoint) post(ctx context.Context, form url.Values, now time.Time) (*Token, bool, error) {
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	hdr := http.Header{}
	secrets := []string{form.Get("code"), form.Get("refresh_token"), form.Get("code_verifier"), form.Get("assertion"), form.Get("subject_token")}
	auth, err := te.authenticate("token request", f, hdr, now)
	if err != nil {
		return nil, false, err
	}
	secrets = append(secrets, auth...)
	if te.DPoP != nil {
		proof, err := te.DPoP.Proof(http.MethodPost, htu(te.URL), "", te.Nonces.Get(te.URL))
		if err != nil {
			return nil, false, fmt.Errorf("oauth: DPoP proof: %w", err)
		}
		hdr.Set("DPoP", proof)
	}
	req, err := formRequest(ctx, te.URL, f, hdr)
	if err != nil {
		return nil, false, &Error{Op: "token request", Description: "bad token endpoint URL"}
	}
	resp, err := te.httpClient().Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("oauth: token request to %s: %s", truncate(te.URL, 200), redact(ctxErr(ctx, err).Error(), secrets...))
	}
	defer resp.Body.Close()
	changed := te.Nonces.Set(te.URL, resp.Header.Get("DPoP-Nonce"))
	body, err := readResponse(resp.Body, responseLimit(te.MaxResponseBytes))
	if err != nil {
		return nil, false, &Error{Op: "token request", StatusCode: resp.StatusCode, Description: err.Error()}
	}
	if resp.StatusCode != http.StatusOK {
		er := decodeErrorResponse(body)
		oe := &Error{Op: "token request", StatusCode: resp.StatusCode, Code: truncate(er.Error, 100),
			Description: truncate(redact(er.ErrorDescription, secrets...), 300)}
		// A DPoP nonce the server asks for: worth one more request (the
		// caller retries once; the error stands if it is refused again).
		return nil, te.DPoP != nil && er.Error == "use_dpop_nonce" && changed, oe
	}
	t, derr := decodeTokenResponse(body, te.DPoP != nil, now)
	if derr != nil {
		derr.StatusCode = resp.StatusCode
		return nil, false, derr
	}
	return t, false, nil
}

// Revoke asks the authorization server to revoke token at its RFC 7009
// revocation endpoint, with hint as token_type_hint ("refresh_token",
// "access_token", or "" for none): a POST authenticating the client as
// Request does (no DPoP proof: RFC 7009 asks for none), through HTTP, with
// the response bounded by MaxResponseBytes. An HTTP 200 is success, as it
// is for a token the server no longer knows (RFC 7009 §2.2); anything
// else is an *Error (Op "revocation") whose text never shows the token or
// the client's secrets.
func (te *TokenEndpoint) Revoke(ctx context.Context, endpoint, token, hint string) error {
	if endpoint == "" {
		return &Error{Op: "revocation", Description: "no revocation endpoint"}
	}
	if token == "" {
		return &Error{Op: "revocation", Description: "no token to revoke"}
	}
	now := time.Now
	if te.Now != nil {
		now = te.Now
	}
	f := url.Values{"token": {token}}
	if hint != "" {
		f.Set("token_type_hint", hint)
	}
	hdr := http.Header{}
	auth, err := te.authenticate("revocation", f, hdr, now())
	if err != nil {
		return err
	}
	secrets := append([]string{token}, auth...)
	req, err := formRequest(ctx, endpoint, f, hdr)
	if err != nil {
		return &Error{Op: "revocation", Description: "bad revocation endpoint URL"}
	}
	resp, err := te.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("oauth: revocation at %s: %s", truncate(endpoint, 200), redact(ctxErr(ctx, err).Error(), secrets...))
	}
	defer resp.Body.Close()
	body, err := readResponse(resp.Body, responseLimit(te.MaxResponseBytes))
	if err != nil {
		return &Error{Op: "revocation", StatusCode: resp.StatusCode, Description: err.Error()}
	}
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	er := decodeErrorResponse(body)
	return &Error{Op: "revocation", StatusCode: resp.StatusCode, Code: truncate(redact(er.Error, secrets...), 100),
		Description: truncate(redact(er.ErrorDescription, secrets...), 300)}
}

// decodeTokenResponse reads a successful token response (RFC 6749 §5.1):
// a JSON object with an access token and a Bearer or (for a client with a
// DPoP key) DPoP token type; expires_in is read relative to now.
func decodeTokenResponse(body []byte, dpop bool, now time.Time) (*Token, *Error) {
	var tr tokenResponse
	if err := decodeObject(body, &tr, int64(len(body))); err != nil { // bounded when read
		return nil, &Error{Op: "token request", Description: "the token response is not a JSON object"}
	}
	if tr.AccessToken == "" {
		return nil, &Error{Op: "token request", Description: "the token response has no access_token"}
	}
	switch {
	case strings.EqualFold(tr.TokenType, "bearer"):
		tr.TokenType = "Bearer"
	case strings.EqualFold(tr.TokenType, "dpop"):
		if !dpop {
			return nil, &Error{Op: "token request", Description: "the authorization server issued a DPoP token to a client without a DPoP key"}
		}
		tr.TokenType = "DPoP"
	default:
		return nil, &Error{Op: "token request", Description: fmt.Sprintf("unsupported token_type %q", truncate(tr.TokenType, 40))}
	}
	t := &Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType, RefreshToken: tr.RefreshToken}
	if s := expiresIn(tr.ExpiresIn); s > 0 {
		t.Expiry = now.Add(time.Duration(s) * time.Second)
	}
	if tr.Scope != "" {
		t.Scopes = strings.Fields(tr.Scope)
	}
	return t, nil
}

// expiresIn reads expires_in as a number or a numeric string; 0 when it
// is neither or out of range.
func expiresIn(raw json.RawMessage) int64 {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 || n > 10*365*24*3600 {
		return 0
	}
	return int64(n)
}

// htu is a URL without query and fragment, as DPoP proofs name it.
func htu(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	return u.String()
}

// randomString is n random bytes, base64url without padding.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// formRequest is the POST of form f to endpoint with the headers in hdr
// (client authentication, a DPoP proof), asking for a JSON answer: how a
// client talks to the token and revocation endpoints (RFC 6749 §3.2,
// RFC 7009 §2.1).
func formRequest(ctx context.Context, endpoint string, f url.Values, hdr http.Header) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(f.Encode()))
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	return req, nil
}
