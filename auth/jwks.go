package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Defaults for the JWKS cache of a JWTVerifier.
const (
	// DefaultJWKSRefreshInterval is the least time between two fetches of
	// the JWKS: a token naming an unknown kid makes the verifier fetch the
	// set again (the issuer may have rotated its keys), but not more often
	// than this, so a stream of tokens with random kids costs the issuer
	// at most one request per interval.
	DefaultJWKSRefreshInterval = 30 * time.Second
	// DefaultJWKSMaxAge is how long a fetched JWKS is used before it is
	// fetched again on the next verification (the old keys stay in use if
	// that fetch fails).
	DefaultJWKSMaxAge = time.Hour
)

// keySet is an issuer's JSON Web Key Set, fetched on demand and cached.
type keySet struct {
	fc          *fetchConfig
	issuer      string // for discovery when jwksURL is ""
	minInterval time.Duration
	maxAge      time.Duration

	mu         sync.Mutex
	jwksURL    string // explicit, or discovered once
	keys       []jose.JSONWebKey
	loaded     bool
	fetchedAt  time.Time // last successful fetch
	attemptAt  time.Time // last fetch attempt, successful or not
	attempted  bool
	lastErr    error         // of the last attempt; nil when it succeeded
	inProgress chan struct{} // closed when the running fetch ends; nil when none runs
	fetches    int           // attempts made, for tests
}

// mayFetch reports whether the rate limit allows a fetch now.
func (ks *keySet) mayFetch(now time.Time) bool {
	return !ks.attempted || now.Sub(ks.attemptAt) >= ks.minInterval || now.Before(ks.attemptAt)
}

// lookup returns the keys that may have signed a token whose header names
// kid (possibly "") and alg. It fetches the JWKS when it has none, when it
// is older than maxAge, or when no key matches kid, within the rate limit.
func (ks *keySet) lookup(ctx context.Context, kid, alg string) ([]jose.JSONWebKey, error) {
	ks.mu.Lock()
	for {
		now := ks.fc.now()
		var matches []jose.JSONWebKey
		if ks.loaded {
			matches = matchKeys(ks.keys, kid, alg)
			fresh := now.Sub(ks.fetchedAt) < ks.maxAge
			if len(matches) > 0 && fresh {
				ks.mu.Unlock()
				return matches, nil
			}
		}
		if ks.inProgress == nil && !ks.mayFetch(now) {
			lastErr := ks.lastErr
			loaded := ks.loaded
			ks.mu.Unlock()
			switch {
			case len(matches) > 0:
				return matches, nil // stale, but the best there is
			case !loaded:
				return nil, unavailable("the issuer's keys could not be fetched", lastErr)
			case lastErr != nil:
				return nil, unavailable("no key matches the token and the issuer's keys could not be fetched again", lastErr)
			}
			return nil, invalidToken("the token's signing key is not among the issuer's keys")
		}
		if ch := ks.inProgress; ch != nil {
			ks.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, unavailable("gave up waiting for the issuer's keys", ctx.Err())
			}
			ks.mu.Lock()
			continue
		}
		ch := make(chan struct{})
		ks.inProgress = ch
		ks.attemptAt, ks.attempted = now, true
		ks.fetches++
		jwksURL := ks.jwksURL
		ks.mu.Unlock()

		keys, discovered, err := ks.fetch(ctx, jwksURL)

		ks.mu.Lock()
		ks.lastErr = err
		if err == nil {
			ks.keys, ks.loaded, ks.fetchedAt = keys, true, ks.fc.now()
			if ks.jwksURL == "" {
				ks.jwksURL = discovered
			}
		}
		ks.inProgress = nil
		close(ch)
	}
}

// fetch reads the JWKS, discovering its URL from the issuer's metadata when
// jwksURL is "".
func (ks *keySet) fetch(ctx context.Context, jwksURL string) ([]jose.JSONWebKey, string, error) {
	if jwksURL == "" {
		md, err := ks.fc.discover(ctx, ks.issuer)
		if err != nil {
			return nil, "", err
		}
		if md.JWKSURI == "" {
			return nil, "", errors.New("the issuer's metadata has no jwks_uri")
		}
		if err := checkFetchURL(md.JWKSURI); err != nil {
			return nil, "", err
		}
		jwksURL = md.JWKSURI
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := ks.fc.getJSON(ctx, jwksURL, &set); err != nil {
		return nil, "", err
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		// A key this verifier cannot use (an unknown kty, a symmetric
		// key, an encryption key) is skipped, not an error for the set.
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if _, symmetric := k.Key.([]byte); symmetric {
			continue
		}
		if !k.IsPublic() {
			k = k.Public()
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, "", errors.New(jwksURL + ": the JWKS has no usable signing key")
	}
	return keys, jwksURL, nil
}

// matchKeys returns the keys with the given kid (any key when kid is "")
// whose type fits alg and whose own "alg", if any, is alg.
func matchKeys(keys []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		if keyFits(k.Key, alg) {
			out = append(out, k)
		}
	}
	return out
}

// keyFits reports whether key is a public key of the kind alg uses.
func keyFits(key any, alg string) bool {
	switch jose.SignatureAlgorithm(alg) {
	case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
		_, ok := key.(*rsa.PublicKey)
		return ok
	case jose.ES256:
		return ecCurve(key, elliptic.P256())
	case jose.ES384:
		return ecCurve(key, elliptic.P384())
	case jose.ES512:
		return ecCurve(key, elliptic.P521())
	case jose.EdDSA:
		_, ok := key.(ed25519.PublicKey)
		return ok
	}
	return false
}

func ecCurve(key any, c elliptic.Curve) bool {
	k, ok := key.(*ecdsa.PublicKey)
	return ok && k.Curve == c
}
