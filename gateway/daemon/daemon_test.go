package daemon_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// greeterFile is a config serving one in-process upstream, greeter, with
// every listener on a free loopback port and no state.
func greeterFile(t *testing.T) *config.File {
	t.Helper()
	up := server.New(mcp.Implementation{Name: "greeter", Version: "1.0.0"})
	err := server.AddTool(up, &mcp.Tool{Name: "greet"},
		func(ctx context.Context, req *server.CallRequest, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return &config.File{
		Listen: "127.0.0.1:0", AdminListen: "127.0.0.1:0", OTCListen: "127.0.0.1:0",
		Gateway: gateway.Config{
			Upstreams: []gateway.Upstream{{Name: "greeter", Server: up}},
			Naming:    gateway.Naming{Separator: config.DefaultSeparator},
		},
	}
}

// runDaemon runs file's gateway with daemon.Run until stop, and returns
// the addresses it reported once serving; stop cancels Run's context and
// returns what Run returned. The test ends it if it has not stopped it.
func runDaemon(t *testing.T, file *config.File) (daemon.Addrs, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	ready := make(chan daemon.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, file, daemon.WithLogger(slog.New(slog.DiscardHandler)),
			daemon.WithOnReady(func(a daemon.Addrs) { ready <- a }))
	}()
	addrs := testwait.Recv(t, ready, "the daemon's listeners")
	return addrs, func() error {
		cancel()
		return testwait.Recv(t, done, "Run's return")
	}
}

// Run reports every listener once it serves, the admin and OTC listeners
// answer there, and a cancelled context shuts all of them down before Run
// returns nil.
func TestRunServesEveryListener(t *testing.T) {
	addrs, stop := runDaemon(t, greeterFile(t))
	if !strings.HasPrefix(addrs.MCP, "http://127.0.0.1:") || !strings.HasSuffix(addrs.MCP, "/mcp") ||
		!strings.HasPrefix(addrs.Admin, "http://127.0.0.1:") || !strings.HasPrefix(addrs.OTC, "http://127.0.0.1:") {
		t.Fatalf("addresses %+v", addrs)
	}
	if code, body := testhttp.Get(t, addrs.Admin+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := testhttp.Get(t, addrs.Admin+"/readyz"); code != http.StatusOK || !strings.Contains(body, `"name":"greeter","state":"ready"`) {
		t.Errorf("/readyz: %d %s", code, body)
	}
	if code, body := testhttp.Get(t, addrs.OTC+"/tools"); code != http.StatusOK || !strings.Contains(body, "greeter__greet") {
		t.Errorf("OTC /tools: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, url := range []string{addrs.Admin + "/healthz", addrs.OTC + "/tools"} {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			t.Errorf("%s still answers after Run returned", url)
		}
	}
}

// A file's config is the input; Run leaves it as it was (a reload or the
// shared rate limiter works on a copy).
func TestRunLeavesTheFileAlone(t *testing.T) {
	file := greeterFile(t)
	file.AdminListen, file.OTCListen = "", ""
	before := *file
	a, stop := runDaemon(t, file)
	if a.Admin != "" || a.OTC != "" {
		t.Errorf("listeners that are off reported: %+v", a)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if file.Listen != before.Listen || file.Gateway.Limits != before.Gateway.Limits {
		t.Errorf("Run changed its config: %+v", file)
	}
}

// Reloading needs the file to read: Run refuses a Reload without a path,
// and a listen address taken is an error, both before serving.
func TestRunRefusesToStart(t *testing.T) {
	quiet := daemon.WithLogger(slog.New(slog.DiscardHandler))
	file := greeterFile(t)
	if err := daemon.Run(t.Context(), file, quiet, daemon.WithReload(daemon.Reload{})); err == nil || !strings.Contains(err.Error(), "Path") {
		t.Errorf("a Reload without a path: %v", err)
	}
	file.Listen = "127.0.0.1:-1"
	if err := daemon.Run(t.Context(), file, quiet); err == nil {
		t.Error("an invalid listen address: no error")
	}
}

// Build makes the gateway a dry run asks (its upstreams connected once)
// and refuses an authentication config the endpoint could not use.
func TestBuild(t *testing.T) {
	quiet := daemon.WithLogger(slog.New(slog.DiscardHandler))
	g, err := daemon.Build(t.Context(), greeterFile(t), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	if ts := g.Tools(); len(ts) != 1 || ts[0].Name != "greeter__greet" {
		t.Errorf("tools %+v", ts)
	}
	bad := greeterFile(t)
	bad.Auth.OAuth = &config.OAuth{Issuer: "https://issuer.example", Audience: "not a URL"}
	if g, err := daemon.Build(t.Context(), bad, quiet); err == nil || !strings.Contains(err.Error(), "auth.oauth") {
		if g != nil {
			g.Close(context.Background())
		}
		t.Errorf("an OAuth audience that is not a URL: %v", err)
	}
}

// The daemon is a library: flags and the command line stay in
// cmd/toolwire, so it links no command-line parser.
func TestLinksNoCommandLineParser(t *testing.T) {
	testenv.LinksNone(t, "github.com/spf13")
}

// The MCP endpoint answers a Host header only when it is a loopback name,
// one of allowed_hosts or public_url's host: the names callers use to reach
// a gateway behind a Service or a load balancer, and nothing else (DNS
// rebinding).
func TestAllowedHostsReachTheEndpoint(t *testing.T) {
	for _, c := range []struct {
		name      string
		allowed   []string
		publicURL string
		host      string
		want      int
	}{
		{"loopback by default", nil, "", "localhost", http.StatusOK},
		{"another name refused by default", nil, "", "gw.example.com", http.StatusForbidden},
		{"an allowed name", []string{"gw.example.com"}, "", "gw.example.com", http.StatusOK},
		{"an allowed name on any port", []string{"gw.example.com"}, "", "gw.example.com:8443", http.StatusOK},
		{"a name not in the list", []string{"gw.example.com"}, "", "evil.example", http.StatusForbidden},
		{"public_url's host", nil, "https://mcp.example.org/mcp", "mcp.example.org", http.StatusOK},
		{"any with *", []string{"*"}, "", "whatever.example", http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := greeterFile(t)
			file.AllowedHosts = c.allowed
			file.PublicURL = c.publicURL
			addrs, stop := runDaemon(t, file)
			defer stop()
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, addrs.MCP, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = c.host
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("Host %q: %d %s, want %d", c.host, resp.StatusCode, got, c.want)
			}
		})
	}
}
