package main

import (
	"encoding/base64"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// ciSecret is a secret input's value with characters that JSON, XML and
// HTML escape, so that each escaped form can be looked for.
const ciSecret = `Zq"9\x-s3cr3t<&>`

// secretForms are the ways ciSecret could show in a report: as it is,
// JSON-escaped (with and without HTML escaping), XML-escaped and in
// base64 (standard and URL alphabets, padded or not).
func secretForms(t *testing.T) map[string]string {
	t.Helper()
	forms := map[string]string{"raw": ciSecret, "xml": html.EscapeString(ciSecret)}
	b, err := json.Marshal(ciSecret)
	if err != nil {
		t.Fatal(err)
	}
	forms["json"] = string(b[1 : len(b)-1])
	forms["json-plain"] = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(forms["json"])
	forms["base64"] = base64.StdEncoding.EncodeToString([]byte(ciSecret))
	forms["base64url"] = base64.RawURLEncoding.EncodeToString([]byte(ciSecret))
	return forms
}

// TestFlowTestSecretMasked: a suite whose flows take a secret input (from
// --inputs-file) echo it through a real server (in a header and an
// argument), fail an assertion on it, throw it as data and output it;
// stdout, stderr (with --verbose: the clients' logs), the JUnit file and
// the --report json document hold no trace of it, in any of its forms.
func TestFlowTestSecretMasked(t *testing.T) {
	ref := startServe(t, nil, "--data-dir", t.TempDir())
	dir := t.TempDir()
	writeFlowFile(t, dir, "suite/secret.flow.yaml", `name: echoes
inputs:
  url: {type: string}
  token: {type: string, secret: true}
clients:
  ref:
    url: "${{ inputs.url }}"
    headers: {X-Token: "${{ inputs.token }}"}
    timeout: 30s
steps:
  - name: echo
    call: {tool: echo, arguments: {message: "${{ inputs.token }}"}}
  - assert: {that: "${{ steps.echo.result.content.map(c, c.type == 'text', c.text) }}", equals: ["Echo: ${{ inputs.token }}"]}
outputs:
  token: "${{ inputs.token }}"
  encoded: "${{ base64.encode(bytes(inputs.token)) }}"
`)
	writeFlowFile(t, dir, "suite/secret2.flow.yaml", `name: fails-on-it
inputs:
  token: {type: string, secret: true}
steps:
  - name: b64
    value: "${{ base64.encode(bytes(inputs.token)) }}"
  - assert: {that: "${{ [inputs.token, steps.b64.result] }}", equals: [nope]}
---
name: throws-it
inputs:
  token: {type: string, secret: true}
steps:
  - throw: {code: LEAK, message: "token ${{ inputs.token }}", data: {token: "${{ inputs.token }}", list: ["${{ inputs.token }}"]}}
`)
	inputs := writeFlowFile(t, dir, "inputs.yaml", "token: '"+strings.ReplaceAll(ciSecret, "'", "''")+"'\nurl: "+ref.url+"\n")
	junit := filepath.Join(dir, "out", "junit.xml")
	r := runFlowCLI(t, dir, "test", "suite", "--inputs-file", inputs, "--junit", junit, "--report", "json", "--verbose")
	if r.code != 1 {
		t.Fatalf("want exit 1 (two flows fail): %s", r)
	}
	xmlData, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{"stdout": r.stdout, "stderr": r.stderr, "junit": string(xmlData)}
	for where, text := range outputs {
		for form, s := range secretForms(t) {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret (%s form %q):\n%s", where, form, s, text)
			}
		}
		if !strings.Contains(text, "***") && where != "stderr" {
			t.Errorf("%s shows no masked value:\n%s", where, text)
		}
	}

	// The JSON report: every flow with its steps, statuses and durations,
	// under the key names docs/flows.md gives.
	for _, key := range []string{"version", "passed", "failed", "skipped", "durationMs", "files", "path", "flows",
		"name", "line", "status", "error", "outputs", "steps", "kind", "column", "attempts", "code", "message"} {
		if !strings.Contains(r.stdout, `"`+key+`":`) {
			t.Errorf("the JSON report has no key %q:\n%s", key, r.stdout)
		}
	}
	var rep jsonReport
	if err := wirejson.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, r.stdout)
	}
	if rep.Version != 1 || rep.Passed != 1 || rep.Failed != 2 || len(rep.Files) != 2 || len(rep.Files[0].Flows) != 1 || len(rep.Files[1].Flows) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	fl := append(rep.Files[0].Flows, rep.Files[1].Flows...)
	if fl[0].Name != "echoes" || fl[0].Status != "passed" || len(fl[0].Steps) != 2 || fl[0].Steps[0].Kind != "call" ||
		fl[0].Steps[0].Status != "ok" || fl[0].Steps[0].Attempts != 1 || fl[0].Outputs["token"] != "***" {
		t.Errorf("the passing flow: %+v", fl[0])
	}
	if fl[1].Status != "failed" || fl[1].Error == nil || fl[1].Error.Code != "ERR_ASSERTION" {
		t.Errorf("the failing flow: %+v", fl[1])
	}
	if fl[2].Status != "failed" || fl[2].Error == nil || fl[2].Error.Code != "LEAK" || fl[2].Error.Message != "token ***" {
		t.Errorf("the throwing flow: %+v", fl[2])
	}
}

