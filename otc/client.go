package otc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// DefaultMaxResponseBytes bounds a response the client reads
// (ClientLimits.MaxResponseBytes).
const DefaultMaxResponseBytes = 16 << 20

// DefaultTimeout bounds a request of a client without WithHTTPClient,
// from sending it to reading the whole response.
const DefaultTimeout = 60 * time.Second

// Client calls an OTC 1.0 (or OXP 1.0) server.
type Client struct {
	base    *url.URL
	http    *http.Client
	apiKey  string
	token   func(ctx context.Context) (string, error)
	dialect Dialect
	maxResp int64
}

// ClientOption configures a Client (NewClient). Options apply in order (a
// later one wins), nil options are ignored and defaults fill in the rest,
// as everywhere in the project; an option given a value it cannot use
// makes NewClient fail.
type ClientOption interface{ applyClient(*Client) error }

type clientOption func(*Client) error

func (f clientOption) applyClient(c *Client) error { return f(c) }

// WithHTTPClient sets the HTTP client (default: one with DefaultTimeout).
// Its CheckRedirect still applies, after the client's own redirect rule
// (see NewClient).
func WithHTTPClient(c *http.Client) ClientOption {
	return clientOption(func(cl *Client) error {
		if c == nil {
			return errors.New("otc: HTTP client is nil")
		}
		cl.http = c
		return nil
	})
}

// WithAPIKey sends key in the OTC-API-Key header (OXP-API-Key when the
// client speaks OXP).
func WithAPIKey(key string) ClientOption {
	return clientOption(func(c *Client) error { c.apiKey = key; return nil })
}

// WithBearerToken sends Authorization: Bearer token.
func WithBearerToken(token string) ClientOption {
	return clientOption(func(c *Client) error {
		c.token = func(context.Context) (string, error) { return token, nil }
		return nil
	})
}

// WithTokenSource asks f for a bearer token before each request, for
// short-lived tokens (see HS256TokenSource).
func WithTokenSource(f func(ctx context.Context) (string, error)) ClientOption {
	return clientOption(func(c *Client) error { c.token = f; return nil })
}

// WithClientDialect makes the client speak OXP: urn:oxp:1.0 bodies, the
// OXP-Version and OXP-API-Key headers. Responses in either spelling are read
// whatever the setting.
func WithClientDialect(d Dialect) ClientOption {
	return clientOption(func(c *Client) error { c.dialect = d; return nil })
}

// NewClient returns a client for the OTC server at baseURL (the URL under
// which /tools and /tools/call live).
//
// Redirects are followed only within baseURL's origin (scheme, host and
// port), as the MCP client does: a redirect elsewhere fails the request,
// so that the API key, a bearer token and a call's input reach no other
// server.
func NewClient(baseURL string, opts ...ClientOption) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("otc: server URL %q must be an absolute http or https URL", baseURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	c := &Client{base: u, http: &http.Client{Timeout: DefaultTimeout}, maxResp: DefaultMaxResponseBytes}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.applyClient(c); err != nil {
			return nil, err
		}
	}
	// A copy, so the caller's client stays as it was.
	c.http = httpguard.Outbound{Base: c.http, Redirects: httpguard.SameOriginRedirects, Refuse: refuseRedirect}.Client()
	return c, nil
}

// refuseRedirect is the error of a redirect to another origin, which the
// client does not follow so that its credentials and requests go to no
// other server.
func refuseRedirect(target *url.URL) error {
	loc := target.Redacted()
	if len(loc) > 200 {
		loc = loc[:200] + "..."
	}
	return fmt.Errorf("redirect to %s not followed: the client follows redirects only within the server's origin, so that its credentials and requests go to no other server", loc)
}

// HTTPError is a response other than 200: the status and, when the server
// sent one, its ServerErrorResponse or ValidationErrorResponse (422).
type HTTPError struct {
	Status     int
	Server     *ServerErrorResponse
	Validation *ValidationErrorResponse
	// Body is the raw body when it was neither.
	Body string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("otc: HTTP %d %s", e.Status, http.StatusText(e.Status))
	switch {
	case e.Validation != nil:
		msg += ": " + e.Validation.Message
		for _, k := range sortedKeys(e.Validation.ParameterErrors) {
			msg += fmt.Sprintf("; %s: %s", k, e.Validation.ParameterErrors[k])
		}
	case e.Server != nil:
		msg += ": " + e.Server.Message
		if e.Server.DeveloperMessage != "" {
			msg += " (" + e.Server.DeveloperMessage + ")"
		}
	case e.Body != "":
		msg += ": " + e.Body
	}
	return msg
}

