// Command auth is an MCP server over Streamable HTTP that only answers
// callers with a bearer token: auth.Require verifies the token of every
// request (401 with a WWW-Authenticate challenge without one or with a
// wrong one) and puts the caller on the request's context, where a tool
// reads it. Here the tokens are static, from the environment; an OAuth
// resource server would pass auth.NewJWTVerifier or
// auth.NewIntrospectionVerifier instead.
//
//	EXAMPLE_TOKENS=ci=s3cret go run ./examples/auth -addr 127.0.0.1:8080
//	toolwire call -H 'Authorization: Bearer s3cret' http://127.0.0.1:8080/mcp whoami
package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// staticTokens verifies bearer tokens against a fixed set, each naming
// its caller. Tokens are compared by their SHA-256 in constant time, so
// that a wrong token's timing says nothing about a right one.
type staticTokens map[[sha256.Size]byte]string

// parseTokens reads "name=token,name=token".
func parseTokens(s string) (staticTokens, error) {
	out := staticTokens{}
	for _, pair := range strings.Split(s, ",") {
		name, token, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || name == "" || token == "" {
			return nil, fmt.Errorf("token %q: want name=token", pair)
		}
		out[sha256.Sum256([]byte(token))] = name
	}
	return out, nil
}

// Verify implements auth.TokenVerifier.
func (t staticTokens) Verify(_ context.Context, token string) (*auth.Principal, error) {
	sum := sha256.Sum256([]byte(token))
	for h, name := range t {
		if subtle.ConstantTimeCompare(h[:], sum[:]) == 1 {
			return &auth.Principal{Subject: name, Scopes: []string{"mcp"}}, nil
		}
	}
	return nil, &auth.TokenError{Kind: auth.ErrInvalidToken, Description: "unknown token"}
}

// newHandler is the MCP endpoint behind the token check: one tool,
// whoami, that names the caller.
func newHandler(tokens auth.TokenVerifier) (http.Handler, error) {
	s := server.New(mcp.Implementation{Name: "auth-example", Version: "1.0.0"})
	type none struct{}
	err := server.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Name the caller the token identifies"},
		func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
			return "you are " + req.Principal().Subject, nil
		})
	if err != nil {
		return nil, err
	}
	return auth.Require(tokens)(streamable.NewHandler(s)), nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	tokens, err := parseTokens(os.Getenv("EXAMPLE_TOKENS"))
	if err != nil {
		log.Fatal("EXAMPLE_TOKENS: ", err)
	}
	h, err := newHandler(tokens)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	log.Printf("serving on http://%s/mcp", ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
