package streamable

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
)

func TestServeWrapsTheEndpointAndServesRoutes(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	mw := func(name string) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				order = append(order, name)
				if r.Header.Get("X-Refuse") != "" {
					http.Error(w, "refused by "+name, http.StatusUnauthorized)
					return
				}
				next.ServeHTTP(w, r)
			})
		}
	}
	meta := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "metadata") })
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, ln, NewHandler(f.srv), WithOnListen(func(u string) { urls <- u }),
			WithHTTPMiddleware(mw("outer")), WithHTTPMiddleware(mw("inner")),
			WithRoute("GET /.well-known/oauth-protected-resource/mcp", meta))
	}()
	url := testwait.Recv(t, urls, "listening")

	req := modernRequest(t, url, 1, "tools/list", nil)
	req.Header.Set("X-Refuse", "1")
	if body := readAll(t, do(t, req)); !strings.Contains(body, "refused by outer") {
		t.Errorf("the outermost middleware did not answer first: %q", body)
	}
	if body := readAll(t, do(t, modernRequest(t, url, 2, "tools/list", nil))); !strings.Contains(body, `"tools"`) {
		t.Errorf("through the middleware: %q", body)
	}
	if strings.Join(order, ",") != "outer,outer,inner" {
		t.Errorf("middleware order %v", order)
	}
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); body != "metadata" {
		t.Errorf("route: %q", body)
	}
	cancel()
	if err := testwait.Recv(t, served, "Serve to return"); err != nil {
		t.Fatal(err)
	}
}

func TestServeRefusesAConflictingRoute(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nop := http.NotFoundHandler()
	err = Serve(context.Background(), ln, NewHandler(f.srv), WithRoute("/a", nop), WithRoute("/a", nop))
	if err == nil || !strings.Contains(err.Error(), `route "/a"`) {
		t.Fatalf("a conflicting route: %v", err)
	}
}