// TestFlowTestFailFast: --fail-fast starts no flow after one failed; the
// ones left are skipped in the lines, the JUnit file and the summary.
func TestFlowTestFailFast(t *testing.T) {
	dir := t.TempDir()
	writeFlowFile(t, dir, "suite/a.flow.yaml", "name: first\nsteps:\n  - throw: {code: BOOM}\n---\nname: second\nsteps:\n  - value: 1\n---\nname: third\nsteps:\n  - value: 1\n")
	junit := filepath.Join(dir, "junit.xml")
	r := runFlowCLI(t, dir, "test", "suite", "--fail-fast", "--parallel", "1", "--junit", junit)
	if r.code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	// With one flow at a time, whichever ran first: a failure stops the
	// rest; the flows that pass before it count as passed.
	if !strings.Contains(r.stdout, "FAIL first") || !strings.Contains(r.stdout, "1 failed") {
		t.Fatalf("stdout: %s", r)
	}
	passed := strings.Count(r.stdout, "PASS ")
	skipped := strings.Count(r.stdout, "SKIP ")
	if passed+skipped != 2 || (skipped > 0 && !strings.Contains(r.stdout, ", "+itoa(skipped)+" skipped")) {
		t.Errorf("passed %d, skipped %d: %s", passed, skipped, r)
	}
	doc, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(doc), "<skipped "); got != skipped {
		t.Errorf("%d skipped in the JUnit file, want %d:\n%s", got, skipped, doc)
	}

	// Without --fail-fast every flow runs.
	r = runFlowCLI(t, dir, "test", "suite", "--parallel", "1")
	if !strings.Contains(r.stdout, "2 passed, 1 failed\n") {
		t.Errorf("without --fail-fast: %s", r)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestFlowInputsFile: --inputs-file gives inputs from YAML or JSON, and
// --input wins over it.
func TestFlowInputsFile(t *testing.T) {
	dir := t.TempDir()
	writeFlowFile(t, dir, "f.flow.yaml", `inputs:
  n: {type: integer}
  tags: {type: array}
  who: {type: string}
steps:
  - assert: {that: "${{ [inputs.n, inputs.tags, inputs.who] }}", equals: [3, [a, b], "${{ inputs.who }}"]}
outputs:
  who: "${{ inputs.who }}"
  n: "${{ inputs.n }}"
`)
	writeFlowFile(t, dir, "in.json", `{"n": 3, "tags": ["a", "b"], "who": "file"}`)
	writeFlowFile(t, dir, "in.yaml", "n: 3\ntags: [a, b]\nwho: file\n")
	for _, f := range []string{"in.json", "in.yaml"} {
		r := runFlowCLI(t, dir, "run", "f.flow.yaml", "--inputs-file", f, "--input", "who=flag", "-o", "text")
		if r.code != 0 || r.stdout != "who: flag\nn: 3\n" {
			t.Errorf("%s: %s", f, r)
		}
	}
	writeFlowFile(t, dir, "bad.yaml", "- n\n")
	if r := runFlowCLI(t, dir, "run", "f.flow.yaml", "--inputs-file", "bad.yaml"); r.code != 2 || !strings.Contains(r.stderr, "bad.yaml:1:1") {
		t.Errorf("a bad inputs file: %s", r)
	}
}
