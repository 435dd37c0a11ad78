package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
)

// httpServe runs `toolwire serve` on a free loopback port and returns its
// endpoint URL and a function that stops it with SIGINT and returns how it
// exited.
func httpServe(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	bin := testenv.Toolwire(t)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "info"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	var log strings.Builder
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		re := regexp.MustCompile(`url=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second): // a failure bound, not a speed check
		_ = cmd.Process.Kill()
		t.Fatalf("toolwire serve printed no URL")
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		<-logDone
		if err != nil {
			t.Logf("toolwire serve log:\n%s", log.String())
		}
		return err
	}
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return url, stop
}

// TestTypeScriptSDKOverHTTP has the official TypeScript SDK client
// (StreamableHTTPClientTransport) list and call the reference tools through
// `toolwire serve`, then end its session; the server then stops gracefully.
func TestTypeScriptSDKOverHTTP(t *testing.T) {
	node := testenv.Node22(t)
	nm := testenv.NodeModules(t)
	url, stop := httpServe(t, "--page-size", "5")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("endpoint %q", url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script := filepath.Join(testenv.Root(t), "cmd", "toolwire", "testdata", "http-client.mjs")
	cmd := exec.CommandContext(ctx, node, script, nm, url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client failed: %v\nstderr: %s", err, stderr.String())
	}
	type block struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MIMEType string `json:"mimeType"`
		URI      string `json:"uri"`
	}
	type result struct {
		Content           []block         `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		Thrown            string          `json:"thrown"`
		Code              int             `json:"code"`
	}
	var got struct {
		ServerVersion       struct{ Name, Version string } `json:"serverVersion"`
		ProtocolVersion     string                         `json:"protocolVersion"`
		SessionID           string                         `json:"sessionId"`
		TerminatedSessionID *string                        `json:"terminatedSessionId"`
		Pages               int                            `json:"pages"`
		Tools               []string                       `json:"tools"`
		Calls               map[string]result              `json:"calls"`
		Progress            []struct {
			Progress, Total float64
		} `json:"progress"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.ServerVersion.Name != "toolwire-reference" || got.ProtocolVersion != "2025-11-25" {
		t.Errorf("server %+v speaking %q", got.ServerVersion, got.ProtocolVersion)
	}
	if !regexp.MustCompile(`^[\x21-\x7E]{20,}$`).MatchString(got.SessionID) || got.TerminatedSessionID != nil {
		t.Errorf("session id %q, after DELETE %v", got.SessionID, got.TerminatedSessionID)
	}
	wantTools := "echo,gallery,get-annotated-message,get-resource-links,get-resource-reference,get-structured-content," +
		"get-sum,get-tiny-image,get-version,safe_divide,trigger-long-running-operation,weather"
	if strings.Join(got.Tools, ",") != wantTools || got.Pages != 3 {
		t.Errorf("tools %v in %d pages; want %s in 3", got.Tools, got.Pages, wantTools)
	}
	c := got.Calls
	first := func(name string) string {
		if len(c[name].Content) == 0 {
			return fmt.Sprintf("<no content: %+v>", c[name])
		}
		return c[name].Content[0].Text
	}
	if first("echo") != "Echo: hello over http" {
		t.Errorf("echo: %q", first("echo"))
	}
	if first("sum") != "The sum of 7 and 5 is 12." {
		t.Errorf("get-sum: %q", first("sum"))
	}
	if first("version") != "toolwire reference server 0.1.0" {
		t.Errorf("get-version: %q", first("version"))
	}
	if !sameJSON(t, string(c["structured"].StructuredContent), `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`) {
		t.Errorf("get-structured-content: %s (%s)", c["structured"].StructuredContent, c["structured"].Thrown)
	}
	if !sameJSON(t, string(c["weather"].StructuredContent), `{"conditions":"partly cloudy","temp_c":22.5}`) {
		t.Errorf("weather: %+v", c["weather"])
	}
	if img := c["image"].Content; len(img) != 3 || img[1].Type != "image" || img[1].MIMEType != "image/png" || img[1].Data == "" {
		t.Errorf("get-tiny-image: %+v", img)
	}
	if g := c["gallery"].Content; len(g) != 5 || g[0].Type != "text" || g[3].URI != "file:///project/main.go" || g[4].Type != "resource" {
		t.Errorf("gallery: %+v", g)
	}
	if !c["divideByZero"].IsError || first("divideByZero") != "cannot divide by zero; pass a non-zero b" {
		t.Errorf("safe_divide: %+v", c["divideByZero"])
	}
	if !c["badArgs"].IsError || !strings.Contains(first("badArgs"), "/a: expected number") {
		t.Errorf("bad arguments: %+v", c["badArgs"])
	}
	if c["unknown"].Code != -32602 || !strings.Contains(c["unknown"].Thrown, "no-such-tool") {
		t.Errorf("unknown tool: %+v", c["unknown"])
	}
	// As over stdio, the SDK may drop the last notification read together
	// with the response; the first three must arrive, in order.
	if !strings.HasPrefix(first("longRunning"), "Long running operation completed") || len(got.Progress) < 3 || len(got.Progress) > 4 {
		t.Errorf("long-running: %q, progress %+v", first("longRunning"), got.Progress)
	}
	for i, p := range got.Progress {
		if p.Progress != float64(i+1) || p.Total != 4 {
			t.Errorf("progress %d: %+v", i, p)
		}
	}

	// The session the client ended is gone.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", got.SessionID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("request on the ended session: status %d, want 404", resp.StatusCode)
	}

	if err := stop(); err != nil {
		t.Errorf("toolwire serve did not exit cleanly on SIGINT: %v", err)
	}
}

// TestServeHTTPRejectsRebinding: the default server refuses a foreign Host.
func TestServeHTTPRejectsRebinding(t *testing.T) {
	url, stop := httpServe(t)
	defer stop()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for host, want := range map[string]int{"evil.example.com": http.StatusForbidden, "": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: status %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func TestDefaultAllowedHosts(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	cases := map[string]string{
		"127.0.0.1:8080":  "localhost,127.0.0.1,::1",
		"localhost:8080":  "localhost,127.0.0.1,::1",
		"[::1]:8080":      "localhost,127.0.0.1,::1",
		"10.0.0.5:8080":   "localhost,127.0.0.1,::1,10.0.0.5",
		"0.0.0.0:8080":    "localhost,127.0.0.1,::1",
		":8080":           "localhost,127.0.0.1,::1",
		"mcp.example:443": "localhost,127.0.0.1,::1,mcp.example",
	}
	for addr, want := range cases {
		if got := strings.Join(defaultAllowedHosts(addr, logger), ","); got != want {
			t.Errorf("%s: %s, want %s", addr, got, want)
		}
	}
}

// TestServeHTTPFlagErrors: a non-positive limit is a usage error (exit 2).
func TestServeHTTPFlagErrors(t *testing.T) {
	bin := testenv.Toolwire(t)
	for _, flag := range []string{"--max-body-size=0", "--max-sessions=-1", "--max-in-flight=0", "--session-ttl=0s"} {
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", flag)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "must be positive") {
			t.Errorf("%s: %v: %s", flag, err, out)
		}
	}
}
