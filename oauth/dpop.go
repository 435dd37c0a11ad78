package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// DPoPKey is a client's DPoP key (RFC 9449): an ECDSA P-256 key that signs
// ES256 proofs. It implements DPoPSigner and is safe for concurrent use.
//
// A proof is a JWT whose header is {"typ":"dpop+jwt","alg":"ES256",
// "jwk":<the public key>} and whose claims are jti (random, fresh for
// every proof), htm (the request method), htu (the request URL without
// query and fragment), iat (now, in seconds), ath (base64url of the
// SHA-256 of the access token, when one is presented) and nonce (the
// server's DPoP-Nonce, when there is one).
type DPoPKey struct {
	signer jose.Signer
	thumb  string
	now    func() time.Time
}

// NewDPoPKey generates a fresh P-256 key.
func NewDPoPKey() (*DPoPKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("oauth: generating a DPoP key: %w", err)
	}
	return LoadDPoPKey(priv)
}

// LoadDPoPKey uses an existing key, which must be on P-256 (ES256).
func LoadDPoPKey(priv *ecdsa.PrivateKey) (*DPoPKey, error) {
	if priv == nil || priv.Curve != elliptic.P256() {
		return nil, errors.New("oauth: a DPoP key must be an ECDSA P-256 key")
	}
	thumb, err := JWKThumbprint(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: priv}, opts)
	if err != nil {
		return nil, fmt.Errorf("oauth: DPoP signer: %w", err)
	}
	return &DPoPKey{signer: signer, thumb: thumb, now: time.Now}, nil
}

// WithClock returns a copy of k whose proofs take iat from now (for
// tests).
func (k *DPoPKey) WithClock(now func() time.Time) *DPoPKey {
	c := *k
	c.now = now
	return &c
}

// Thumbprint is the RFC 7638 SHA-256 thumbprint of the public key,
// base64url without padding: what an access token bound to this key
// carries as cnf.jkt, and what dpop_jkt names in an authorization request.
func (k *DPoPKey) Thumbprint() string { return k.thumb }

// dpopClaims are a proof's claims (RFC 9449 section 4.2).
type dpopClaims struct {
	JTI   string `json:"jti"`
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	IAT   int64  `json:"iat"`
	ATH   string `json:"ath,omitempty"`
	Nonce string `json:"nonce,omitempty"`
}

// Proof signs a proof for a request of method to rawURL; accessToken,
// when not "", is the token the request presents (its hash goes in ath),
// and nonce, when not "", the server's DPoP-Nonce.
func (k *DPoPKey) Proof(method, rawURL, accessToken, nonce string) (string, error) {
	if method == "" {
		return "", errors.New("oauth: DPoP proof without a method")
	}
	htu, err := HTU(rawURL)
	if err != nil {
		return "", err
	}
	c := dpopClaims{JTI: rand.Text(), HTM: method, HTU: htu, IAT: k.now().Unix(), Nonce: nonce}
	if accessToken != "" {
		c.ATH = ATH(accessToken)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	jws, err := k.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("oauth: signing a DPoP proof: %w", err)
	}
	return jws.CompactSerialize()
}

// HTU is the htu of a proof for rawURL: the absolute URL without its query
// and fragment (RFC 9449 section 4.2).
func HTU(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", errors.New("oauth: a DPoP proof needs an absolute request URL")
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment, u.User = "", false, "", "", nil
	return u.String(), nil
}

// ATH is the ath of a proof presenting accessToken: the base64url (no
// padding) SHA-256 of its ASCII bytes (RFC 9449 section 4.2).
func ATH(accessToken string) string {
	sum := sha256.Sum256([]byte(accessToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// JWKThumbprint is the RFC 7638 SHA-256 thumbprint, base64url without
// padding, of a public key (*ecdsa.PublicKey, *rsa.PublicKey,
// ed25519.PublicKey).
func JWKThumbprint(pub crypto.PublicKey) (string, error) {
	jwk := jose.JSONWebKey{Key: pub}
	if !jwk.Valid() || !jwk.IsPublic() {
		return "", errors.New("oauth: not a public key a JWK can carry")
	}
	sum, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("oauth: JWK thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}
