package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
)

// The example refuses a caller without a token or with a wrong one (401)
// and tells the one with a right token who it is.
func TestAuthExampleChecksTokens(t *testing.T) {
	tokens, err := parseTokens("ci=s3cret, ada=other")
	if err != nil {
		t.Fatal(err)
	}
	h, err := newHandler(tokens)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	ctx := testwait.Context(t)

	for _, token := range []string{"", "wrong"} {
		hdr := http.Header{}
		if token != "" {
			hdr.Set("Authorization", "Bearer "+token)
		}
		_, err := client.Connect(ctx, &client.HTTP{URL: hs.URL, Header: hdr})
		var te *client.TransportError
		if !errors.As(err, &te) || te.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(te.WWWAuthenticate, "Bearer") {
			t.Errorf("token %q: %v", token, err)
		}
	}

	hdr := http.Header{"Authorization": {"Bearer s3cret"}}
	c, err := client.Connect(ctx, &client.HTTP{URL: hs.URL, Header: hdr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "whoami", nil)
	if err != nil || len(res.Content) != 1 || !strings.Contains(textOf(res.Content[0]), "you are ci") {
		t.Errorf("whoami: %+v %v", res, err)
	}
	if _, err := parseTokens("nobody"); err == nil {
		t.Error("a token without a name was accepted")
	}
}

// textOf is the text of a text block, "" for another.
func textOf(c mcp.Content) string {
	if t, ok := c.(*mcp.TextContent); ok {
		return t.Text
	}
	return ""
}
