// Package policy decides who may use which downstream tool, prompt and
// resource of the gateway: it resolves a caller's Identity (an API key, an
// OAuth access token's subject, or anonymous), maps it to a Persona, and
// evaluates the persona's allow and deny globs, deny first. It is pure
// library code, immutable once built and safe for concurrent use.
package policy

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// KeyPrefix starts every API key NewKey makes, so a key is recognizable in
// a secret scanner and distinguishable from a JWT sent as a bearer token.
const KeyPrefix = "twk_"

// hashPrefix names the digest of a configured key hash.
const hashPrefix = "sha256:"

// NewKey returns a fresh API key: KeyPrefix followed by 32 random bytes
// (256 bits from crypto/rand) in unpadded base64url.
func NewKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating an API key: %w", err)
	}
	return KeyPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// IsKeyFormat reports whether s has the shape of a key NewKey makes, so
// a gateway can tell an API key sent as a bearer token from an OAuth
// access token without trying both.
func IsKeyFormat(s string) bool {
	rest, ok := strings.CutPrefix(s, KeyPrefix)
	if !ok || len(rest) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}

// HashKey returns the form in which a key is configured: "sha256:" and the
// lowercase hex SHA-256 of the key. A fast unsalted hash is right here,
// unlike for passwords: API keys carry 256 bits of entropy, so neither
// brute force nor precomputed tables can invert the hash, and a slow KDF
// would only add latency to every request.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// parseHash returns the digest in a configured hash, or an error saying
// what is wrong with it (never echoing it: it may be a key pasted by
// mistake).
func parseHash(h string) ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	rest, ok := strings.CutPrefix(h, hashPrefix)
	if !ok {
		if strings.HasPrefix(h, KeyPrefix) {
			return d, errors.New("is a key in clear, not a hash; configure the output of `toolwire gateway hash-key`")
		}
		return d, fmt.Errorf("does not start with %q", hashPrefix)
	}
	if len(rest) != 2*sha256.Size {
		return d, fmt.Errorf("has %d hex digits after %q, want %d", len(rest), hashPrefix, 2*sha256.Size)
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return d, fmt.Errorf("has %q at offset %d: only lowercase hex digits may follow %q", c, len(hashPrefix)+i, hashPrefix)
		}
	}
	hex.Decode(d[:], []byte(rest))
	return d, nil
}

// KeySet is the set of configured API keys, known only by their hashes.
type KeySet struct {
	digests [][sha256.Size]byte
	names   []string
}

// NewKeySet builds a KeySet from configured hashes by key name. Each hash
// must be well formed (as HashKey makes it) and belong to one name only;
// errors name the entry.
func NewKeySet(hashes map[string]string) (*KeySet, error) {
	names := make([]string, 0, len(hashes))
	for n := range hashes {
		names = append(names, n)
	}
	sort.Strings(names)
	ks := &KeySet{}
	seen := make(map[[sha256.Size]byte]string, len(hashes))
	var errs []error
	for _, n := range names {
		if n == "" {
			errs = append(errs, errors.New("API key with an empty name"))
			continue
		}
		d, err := parseHash(hashes[n])
		if err != nil {
			errs = append(errs, fmt.Errorf("API key %q: hash %w", n, err))
			continue
		}
		if other, dup := seen[d]; dup {
			errs = append(errs, fmt.Errorf("API key %q: same hash as API key %q", n, other))
			continue
		}
		seen[d] = n
		ks.digests = append(ks.digests, d)
		ks.names = append(ks.names, n)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ks, nil
}

// Len is the number of configured keys; 0 for a nil KeySet.
func (ks *KeySet) Len() int {
	if ks == nil {
		return 0
	}
	return len(ks.names)
}

// Lookup returns the name of the key presented, if it is configured.
//
// Timing: the presented key is hashed, then its digest is compared with
// every configured digest by crypto/subtle, without stopping at a match,
// so the time taken depends only on the number of keys, not on which one
// matched or how many leading bytes agreed. That is stricter than needed
// (a map lookup on the digest would leak only facts about the SHA-256 of
// a value the caller chose, which do not help find a preimage of any
// stored digest) and costs one 32-byte comparison per configured key,
// nanoseconds for the tens of keys a gateway has.
func (ks *KeySet) Lookup(presented string) (name string, ok bool) {
	if ks == nil || presented == "" {
		return "", false
	}
	d := sha256.Sum256([]byte(presented))
	match := -1
	for i := range ks.digests {
		eq := subtle.ConstantTimeCompare(d[:], ks.digests[i][:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return "", false
	}
	return ks.names[match], true
}

// FromRequest returns the API key an HTTP request presents, from
// "Authorization: Bearer <key>" or "X-API-Key: <key>"; "" if it presents
// none. Presenting two different credentials, repeating a header, or using
// another Authorization scheme is an error: the gateway must not guess
// which credential the caller meant.
func FromRequest(h http.Header) (string, error) {
	var bearer, apiKey string
	if vs := h.Values("Authorization"); len(vs) > 1 {
		return "", errors.New("more than one Authorization header")
	} else if len(vs) == 1 {
		scheme, cred, ok := strings.Cut(strings.TrimSpace(vs[0]), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return "", fmt.Errorf("unsupported Authorization scheme %q: use Bearer", scheme)
		}
		bearer = strings.TrimSpace(cred)
		if !ok || bearer == "" {
			return "", errors.New("empty bearer credential in the Authorization header")
		}
	}
	if vs := h.Values("X-API-Key"); len(vs) > 1 {
		return "", errors.New("more than one X-API-Key header")
	} else if len(vs) == 1 {
		apiKey = strings.TrimSpace(vs[0])
		if apiKey == "" {
			return "", errors.New("empty X-API-Key header")
		}
	}
	switch {
	case bearer != "" && apiKey != "" && subtle.ConstantTimeCompare([]byte(bearer), []byte(apiKey)) != 1:
		return "", errors.New("the Authorization and X-API-Key headers carry different credentials")
	case bearer != "":
		return bearer, nil
	default:
		return apiKey, nil
	}
}
