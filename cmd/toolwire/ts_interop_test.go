package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
)

// tsRun is what conformance/npm/interop/ts-client.mjs reports: the official
// TypeScript SDK client's view of the reference tools.
type tsRun struct {
	ServerVersion       struct{ Name, Version string } `json:"serverVersion"`
	ProtocolVersion     string                         `json:"protocolVersion"`
	SessionID           string                         `json:"sessionId"`
	TerminatedSessionID *string                        `json:"terminatedSessionId"`
	Pages               int                            `json:"pages"`
	Tools               []string                       `json:"tools"`
	Calls               map[string]tsResult            `json:"calls"`
	RootsAsked          int                            `json:"rootsAsked"`
	Progress            []struct {
		Progress, Total float64
	} `json:"progress"`
}

type tsResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MIMEType string `json:"mimeType"`
		URI      string `json:"uri"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Thrown            string          `json:"thrown"`
	Code              int             `json:"code"`
}

// runTSClient runs the TypeScript client script with Node 22.
func runTSClient(t *testing.T, args ...string) tsRun {
	t.Helper()
	script := filepath.Join(testenv.Root(t), "conformance", "npm", "interop", "ts-client.mjs")
	return runNodeJSON[tsRun](t, testwait.Limit, nil, script, args...)
}

// checkTSRun checks every call the script made against the reference tools.
func checkTSRun(t *testing.T, got tsRun, mode string) {
	t.Helper()
	wantTools := "echo,gallery,get-annotated-message,get-env,get-resource-links,get-resource-reference,get-roots-list,get-structured-content," +
		"get-sum,get-tiny-image,get-version,gzip-file-as-resource,safe_divide,simulate-research-query,toggle-simulated-logging," +
		"toggle-subscriber-updates,trigger-long-running-operation,weather"
	if got.ServerVersion.Name != "toolwire-reference" || strings.Join(got.Tools, ",") != wantTools || got.Pages != 4 {
		t.Errorf("server %+v listed %v in %d pages; want %s in 4", got.ServerVersion, got.Tools, got.Pages, wantTools)
	}
	c := got.Calls
	first := func(name string) string {
		if len(c[name].Content) == 0 {
			return fmt.Sprintf("<no content: %+v>", c[name])
		}
		return c[name].Content[0].Text
	}
	for name, want := range map[string]string{
		"echo": "Echo: hello over " + mode, "sum": "The sum of 7 and 5 is 12.", "version": "toolwire reference server " + binaryVersion(t),
	} {
		if first(name) != want {
			t.Errorf("%s: %q, want %q", name, first(name), want)
		}
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
	// Server-to-client requests in the middle of a call: the server pinged
	// the SDK client and asked it for its roots, and the SDK's answers
	// reached the waiting handler.
	roots := first("roots")
	if c["roots"].IsError || got.RootsAsked != 1 || !strings.HasPrefix(roots, "The client answered ping in ") ||
		!strings.HasSuffix(roots, "exposes 2 root(s): file:///work/project (project), file:///tmp/scratch.") {
		t.Errorf("get-roots-list: %q (roots asked %d times, %+v)", roots, got.RootsAsked, c["roots"])
	}
	// The SDK dispatches notifications on a microtask but drops a request's
	// progress handler synchronously when its response arrives, so the last
	// notification, read in the same chunk as the response, may never reach
	// onprogress. TestStdioSessionThroughBinary shows all of them precede the
	// response on the wire; here at least the first three must arrive, in order.
	if !strings.HasPrefix(first("longRunning"), "Long running operation completed") || len(got.Progress) < 3 || len(got.Progress) > 4 {
		t.Errorf("long-running: %q, progress %+v", first("longRunning"), got.Progress)
	}
	for i, p := range got.Progress {
		if p.Progress != float64(i+1) || p.Total != 4 {
			t.Errorf("progress %d: %+v", i, p)
		}
	}
}

// TestTypeScriptSDKOverStdio has the official TypeScript SDK client
// (StdioClientTransport, from the pinned npm packages) list and call the
// reference tools through `toolwire serve --stdio`.
func TestTypeScriptSDKOverStdio(t *testing.T) {
	run := runTSClient(t, "stdio", testenv.Toolwire(t), "serve", "--stdio", "--page-size", "5", "--data-dir", t.TempDir())
	checkTSRun(t, run, "stdio")
}
