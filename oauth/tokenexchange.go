package oauth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// ExchangedToken is an RFC 8693 token exchange response (section 2.2.1).
// Its String, GoString and LogValue leave the tokens out.
type ExchangedToken struct {
	AccessToken     string // the issued token (an ID-JAG, say), whatever its type
	IssuedTokenType string // required: what AccessToken is
	TokenType       string // "N_A" when the issued token is not an access token
	ExpiresIn       int64  // seconds; 0 when the server did not say
	Scope           string
	RefreshToken    string
}

// String describes the token without its secrets.
func (t *ExchangedToken) String() string {
	if t == nil {
		return "<nil token>"
	}
	return fmt.Sprintf("oauth.ExchangedToken{issued %s, type %s, token [redacted], expires in %ds, scope %q, refresh %s}",
		t.IssuedTokenType, t.TokenType, t.ExpiresIn, t.Scope, present(t.RefreshToken))
}

// GoString is String (%#v).
func (t *ExchangedToken) GoString() string { return t.String() }

// wireExchange is the JSON of an exchange response, decoded by the strict
// reader: names match exactly (no case folding, a case variant of a member
// refused), a duplicate name or a member of the wrong type is an error,
// other unknown members are ignored (RFC 6749 section 5.1).
type wireExchange struct {
	AccessToken     *string `json:"access_token"`
	IssuedTokenType *string `json:"issued_token_type"`
	TokenType       *string `json:"token_type"`
	ExpiresIn       *int64  `json:"expires_in"`
	Scope           *string `json:"scope"`
	RefreshToken    *string `json:"refresh_token"`
}

// DecodeExchangeResponse decodes a successful token exchange response
// strictly: a JSON object whose access_token, issued_token_type and
// token_type are non-empty strings (the token visible ASCII, so that it
// can travel in a header or a form), expires_in a non-negative integer and
// scope and refresh_token strings when present. Its errors never quote the
// input.
func DecodeExchangeResponse(data []byte) (*ExchangedToken, error) {
	var w wireExchange
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return nil, errors.New("the token exchange response is not a JSON object of the expected members")
	}
	switch {
	case w.AccessToken == nil || *w.AccessToken == "":
		return nil, errors.New("the token exchange response has no access_token")
	case !exchangeVisible(*w.AccessToken):
		return nil, errors.New("the token exchange response's access_token is not visible ASCII")
	case w.IssuedTokenType == nil || *w.IssuedTokenType == "":
		return nil, errors.New("the token exchange response has no issued_token_type")
	case w.TokenType == nil || *w.TokenType == "":
		return nil, errors.New("the token exchange response has no token_type")
	case w.ExpiresIn != nil && *w.ExpiresIn < 0:
		return nil, errors.New("the token exchange response has a negative expires_in")
	}
	t := &ExchangedToken{AccessToken: *w.AccessToken, IssuedTokenType: *w.IssuedTokenType, TokenType: *w.TokenType}
	if w.ExpiresIn != nil {
		t.ExpiresIn = *w.ExpiresIn
	}
	if w.Scope != nil {
		t.Scope = *w.Scope
	}
	if w.RefreshToken != nil {
		t.RefreshToken = *w.RefreshToken
	}
	return t, nil
}

func exchangeVisible(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// TokenExchange is an RFC 8693 token exchange request (section 2.1) at an
// identity provider's or authorization server's token endpoint.
type TokenExchange struct {
	Endpoint string
	// Client authenticates the client: AuthMethod "none" (or "") sends
	// client_id in the form when set, "client_secret_basic" and
	// "client_secret_post" the secret too.
	Client             ClientInfo
	SubjectToken       string
	SubjectTokenType   string
	RequestedTokenType string // "" omits it
	Audience           string // "" omits it
	Resource           string // "" omits it
	Scope              string // space-separated; "" omits it
	// MaxResponseBytes bounds the answer read; 0 means
	// DefaultMaxResponseBytes (IDJAGGrant passes the TokenEndpoint's).
	MaxResponseBytes int
}

// Exchange posts the exchange with hc (nil: a client with a 30 s timeout,
// which also bounds an hc without one), without
// following redirects, reads at most MaxResponseBytes of the answer and
// decodes it strictly. A refusal is an *Error (Op "token exchange") whose
// text has the status, the error code and the description with the
// subject token and the client secret masked.
func (x *TokenExchange) Exchange(ctx context.Context, hc *http.Client) (*ExchangedToken, error) {
	u, err := url.Parse(x.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, &Error{Op: "token exchange", Description: "the token endpoint is not an http(s) URL"}
	}
	if x.SubjectToken == "" || x.SubjectTokenType == "" {
		return nil, &Error{Op: "token exchange", Description: "no subject token"}
	}
	secrets := []string{x.SubjectToken, x.Client.Secret}
	form := url.Values{
		"grant_type":         {GrantTypeTokenExchange},
		"subject_token":      {x.SubjectToken},
		"subject_token_type": {x.SubjectTokenType},
	}
	for k, v := range map[string]string{"requested_token_type": x.RequestedTokenType, "audience": x.Audience, "resource": x.Resource, "scope": x.Scope} {
		if v != "" {
			form.Set(k, v)
		}
	}
	hdr := http.Header{}
	switch x.Client.AuthMethod {
	case "", "none":
		if x.Client.ID != "" {
			form.Set("client_id", x.Client.ID)
		}
	case "client_secret_post":
		form.Set("client_id", x.Client.ID)
		form.Set("client_secret", x.Client.Secret)
	case "client_secret_basic":
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(x.Client.ID)+":"+url.QueryEscape(x.Client.Secret))))
	default:
		return nil, &Error{Op: "token exchange", Description: fmt.Sprintf("client authentication %q is not supported for a token exchange", truncate(x.Client.AuthMethod, 40))}
	}
	req, err := formRequest(ctx, u.String(), form, hdr)
	if err != nil {
		return nil, &Error{Op: "token exchange", Description: "bad token endpoint URL"}
	}
	resp, err := httpguard.Outbound{Base: hc, Timeout: defaultTimeout}.Client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauth: token exchange at %s: %s", truncate(u.Scheme+"://"+u.Host+u.EscapedPath(), 200), redact(ctxErr(ctx, err).Error(), secrets...))
	}
	defer resp.Body.Close()
	body, err := readResponse(resp.Body, responseLimit(x.MaxResponseBytes))
	if err != nil {
		return nil, &Error{Op: "token exchange", StatusCode: resp.StatusCode, Description: err.Error()}
	}
	if resp.StatusCode != http.StatusOK {
		er := decodeErrorResponse(body)
		return nil, &Error{Op: "token exchange", StatusCode: resp.StatusCode, Code: exchangeText(er.Error, 100, nil),
			Description: exchangeText(er.ErrorDescription, 300, secrets)}
	}
	t, err := DecodeExchangeResponse(body)
	if err != nil {
		return nil, &Error{Op: "token exchange", StatusCode: resp.StatusCode, Description: err.Error()}
	}
	return t, nil
}

// exchangeText makes server text fit an error message: the secrets masked,
// characters that are not printable replaced, at most n runes.
func exchangeText(s string, n int, secrets []string) string {
	s = redact(s, secrets...)
	var b strings.Builder
	for i, r := range []rune(s) {
		if i == n {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}
