package otc

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolwire/toolwire/internal/wirejson"
	"math"
	"net/http"
	"strings"
	"time"
)

// API key headers: OTC's spelling and OXP's. Both are read.
const (
	HeaderAPIKey    = "OTC-API-Key"
	HeaderOXPAPIKey = "OXP-API-Key"
)

// DefaultMaxTokenAhead is the furthest a JWT's exp may lie in the future.
const DefaultMaxTokenAhead = 15 * time.Minute

// authConfig is the handler's access control. With no key and no secret,
// auth is off and credentials (including Authorization) are ignored.
type authConfig struct {
	keys     [][sha256.Size]byte
	secret   []byte
	audience string
	maxAhead time.Duration
}

func (a *authConfig) on() bool { return len(a.keys) > 0 || len(a.secret) > 0 }

// authError is a refused credential: a 401.
type authError struct{ msg string }

func (e *authError) Error() string { return e.msg }

// check admits a request carrying a valid API key or a valid HS256 bearer
// token. Keys are compared in constant time against every configured key.
func (a *authConfig) check(r *http.Request, now time.Time) error {
	if !a.on() {
		return nil
	}
	key := r.Header.Get(HeaderAPIKey)
	if key == "" {
		key = r.Header.Get(HeaderOXPAPIKey)
	}
	if key != "" {
		if len(a.keys) == 0 {
			return &authError{"API keys are not accepted here; send Authorization: Bearer <JWT>"}
		}
		sum := sha256.Sum256([]byte(key))
		match := 0
		for _, k := range a.keys {
			match |= subtle.ConstantTimeCompare(sum[:], k[:])
		}
		if match == 1 {
			return nil
		}
		return &authError{"invalid API key"}
	}
	authz := r.Header.Get("Authorization")
	if authz == "" {
		if len(a.secret) == 0 {
			return &authError{"missing credentials: send the " + HeaderAPIKey + " header"}
		}
		return &authError{"missing credentials: send the " + HeaderAPIKey + " header or Authorization: Bearer <JWT>"}
	}
	scheme, token, ok := strings.Cut(authz, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return &authError{"Authorization must be \"Bearer <JWT>\""}
	}
	if len(a.secret) == 0 {
		return &authError{"bearer tokens are not accepted here; send the " + HeaderAPIKey + " header"}
	}
	if err := VerifyHS256(strings.TrimSpace(token), a.secret, a.audience, now, a.maxAhead); err != nil {
		return &authError{"invalid bearer token: " + err.Error()}
	}
	return nil
}

var b64 = base64.RawURLEncoding

// VerifyHS256 checks a compact JWT signed with HMAC-SHA256 under secret:
// alg must be HS256; exp is required, must be after now and at most maxAhead
// (DefaultMaxTokenAhead when 0) after it; nbf, when present, must not be
// after now; aud, when present, must be or contain audience (a token naming
// an audience is refused by a server that has none configured).
func VerifyHS256(token string, secret []byte, audience string, now time.Time, maxAhead time.Duration) error {
	if len(secret) == 0 {
		return errors.New("no secret configured")
	}
	if maxAhead <= 0 {
		maxAhead = DefaultMaxTokenAhead
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return errors.New("not a compact JWT (want header.payload.signature)")
	}
	hdr, err := b64.DecodeString(parts[0])
	if err != nil {
		return fmt.Errorf("header is not base64url: %v", err)
	}
	var h struct {
		Alg  string `json:"alg"`
		Crit []any  `json:"crit"`
	}
	if err := wirejson.Unmarshal(hdr, &h); err != nil {
		return fmt.Errorf("header is not a JSON object: %v", err)
	}
	if h.Alg != "HS256" {
		return fmt.Errorf("alg %q is not accepted (want HS256)", h.Alg)
	}
	if h.Crit != nil {
		return errors.New(`"crit" header parameters are not supported`)
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("signature is not base64url: %v", err)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return errors.New("signature does not verify")
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil {
		return fmt.Errorf("payload is not base64url: %v", err)
	}
	var claims map[string]any
	if err := wirejson.UnmarshalUseNumber(payload, &claims); err != nil || claims == nil {
		return errors.New("payload is not a JSON object with distinct member names")
	}
	exp, ok, err := numericDate(claims, "exp")
	if err != nil {
		return err
	}
	if !ok {
		return errors.New(`"exp" is required`)
	}
	if !now.Before(exp) {
		return errors.New("token has expired")
	}
	if exp.Sub(now) > maxAhead {
		return fmt.Errorf(`"exp" is %s ahead; at most %s is accepted`, exp.Sub(now).Round(time.Second), maxAhead)
	}
	if nbf, ok, err := numericDate(claims, "nbf"); err != nil {
		return err
	} else if ok && now.Before(nbf) {
		return errors.New("token is not valid yet (nbf)")
	}
	if aud, present := claims["aud"]; present {
		var auds []string
		switch v := aud.(type) {
		case string:
			auds = []string{v}
		case []any:
			for _, x := range v {
				s, ok := x.(string)
				if !ok {
					return errors.New(`"aud" must be a string or an array of strings`)
				}
				auds = append(auds, s)
			}
		default:
			return errors.New(`"aud" must be a string or an array of strings`)
		}
		if audience == "" {
			return errors.New(`token names an audience ("aud") but this server has none configured`)
		}
		found := false
		for _, s := range auds {
			found = found || s == audience
		}
		if !found {
			return fmt.Errorf(`"aud" does not include %q`, audience)
		}
	}
	return nil
}

// numericDate reads a NumericDate claim (seconds since the epoch).
func numericDate(claims map[string]any, name string) (time.Time, bool, error) {
	v, ok := claims[name]
	if !ok {
		return time.Time{}, false, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return time.Time{}, false, fmt.Errorf("%q must be a number of seconds", name)
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.Abs(f) > 1e12 {
		return time.Time{}, false, fmt.Errorf("%q is out of range", name)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}

// SignHS256 returns a compact JWT of claims signed with HMAC-SHA256.
func SignHS256(secret []byte, claims map[string]any) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("otc: SignHS256: empty secret")
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("otc: SignHS256: %w", err)
	}
	signing := b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + b64.EncodeToString(payload)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	return signing + "." + b64.EncodeToString(mac.Sum(nil)), nil
}

// HS256TokenSource mints a fresh token for each request: exp is ttl ahead
// (at most DefaultMaxTokenAhead; 0 means 5 minutes), aud is audience when
// not empty. Use it with WithTokenSource.
func HS256TokenSource(secret []byte, audience string, ttl time.Duration) func(ctx context.Context) (string, error) {
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	ttl = min(ttl, DefaultMaxTokenAhead)
	return func(ctx context.Context) (string, error) {
		now := time.Now()
		claims := map[string]any{"iat": now.Unix(), "exp": now.Add(ttl).Unix()}
		if audience != "" {
			claims["aud"] = audience
		}
		return SignHS256(secret, claims)
	}
}
