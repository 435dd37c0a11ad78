package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/flow"
	"github.com/toolwire/toolwire/internal/testenv"
)

// flowCLITimeout bounds one run of the toolwire binary in these tests: a
// failure bound, not a speed check.
const flowCLITimeout = 5 * time.Minute

// cliRun is how one run of the binary went.
type cliRun struct {
	stdout, stderr string
	code           int
}

// runFlowCLI runs the toolwire binary with args in dir.
func runFlowCLI(t *testing.T, dir string, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), flowCLITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Toolwire(t), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := cliRun{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("toolwire %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("toolwire %s did not finish within %v:\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), flowCLITimeout, r.stdout, r.stderr)
	}
	return r
}

func (r cliRun) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// writeFlowFile writes a manifest into dir and returns its path.
func writeFlowFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// forgetfulProxy stands in front of a 2025-era HTTP server and, once one
// tools/call has been answered, forgets every session: each request that
// carries an Mcp-Session-Id is answered 404, as a server that lost its
// sessions answers. A new session's initialize (no session id yet) still
// reaches the server.
type forgetfulProxy struct {
	armed       atomic.Bool
	initializes atomic.Int32 // initialize requests passed on
	rejected    atomic.Int32 // requests answered 404
	URL         string
}

func startForgetfulProxy(t *testing.T, target string) *forgetfulProxy {
	t.Helper()
	fp := &forgetfulProxy{}
	fp.URL = inspectingProxy(t, target, func(w http.ResponseWriter, r *http.Request, body []byte, proxy http.Handler) {
		if fp.armed.Load() && r.Header.Get("Mcp-Session-Id") != "" {
			fp.rejected.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)
			return
		}
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.Method == "initialize" {
			fp.initializes.Add(1)
		}
		proxy.ServeHTTP(w, r)
		if msg.Method == "tools/call" {
			fp.armed.Store(true)
		}
	})
	return fp
}

// deadURL is an MCP URL on a loopback port that was just free.
func deadURL(t *testing.T) string {
	t.Helper()
	return "http://" + testenv.FreeAddr(t) + "/mcp"
}

// junitDoc is the part of a JUnit report the tests read.
type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the JUnit report: %v", err)
	}
	if !bytes.HasPrefix(data, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Errorf("the JUnit report does not start with an XML declaration:\n%s", data)
	}
	var doc junitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the JUnit report is not XML: %v\n%s", err, data)
	}
	return doc
}