// Health reports whether GET /health answers 200.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodGet, "/health", nil)
	return err
}

// ListTools returns the server's tools, read from "tools" or "items", with
// input schemas unwrapped from "parameters" when wrapped.
func (c *Client) ListTools(ctx context.Context) ([]ToolDefinition, error) {
	body, err := c.do(ctx, http.MethodGet, "/tools", nil)
	if err != nil {
		return nil, err
	}
	var r ListToolsResponse
	if err := wirejson.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("otc: GET /tools: malformed response: %w", err)
	}
	if r.Tools == nil {
		return nil, errors.New(`otc: GET /tools: response has neither "tools" nor "items"`)
	}
	return r.Tools, nil
}

// Call calls toolID with input (nil, raw JSON, or any value that encodes as
// a JSON object). A tool failure is a response with Success false and a nil
// error (see CallToolResponse.Err); a refused call (400, 401, 422, ...) is an
// *HTTPError.
func (c *Client) Call(ctx context.Context, toolID string, input any) (*CallToolResponse, error) {
	var raw json.RawMessage
	switch v := input.(type) {
	case nil:
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("otc: encode input: %w", err)
		}
		raw = b
	}
	return c.CallRequest(ctx, &CallToolRequest{ToolID: toolID, Input: raw})
}

// CallRequest sends a full CallToolRequest.
func (c *Client) CallRequest(ctx context.Context, req *CallToolRequest) (*CallToolResponse, error) {
	if req == nil || req.ToolID == "" {
		return nil, errors.New("otc: CallToolRequest needs a tool_id")
	}
	if len(req.Input) > 0 && !json.Valid(req.Input) {
		return nil, errors.New("otc: input is not valid JSON")
	}
	env, err := json.Marshal(map[string]any{"$schema": c.dialect.SchemaURI(), "request": req})
	if err != nil {
		return nil, fmt.Errorf("otc: encode request: %w", err)
	}
	body, err := c.do(ctx, http.MethodPost, "/tools/call", env)
	if err != nil {
		return nil, err
	}
	// {"result": CallToolResponse}, or a bare CallToolResponse (flattened OXP draft).
	var w struct {
		Result json.RawMessage `json:"result"`
	}
	if err := wirejson.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("otc: POST /tools/call: malformed response: %w", err)
	}
	res := w.Result
	if res == nil {
		res = body
	}
	var resp CallToolResponse
	if err := wirejson.Unmarshal(res, &resp); err != nil {
		return nil, fmt.Errorf("otc: POST /tools/call: malformed response: %w", err)
	}
	return &resp, nil
}

func (c *Client) do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	u := *c.base
	u.Path += path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("otc: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.dialect == OXP {
		req.Header.Set(HeaderOXPVersion, "1.0")
	}
	if c.apiKey != "" {
		h := HeaderAPIKey
		if c.dialect == OXP {
			h = HeaderOXPAPIKey
		}
		req.Header.Set(h, c.apiKey)
	}
	if c.token != nil && path != "/health" {
		tok, err := c.token(ctx)
		if err != nil {
			return nil, fmt.Errorf("otc: bearer token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("otc: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := httpguard.ReadLimited(resp.Body, c.maxResp)
	var tl *httpguard.TooLongError
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("otc: %s %s: response exceeds the limit of %d bytes", method, path, c.maxResp)
	}
	if err != nil {
		return nil, fmt.Errorf("otc: %s %s: reading the response: %w", method, path, err)
	}
	if resp.StatusCode == http.StatusOK {
		return data, nil
	}
	he := &HTTPError{Status: resp.StatusCode}
	if resp.StatusCode == http.StatusUnprocessableEntity {
		var v ValidationErrorResponse
		if wirejson.Unmarshal(data, &v) == nil && v.Message != "" {
			he.Validation = &v
			return nil, he
		}
	}
	var s ServerErrorResponse
	if wirejson.Unmarshal(data, &s) == nil && s.Message != "" {
		he.Server = &s
	} else {
		he.Body = strings.TrimSpace(string(data))
		if len(he.Body) > 512 {
			he.Body = he.Body[:512] + "..."
		}
	}
	return nil, he
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
