package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/transport/streamable"
)

// apiKeys makes a fresh API key for each name, returned in the same order,
// and the config's auth section admitting them by their hashes under
// auth.api_keys; more of auth (oauth) may follow it.
func apiKeys(t *testing.T, names ...string) ([]string, string) {
	t.Helper()
	keys := make([]string, len(names))
	section := "auth:\n  api_keys:\n"
	for i, name := range names {
		k, err := policy.NewKey()
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
		section += fmt.Sprintf("    %s: %q\n", name, policy.HashKey(k))
	}
	return keys, section
}

// stdioUpstream is the config lines of an upstream called name that is a
// `toolwire serve --stdio` child (bin) without a data directory.
func stdioUpstream(bin, name string) string {
	return fmt.Sprintf("  %s:\n    command: [%q, serve, --stdio, --data-dir, \"\"]\n", name, bin)
}

// stdioUpstreams is the config's upstreams section with one stdio
// upstream (stdioUpstream) under each name.
func stdioUpstreams(bin string, names ...string) string {
	s := "upstreams:\n"
	for _, name := range names {
		s += stdioUpstream(bin, name)
	}
	return s
}

// serveMCP serves h over HTTP on a loopback listener, each request going
// through wrap first when wrap is not nil (wrap calls next to serve it),
// and returns the MCP endpoint's URL. At cleanup it shuts h down, ending
// its sessions, then closes the listener.
func serveMCP(t *testing.T, h *streamable.Handler, wrap func(w http.ResponseWriter, r *http.Request, next http.Handler)) string {
	t.Helper()
	var handler http.Handler = h
	if wrap != nil {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wrap(w, r, h) })
	}
	hs := httptest.NewServer(handler)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), durableDeadline)
		defer cancel()
		_ = h.Shutdown(ctx)
		hs.Close()
	})
	return hs.URL + "/mcp"
}

// connectKeyed connects to url with key as a bearer token ("" for no
// Authorization header) and opts.
func connectKeyed(t *testing.T, url, key string, opts ...client.Option) *client.Client {
	t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	c, err := client.Connect(testwait.Context(t), &client.HTTP{URL: url, Header: h}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connectAs connects to the gateway in era with the Authorization header
// bearer ("" for none).
func connectAs(t *testing.T, url, bearer string, era mcp.Era) *client.Client {
	t.Helper()
	return connectKeyed(t, url, bearer, client.WithEra(era))
}

// inspectingProxy serves, on a loopback listener until the test ends, a
// reverse proxy to target's host and returns its URL for target's path.
// Each request's body is read whole first and handed to serve with the
// request (its body readable again) and the proxy, which serve calls to
// pass the request on.
func inspectingProxy(t *testing.T, target string, serve func(w http.ResponseWriter, r *http.Request, body []byte, proxy http.Handler)) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		serve(w, r, body, proxy)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + u.Path
}

// toolNames lists the tools at url in era, in a session of its own.
func toolNames(t *testing.T, url string, era mcp.Era) []string {
	t.Helper()
	c := connectServe(t, url, era)
	defer c.Close()
	return testmcp.ToolNames(t, c)
}

// otcTools lists, by name to id, the tools the gateway's OTC listener at
// addr offers the caller holding key ("" for none).
func otcTools(t *testing.T, ctx context.Context, addr, key string) (*otc.Client, map[string]string) {
	t.Helper()
	var opts []otc.ClientOption
	if key != "" {
		opts = append(opts, otc.WithBearerToken(key))
	}
	c, err := otc.NewClient("http://"+addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, tl := range tools {
		ids[tl.Name] = tl.ID
	}
	return c, ids
}

// otcName is the name in tools ending in suffix (an OTC name carries the
// serving program's prefix), failing the test when there is none.
func otcName(t *testing.T, tools map[string]string, suffix string) string {
	t.Helper()
	for name := range tools {
		if strings.HasSuffix(name, suffix) {
			return name
		}
	}
	t.Fatalf("no OTC tool ending in %s: %v", suffix, tools)
	return ""
}
