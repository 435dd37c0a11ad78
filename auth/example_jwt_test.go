package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// An MCP server as an OAuth 2.1 resource server: Require checks the bearer
// token with a JWTVerifier (keys from the issuer's RFC 8414 metadata), answers
// 401 with a challenge pointing at the Protected Resource Metadata, and
// hands the caller to the tools.
func ExampleRequire() {
	// An authorization server on loopback: metadata and a JWKS.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as := http.NewServeMux()
	issuer := httptest.NewServer(as)
	defer issuer.Close()
	as.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuer.URL, "jwks_uri": issuer.URL + "/jwks"})
	})
	as.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		pub := jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}})
	})

	// The MCP server.
	srv := server.New(mcp.Implementation{Name: "whoami", Version: "1.0.0"})
	type none struct{}
	_ = server.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		return "hello " + req.Principal().Subject, nil
	})
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	resource := ts.URL + "/mcp" // the canonical URL: the tokens' audience
	prm, _ := auth.MetadataURL(resource)
	verifier, err := auth.NewJWTVerifier(issuer.URL, resource)
	if err != nil {
		fmt.Println(err)
		return
	}
	h := streamable.NewHandler(srv)
	defer h.Close()
	mux.Handle("/mcp", auth.Require(verifier, auth.WithResourceMetadata(prm), auth.WithScopes("mcp"))(h))
	mux.Handle(auth.MetadataPath("/mcp"), auth.MetadataHandler(auth.ResourceMetadata{
		Resource: resource, AuthorizationServers: []string{issuer.URL}, ScopesSupported: []string{"mcp"}}))

	call := func(token string) {
		resp, text, err := callWhoami(resource, token)
		if err != nil {
			fmt.Println(err)
			return
		}
		if resp.StatusCode != http.StatusOK {
			fmt.Println(resp.StatusCode, strings.ReplaceAll(resp.Header.Get("WWW-Authenticate"), ts.URL, "https://mcp.example.com"))
			return
		}
		fmt.Println(resp.StatusCode, text)
	}

	call("") // no token
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	now := time.Now()
	token, _ := jwt.Signed(signer).Claims(map[string]any{"iss": issuer.URL, "sub": "ada", "aud": resource,
		"scope": "mcp", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}).Serialize()
	call(token)
	// Output:
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp"
	// 200 hello ada
}