// TestFlowExamples runs the example suite, examples/flows, with `toolwire
// test` against real servers: server-everything (npm, pinned) over stdio
// (the flows start it) and over Streamable HTTP, `toolwire serve` over
// HTTP and over stdio, a URL nobody listens on, a stdio "server" that
// answers garbage, and a proxy that forgets sessions. Every flow must
// pass; the summary counts them all, and the JUnit report lists each flow
// of each file as a passed testcase. The proxy must have seen the client
// initialize a second session once (the re-handshake) before the flow got
// ERR_MCP_SESSION_INVALID.
func TestFlowExamples(t *testing.T) {
	bin := testenv.Toolwire(t)
	node, entry := testenv.Everything(t)
	root := testenv.Root(t)
	everythingURL := "http://" + testenv.EverythingHTTP(t, "streamableHttp") + "/mcp"
	ref := startServe(t, nil, "--data-dir", t.TempDir())
	forgetful := startForgetfulProxy(t, ref.url)

	// What the suite holds, from the manifests themselves.
	dir := filepath.Join(root, "examples", "flows")
	files, err := filepath.Glob(filepath.Join(dir, "*.flow.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no flows in %s: %v", dir, err)
	}
	want := map[string][]string{} // file (as toolwire test names it) -> flow names
	total := 0
	for _, f := range files {
		file, err := flow.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel := filepath.Join("examples", "flows", filepath.Base(f))
		for _, fl := range file.Flows {
			want[rel] = append(want[rel], fl.Name)
			total++
		}
	}
	for _, name := range []string{"seed001-tool-error.flow.yaml", "everything-stdio.flow.yaml", "everything-http.flow.yaml",
		"reference-http.flow.yaml", "error-tool-error.flow.yaml", "error-json-rpc.flow.yaml", "error-transport.flow.yaml",
		"error-protocol.flow.yaml", "error-session-invalid.flow.yaml", "error-step-timeout.flow.yaml",
		"error-assertion.flow.yaml", "retry.flow.yaml", "for-each-concurrency.flow.yaml"} {
		if _, ok := want[filepath.Join("examples", "flows", name)]; !ok {
			t.Errorf("examples/flows/%s is missing", name)
		}
	}

	report := filepath.Join(t.TempDir(), "out", "junit.xml")
	r := runFlowCLI(t, root, "test", "examples/flows", "--junit", report,
		"--input", "node="+node, "--input", "entry="+entry,
		"--input", "everything_url="+everythingURL, "--input", "ref_url="+ref.url,
		"--input", "session_url="+forgetful.URL, "--input", "dead_url="+deadURL(t),
		"--input", "toolwire="+bin)
	if r.code != 0 {
		t.Fatalf("toolwire test examples/flows: %s", r)
	}
	summary := fmt.Sprintf("%d passed, 0 failed", total)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if last := lines[len(lines)-1]; last != summary {
		t.Errorf("summary %q, want %q\n%s", last, summary, r.stdout)
	}
	for rel, names := range want {
		for _, n := range names {
			if !regexp.MustCompile(`(?m)^PASS ` + regexp.QuoteMeta(n) + ` \(` + regexp.QuoteMeta(rel) + `\) \d`).MatchString(r.stdout) {
				t.Errorf("no PASS line for %s (%s):\n%s", n, rel, r.stdout)
			}
		}
	}

	// The JUnit report: one testsuite per file, one passed testcase per flow.
	doc := readJUnit(t, report)
	if doc.Tests != total || doc.Failures != 0 || doc.Errors != 0 {
		t.Errorf("report totals: tests=%d failures=%d errors=%d, want %d, 0, 0", doc.Tests, doc.Failures, doc.Errors, total)
	}
	got := map[string][]string{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			got[s.Name] = append(got[s.Name], c.Name)
			if c.Failure != nil || c.Error != nil {
				t.Errorf("%s: %s failed in the report", s.Name, c.Name)
			}
			if c.Classname != s.Name || c.Time == "" {
				t.Errorf("%s: %s: classname %q, time %q", s.Name, c.Name, c.Classname, c.Time)
			}
		}
		if s.Tests != len(s.Cases) {
			t.Errorf("%s: tests=%d for %d testcases", s.Name, s.Tests, len(s.Cases))
		}
	}
	for rel, names := range want {
		g := got[rel]
		sort.Strings(g)
		w := slices.Clone(names)
		sort.Strings(w)
		if !slices.Equal(g, w) {
			t.Errorf("report for %s lists %v, want %v", rel, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("report has %d testsuites, want %d (one per file)", len(got), len(want))
	}

	// The session flow: one re-handshake, then the error.
	if n := forgetful.initializes.Load(); n != 2 {
		t.Errorf("the forgetful server saw %d initialize requests, want 2 (the first session and one re-handshake)", n)
	}
	if forgetful.rejected.Load() < 2 {
		t.Errorf("the forgetful server rejected %d requests, want at least 2", forgetful.rejected.Load())
	}
}

// TestFlowRunSeed001 runs seed 001's flow with `toolwire run` against
// `toolwire serve` over HTTP: the tool error is caught, and the outputs,
// printed on stdout as JSON, hold the tool's content from
// error.data.content. The step lines on stderr show the failed call, the
// caught try and the steps after it; --output text prints name: value.
func TestFlowRunSeed001(t *testing.T) {
	root := testenv.Root(t)
	ref := startServe(t, nil, "--data-dir", t.TempDir())
	r := runFlowCLI(t, root, "run", "examples/flows/seed001-tool-error.flow.yaml", "--input", "ref_url="+ref.url)
	if r.code != 0 {
		t.Fatalf("toolwire run: %s", r)
	}
	var outputs struct {
		Message  string `json:"message"`
		Content  []map[string]any
		Quotient float64 `json:"quotient"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &outputs); err != nil {
		t.Fatalf("stdout is not the outputs as JSON: %v\n%s", err, r.stdout)
	}
	const msg = "cannot divide by zero; pass a non-zero b"
	if outputs.Message != msg || outputs.Quotient != 0.25 || len(outputs.Content) != 1 ||
		outputs.Content[0]["type"] != "text" || outputs.Content[0]["text"] != msg {
		t.Errorf("outputs %+v", outputs)
	}
	if !strings.HasPrefix(r.stdout, "{\n  \"") {
		t.Errorf("outputs are not indented JSON:\n%s", r.stdout)
	}
	for _, re := range []string{
		`(?m)^  ✗ by_zero \(call safe_divide\) \d+ms: ERR_MCP_TOOL_ERROR: .*cannot divide by zero`,
		`(?m)^✓ divide \(try\) \d+ms, error caught`,
		`(?m)^✓ fixed \(call safe_divide\) \d+ms$`,
		`(?m)^✓ flow seed001-tool-error passed in \d`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stderr) {
			t.Errorf("stderr does not match %s:\n%s", re, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "\033[") {
		t.Errorf("escape sequences in output that is not a terminal:\n%q", r.stderr)
	}

	r = runFlowCLI(t, root, "run", "examples/flows/seed001-tool-error.flow.yaml", "--input", "ref_url="+ref.url, "--output", "text")
	if r.code != 0 || !strings.Contains(r.stdout, "message: "+msg+"\n") || !strings.Contains(r.stdout, "quotient: 0.25\n") {
		t.Errorf("--output text: %s", r)
	}
}

// TestFlowRunAssertionFails: a flow whose assertion fails makes `toolwire
// run` exit 1 and show the code, the failing step with its file:line:col,
// and the expected and actual values; nothing is printed on stdout. A
// missing required input is a usage error (exit 2), and so is a flow that
// does not pass the check.
func TestFlowRunAssertionFails(t *testing.T) {
	dir := t.TempDir()
	writeFlowFile(t, dir, "answer.flow.yaml", `name: answer
inputs:
  want: {type: integer, default: 42}
steps:
  - name: compute
    value: {answer: 41}
  - name: check
    assert:
      that: "${{ steps.compute.result.answer }}"
      equals: "${{ inputs.want }}"
      message: the answer is off
outputs:
  answer: "${{ steps.compute.result.answer }}"
`)
	r := runFlowCLI(t, dir, "run", "answer.flow.yaml")
	if r.code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	if r.stdout != "" {
		t.Errorf("stdout of a failed flow: %q", r.stdout)
	}
	for _, re := range []string{
		`(?m)^✓ compute \(value\) \d+ms$`,
		`(?m)^✗ check \(assert\) \d+ms: ERR_ASSERTION: `,
		`(?m)^✗ flow answer failed after \d+ms:$`,
		`(?m)^  ERR_ASSERTION: .*the answer is off`,
		`(?m)^  step: check at answer\.flow\.yaml:7:5$`,
		`(?m)^  operator: equals$`,
		`(?m)^  expected: 42$`,
		`(?m)^  actual:   41$`,
		`(?m)^toolwire: flow answer failed: ERR_ASSERTION$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stderr) {
			t.Errorf("stderr does not match %s:\n%s", re, r.stderr)
		}
	}

	// The input makes it pass.
	r = runFlowCLI(t, dir, "run", "answer.flow.yaml", "--input", "want=41")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "{\n  \"answer\": 41\n}" {
		t.Errorf("--input want=41: %s", r)
	}

	// Usage errors: exit 2.
	writeFlowFile(t, dir, "needs.flow.yaml", "inputs:\n  who: {type: string}\nsteps:\n  - value: \"${{ inputs.who }}\"\n")
	writeFlowFile(t, dir, "broken.flow.yaml", "steps:\n  - value: 1\n    bogus: 2\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "needs.flow.yaml"}, "who"},
		{[]string{"run", "answer.flow.yaml", "--input", "nope=1"}, "nope"},
		{[]string{"run", "answer.flow.yaml", "--input", "want=x"}, "want"},
		{[]string{"run", "broken.flow.yaml"}, "broken.flow.yaml:3:5: "},
		{[]string{"run", "answer.flow.yaml", "needs.flow.yaml"}, "one manifest"},
		{[]string{"run", "answer.flow.yaml", "--flow", "other"}, `no flow "other"`},
	} {
		r := runFlowCLI(t, dir, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: want exit 2 mentioning %q: %s", tc.args, tc.want, r)
		}
	}
}

// TestFlowCheck: `toolwire check` reports every problem of a manifest as
// file:line:col: message, sorted, and exits 1; a manifest without problems
// gets an ok line. A flow with a CEL type error never starts its clients,
// neither under check nor under run: the stdio client's command would
// create a marker file. A correct flow with that client passes check
// without starting it either.
func TestFlowCheck(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	client := fmt.Sprintf(`clients:
  spy:
    command: sh
    args: ["-c", "touch %s; cat >/dev/null"]
    era: legacy
    timeout: 2s
`, marker)
	writeFlowFile(t, dir, "bad.flow.yaml", `name: bad
inputs:
  n: {type: integer, default: 3}
`+client+`steps:
  - name: first
    call: {tool: echo, arguments: {message: "${{ inputs.n + 'x' }}"}}
  - name: later
    value: "${{ steps.nowhere.result }}"
    colour: red
  - name: first
    while: "${{ true }}"
    do:
      - sleep: 1ms
`)
	r := runFlowCLI(t, dir, "check", "bad.flow.yaml")
	if r.code != 1 {
		t.Fatalf("check of a bad flow: want exit 1: %s", r)
	}
	diag := regexp.MustCompile(`^bad\.flow\.yaml:(\d+):(\d+): (.+)$`)
	var lines []string
	var positions [][2]int
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		m := diag.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("not a file:line:col: diagnostic: %q", l)
			continue
		}
		var line, col int
		fmt.Sscan(m[1], &line)
		fmt.Sscan(m[2], &col)
		positions = append(positions, [2]int{line, col})
		lines = append(lines, l)
	}
	if !slices.IsSortedFunc(positions, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	}) {
		t.Errorf("diagnostics are not sorted by position:\n%s", r.stdout)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{
		`bad.flow.yaml:12:59: CEL type error: `,                    // at the + inside the string
		`bad.flow.yaml:14:17: unknown step "nowhere"`,              // a reference to no step
		`bad.flow.yaml:15:5: unknown key "colour"`,                 // an unknown key
		`bad.flow.yaml:16:5: duplicate step name "first" (at 11:5`, // both places named
		`bad.flow.yaml:17:5: `,                                     // while without max_iterations
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no diagnostic %q in:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "1 of 1 file has problems") {
		t.Errorf("stderr: %s", r.stderr)
	}
	if r := runFlowCLI(t, dir, "run", "bad.flow.yaml"); r.code != 2 || !strings.Contains(r.stderr, "bad.flow.yaml:12:59: ") {
		t.Errorf("run of a bad flow: want exit 2 and its diagnostics: %s", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the flow's stdio client was started although the flow does not pass the check")
	}

	// Fixed, it passes the check, still without starting anything.
	writeFlowFile(t, dir, "good.flow.yaml", `name: good
`+client+`steps:
  - call: {tool: echo, arguments: {message: hi}}
`)
	r = runFlowCLI(t, dir, "check", "good.flow.yaml")
	if r.code != 0 || r.stdout != "good.flow.yaml: ok (1 flow)\n" {
		t.Errorf("check of a good flow: %s", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("check started the flow's stdio client")
	}
	// Run, the flow starts the client (which never answers: the call
	// fails), so the marker does show a started client.
	if r := runFlowCLI(t, dir, "run", "good.flow.yaml"); r.code != 1 || !strings.Contains(r.stderr, "ERR_MCP_TRANSPORT") {
		t.Errorf("run of the good flow against a silent server: want exit 1 and ERR_MCP_TRANSPORT: %s", r)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("running the flow did not start its client: %v", err)
	}
	// Both at once: one ok line, the other's problems, exit 1.
	r = runFlowCLI(t, dir, "check", "good.flow.yaml", "bad.flow.yaml")
	if r.code != 1 || !strings.Contains(r.stdout, "good.flow.yaml: ok") || !strings.Contains(r.stdout, "bad.flow.yaml:12:59: ") {
		t.Errorf("check of both: %s", r)
	}
}

// TestFlowCheckConnect: `toolwire check --connect` starts the clients and
// checks each call of a literal tool against the server's tools: an unknown
// tool and literal arguments that do not fit its inputSchema are reported
// with their positions; a call whose arguments are expressions is not.
func TestFlowCheckConnect(t *testing.T) {
	dir := t.TempDir()
	ref := startServe(t, nil, "--data-dir", t.TempDir())
	writeFlowFile(t, dir, "calls.flow.yaml", `inputs:
  url: {type: string}
  a: {type: integer, default: 1}
clients:
  ref: {url: "${{ inputs.url }}"}
steps:
  - call: {tool: get-sum, arguments: {a: 1, b: 2}}
  - call: {tool: get-summ, arguments: {a: 1, b: 2}}
  - call: {tool: get-sum, arguments: {a: one, b: 2}}
  - call: {tool: get-sum, arguments: {a: "${{ inputs.a }}", b: 2}}
`)
	if r := runFlowCLI(t, dir, "check", "calls.flow.yaml"); r.code != 0 {
		t.Errorf("check without --connect: %s", r)
	}
	r := runFlowCLI(t, dir, "check", "--connect", "calls.flow.yaml", "--input", "url="+ref.url)
	if r.code != 1 {
		t.Fatalf("check --connect: want exit 1: %s", r)
	}
	for _, re := range []string{`(?m)^calls\.flow\.yaml:8:\d+: .*get-summ`, `(?m)^calls\.flow\.yaml:9:\d+: `} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("stdout does not match %s:\n%s", re, r.stdout)
		}
	}
	if regexp.MustCompile(`(?m)^calls\.flow\.yaml:(7|10):`).MatchString(r.stdout) {
		t.Errorf("a good call, or one with expressions, was reported:\n%s", r.stdout)
	}
}

// TestFlowTestFails: `toolwire test` over a directory with a failing flow
// exits 1, prints a FAIL line with the error, the step's place and the
// expected and actual values, and the summary "1 passed, 1 failed"; the
// JUnit report holds the failure. --run picks flows by name; an input no
// flow declares is a usage error.
func TestFlowTestFails(t *testing.T) {
	dir := t.TempDir()
	writeFlowFile(t, dir, "suite/math.flow.yaml", `name: adds
steps:
  - name: sum
    value: "${{ 2 + 2 }}"
  - assert: {that: "${{ steps.sum.result }}", equals: 4}
---
name: multiplies
steps:
  - name: product
    value: "${{ 2 * 3 }}"
  - name: wrong
    assert: {that: "${{ steps.product.result }}", equals: 5}
`)
	writeFlowFile(t, dir, "suite/ignored.yaml", "not: a flow\n")
	report := filepath.Join(dir, "junit.xml")
	r := runFlowCLI(t, dir, "test", "suite", "--junit", report)
	if r.code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	for _, re := range []string{
		`(?m)^PASS adds \(suite/math\.flow\.yaml\) \d+ms$`,
		`(?m)^FAIL multiplies \(suite/math\.flow\.yaml\) \d+ms$`,
		`(?m)^    ERR_ASSERTION: `,
		`(?m)^    step: wrong at suite/math\.flow\.yaml:11:5$`,
		`(?m)^    expected: 5$`,
		`(?m)^    actual:   6$`,
		`(?m)^1 passed, 1 failed$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("stdout does not match %s:\n%s", re, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "1 of 2 tests failed") {
		t.Errorf("stderr: %s", r.stderr)
	}
	doc := readJUnit(t, report)
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || doc.Suites[0].Name != "suite/math.flow.yaml" {
		t.Fatalf("report: %+v", doc)
	}
	cases := doc.Suites[0].Cases
	if len(cases) != 2 || cases[0].Name != "adds" || cases[0].Failure != nil || cases[1].Name != "multiplies" || cases[1].Failure == nil {
		t.Fatalf("testcases: %+v", cases)
	}
	if f := cases[1].Failure; f.Type != "ERR_ASSERTION" || !strings.HasPrefix(f.Message, "ERR_ASSERTION: ") ||
		!strings.Contains(f.Body, "expected: 5") || !strings.Contains(f.Body, "actual:   6") || !strings.Contains(f.Body, "suite/math.flow.yaml:11:5") {
		t.Errorf("failure: %+v", f)
	}

	r = runFlowCLI(t, dir, "test", "suite", "--run", "^add")
	if r.code != 0 || !strings.HasSuffix(r.stdout, "1 passed, 0 failed\n") || strings.Contains(r.stdout, "multiplies") {
		t.Errorf("--run ^add: %s", r)
	}
	r = runFlowCLI(t, dir, "test", "suite", "--input", "nobody=1")
	if r.code != 2 || !strings.Contains(r.stderr, "nobody") {
		t.Errorf("an input no flow declares: %s", r)
	}
	// A file that does not load is a failed test of its own.
	writeFlowFile(t, dir, "suite/broken.flow.yaml", "steps: []\n")
	r = runFlowCLI(t, dir, "test", "suite", "--run", "^add")
	if r.code != 1 || !regexp.MustCompile(`(?m)^FAIL broken\.flow\.yaml \(suite/broken\.flow\.yaml\)`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "suite/broken.flow.yaml:1:") || !strings.HasSuffix(r.stdout, "1 passed, 1 failed\n") {
		t.Errorf("a broken file: %s", r)
	}
}

// TestFlowStepPrinter: on a writer that is not a terminal the step lines
// are plain (no escape sequences, no live line), indented by nesting, with
// retries and the number of attempts shown.
func TestFlowStepPrinter(t *testing.T) {
	var buf bytes.Buffer
	p := newStepPrinter(&buf, &buf)
	ev := func(path, name, kind string, started bool, st flow.Status, attempt int, err *flow.Error) {
		target := ""
		if kind == "call" {
			target = "divide"
		}
		p.observe(flow.Event{Path: path, Name: name, Kind: kind, Target: target, Started: started, Status: st, Attempt: attempt,
			Duration: 12 * time.Millisecond, Err: err})
	}
	ev("steps[0]", "outer", "try", true, "", 1, nil)
	ev("steps[0].try[0]", "", "call", true, "", 1, nil)
	ev("steps[0].try[0]", "", "call", false, flow.StatusFailed, 1, &flow.Error{Code: "ERR_MCP_TOOL_ERROR", Message: "boom"})
	ev("steps[0]", "outer", "try", false, flow.StatusCaught, 1, nil)
	ev("steps[1]", "again", "if", true, "", 1, nil)
	ev("steps[1]", "again", "if", true, "", 2, nil)
	ev("steps[1]", "again", "if", false, flow.StatusOK, 2, nil)
	ev("steps[2]", "maybe", "value", true, "", 1, nil)
	ev("steps[2]", "maybe", "value", false, flow.StatusSkipped, 0, nil)
	p.close()
	want := "  ✗ steps[0].try[0] (call divide) 12ms: ERR_MCP_TOOL_ERROR: boom\n" +
		"✓ outer (try) 12ms, error caught\n" +
		"↻ again (if) retrying: attempt 2\n" +
		"✓ again (if) 12ms (2 attempts)\n" +
		"- maybe (value) skipped\n"
	if buf.String() != want {
		t.Errorf("step lines:\n%s\nwant:\n%s", buf.String(), want)
	}
}
