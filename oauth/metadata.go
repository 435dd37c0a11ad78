package oauth

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// DecodeProtectedResourceMetadata decodes and checks a Protected Resource
// Metadata document: a JSON object of at most DefaultMaxResponseBytes
// with a resource. Unknown members are ignored; members of the wrong type
// are errors.
func DecodeProtectedResourceMetadata(data []byte) (*auth.ResourceMetadata, error) {
	return decodeProtectedResourceMetadata(data, DefaultMaxResponseBytes)
}

func decodeProtectedResourceMetadata(data []byte, max int64) (*auth.ResourceMetadata, error) {
	var m auth.ResourceMetadata
	if err := decodeObject(data, &m, max); err != nil {
		return nil, fmt.Errorf("protected resource metadata: %w", err)
	}
	if m.Resource == "" {
		return nil, errors.New("protected resource metadata: no resource")
	}
	for _, s := range m.AuthorizationServers {
		if s == "" {
			return nil, errors.New("protected resource metadata: an empty authorization server")
		}
	}
	return &m, nil
}

// DecodeAuthServerMetadata decodes and checks authorization server
// metadata: a JSON object of at most DefaultMaxResponseBytes with an
// issuer and a token endpoint.
func DecodeAuthServerMetadata(data []byte) (*auth.AuthServerMetadata, error) {
	return decodeAuthServerMetadata(data, DefaultMaxResponseBytes)
}

func decodeAuthServerMetadata(data []byte, max int64) (*auth.AuthServerMetadata, error) {
	var m auth.AuthServerMetadata
	if err := decodeObject(data, &m, max); err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if m.Issuer == "" {
		return nil, errors.New("authorization server metadata: no issuer")
	}
	if m.TokenEndpoint == "" {
		return nil, errors.New("authorization server metadata: no token_endpoint")
	}
	return &m, nil
}

// decodeObject decodes one JSON object of at most max bytes, as the wire
// is read: exact member names, none twice at any depth, valid UTF-8 and
// nothing after the object.
func decodeObject(data []byte, v any, max int64) error {
	if int64(len(data)) > max {
		return fmt.Errorf("the document exceeds %d bytes", max)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return errors.New("not a JSON object")
	}
	return wirejson.Unmarshal(data, v)
}

// supports says whether list holds v; an absent list supports nothing.
func supports(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// CanonicalResource is the canonical form of an MCP endpoint URI (the
// spec's "canonical server URI"): scheme and host in lower case, no
// fragment, no default port. Path and query are kept as given, and a
// path-less URI stays path-less (no "/" appended).
func CanonicalResource(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URI", truncate(raw, 200))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		u.Host = strings.TrimSuffix(u.Host, ":"+p)
	}
	u.Fragment, u.RawFragment = "", ""
	u.User = nil
	return u.String(), nil
}

// resourceCovers says whether a resource identifier (from Protected
// Resource Metadata, or a token's binding) covers the request URL target:
// same scheme, host and port, and a path that is the resource's path or
// lies under it at a segment boundary. A resource of an origin covers the
// whole origin.
func resourceCovers(resource string, target *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Host == "" || target == nil {
		return false
	}
	if !httpguard.SameOrigin(r, target) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	tp := target.EscapedPath()
	return rp == "" || tp == rp || strings.HasPrefix(tp, rp+"/") || strings.TrimSuffix(tp, "/") == rp
}
