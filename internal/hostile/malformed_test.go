package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// expect is the exact reply a case requires on one transport.
type expect struct {
	// none: no JSON-RPC reply at all (a notification, a response); over
	// HTTP the status (202 unless ls/ms say otherwise) with an empty body
	// and no Content-Type.
	none bool
	// code is the JSON-RPC error code; 0 means a result.
	code int64
	// id is the id the reply must carry: nil for null, an int or int64,
	// or a string (compared after unescaping).
	id any
	// msg must appear in the error message; data in the error's data.
	msg, data string
	// isError and text describe a tools/call result: its isError flag and
	// a substring of its text content; textLen, when set, the exact length
	// of that text.
	isError bool
	text    string
	textLen int
	// ls and ms are the HTTP status over a 2025-era session and over
	// 2026-era requests.
	ls, ms int
}

// Reply builders.
func rpcErr(code int64, id any, msg string) expect { return expect{code: code, id: id, msg: msg} }
func ok(id any, text string) expect                { return expect{id: id, text: text, ls: 200, ms: 200} }
func toolErr(id any, text string) expect {
	return expect{id: id, isError: true, text: text, ls: 200, ms: 200}
}

var noReply = expect{none: true, ls: http.StatusAccepted, ms: http.StatusAccepted}

// http sets the HTTP status over a 2025-era session and 2026-era requests.
func (e expect) http(legacy, modern int) expect { e.ls, e.ms = legacy, modern; return e }

func (e expect) withData(s string) expect { e.data = s; return e }

// JSON-RPC and MCP error codes.
const (
	parseError         = -32700
	invalidRequest     = -32600
	methodNotFound     = -32601
	invalidParams      = -32602
	headerMismatch     = -32020
	unsupportedVersion = -32022
)

// hcase is one hostile message and the reply each transport owes it.
type hcase struct {
	name string
	// msg is the message (see expand for $M, $m and $I): a stdio line and
	// an HTTP body.
	msg string
	// method and tool are the Mcp-Method and Mcp-Name headers a 2026-era
	// request carries ("" for none); edit then spoils the request.
	method, tool string
	verb         string // the HTTP method; "" for POST
	edit         func(*http.Request, kind)
	want         expect
	over         map[kind]expect // per-transport replies that differ from want
	only         []kind          // the transports the case applies to; nil for all
}

// expectFor returns the reply the case requires on k, and whether it
// applies there at all.
func (c *hcase) expectFor(k kind) (expect, bool) {
	if c.only != nil && !slices.Contains(c.only, k) {
		return expect{}, false
	}
	if e, ok := c.over[k]; ok {
		return e, true
	}
	return c.want, true
}

// checkReply judges one JSON-RPC reply against e.
func checkReply(raw string, e expect, k kind) []string {
	r, err := parseReply(raw)
	if err != nil {
		return []string{err.Error()}
	}
	var p []string
	if r.JSONRPC == nil || *r.JSONRPC != "2.0" {
		p = append(p, `reply lacks "jsonrpc":"2.0"`)
	}
	if r.Method != "" {
		p = append(p, fmt.Sprintf("expected a response, got a %q message", r.Method))
	}
	if err := idMatches(r.ID, e.id); err != nil {
		p = append(p, err.Error())
	}
	if e.code != 0 {
		switch {
		case r.Error == nil:
			p = append(p, fmt.Sprintf("want error %d, got a result", e.code))
		case r.Error.Code != e.code:
			p = append(p, fmt.Sprintf("error code %d, want %d (%q)", r.Error.Code, e.code, r.Error.Message))
		}
		if r.Error != nil && !strings.Contains(r.Error.Message, e.msg) {
			p = append(p, fmt.Sprintf("error message %q lacks %q", r.Error.Message, e.msg))
		}
		if r.Error != nil && !strings.Contains(string(r.Error.Data), e.data) {
			p = append(p, fmt.Sprintf("error data %s lacks %q", r.Error.Data, e.data))
		}
		if r.Error != nil && r.Result != nil {
			p = append(p, "an error reply carries a result too")
		}
	} else {
		if r.Error != nil || r.Result == nil {
			return append(p, fmt.Sprintf("want a result, got %.300s", raw))
		}
		var tr toolResult
		if err := json.Unmarshal(r.Result, &tr); err != nil {
			return append(p, fmt.Sprintf("result does not decode: %v", err))
		}
		if tr.IsError != e.isError {
			p = append(p, fmt.Sprintf("isError %v, want %v: %.300s", tr.IsError, e.isError, raw))
		}
		if !strings.Contains(tr.text(), e.text) {
			p = append(p, fmt.Sprintf("result text %.300q lacks %q", tr.text(), e.text))
		}
		if e.textLen != 0 && len(tr.text()) != e.textLen {
			p = append(p, fmt.Sprintf("result text is %d bytes, want %d", len(tr.text()), e.textLen))
		}
		// 2026-07-28 results carry resultType; 2025-era ones never do.
		if k == modernK && tr.ResultType != "complete" {
			p = append(p, fmt.Sprintf("resultType %q, want complete", tr.ResultType))
		}
		if k != modernK && tr.ResultType != "" {
			p = append(p, fmt.Sprintf("a 2025-era result carries resultType %q", tr.ResultType))
		}
	}
	return p
}

// runStdio sends the case's line, then the health call, on the stdio
// connection, and judges what comes back.
func (r *rig) runStdio(t *testing.T, i int, c *hcase, e expect) []string {
	hmsg, hid, htext := healthCall(i, stdioK)
	r.write(t, []byte(expand(c.msg, stdioK)))
	r.write(t, []byte(hmsg))
	var others []string
	health := ""
	var p []string
	deadline := time.After(waitLimit)
wait:
	for health == "" || !e.none && len(others) == 0 {
		select {
		case l, ok := <-r.lines:
			if !ok {
				t.Fatal("the stdio server closed its output")
			}
			if rep, err := parseReply(string(l)); err == nil && idMatches(rep.ID, hid) == nil {
				health = string(l)
			} else {
				others = append(others, string(l))
			}
		case <-deadline:
			p = append(p, "timed out waiting for the replies")
			break wait
		}
	}
	if e.none {
		// A reply that should not exist may come late: give it a moment.
		select {
		case l := <-r.lines:
			others = append(others, string(l))
		case <-time.After(30 * time.Millisecond):
		}
	}
	switch {
	case e.none && len(others) > 0:
		p = append(p, fmt.Sprintf("want no reply, got %.300s", others[0]))
	case !e.none && len(others) != 1:
		p = append(p, fmt.Sprintf("want one reply, got %d: %.300q", len(others), others))
	case !e.none:
		p = append(p, checkReply(others[0], e, stdioK)...)
	}
	if health == "" {
		p = append(p, "the connection no longer serves: no reply to the health call")
	} else if err := checkHealth(health, hid, htext); err != nil {
		p = append(p, err.Error())
	}
	return p
}

// runHTTP sends the case's request, then the health call, over HTTP in
// the given era, and judges what comes back.
func (r *rig) runHTTP(t *testing.T, i int, c *hcase, e expect, k kind) []string {
	verb := c.verb
	if verb == "" {
		verb = http.MethodPost
	}
	resp := r.post(t, k, verb, expand(c.msg, k), func(req *http.Request) {
		if k == modernK {
			if c.method != "" {
				req.Header.Set("Mcp-Method", c.method)
			}
			if c.tool != "" {
				req.Header.Set("Mcp-Name", c.tool)
			}
		}
		if c.edit != nil {
			c.edit(req, k)
		}
	})
	var p []string
	want := e.ls
	if k == modernK {
		want = e.ms
	}
	if resp.status != want {
		p = append(p, fmt.Sprintf("HTTP status %d, want %d", resp.status, want))
	}
	ct := resp.header.Get("Content-Type")
	switch {
	case e.none:
		if resp.body != "" || ct != "" {
			p = append(p, fmt.Sprintf("want an empty reply, got Content-Type %q and %.300q", ct, resp.body))
		}
	case ct == "application/json":
		p = append(p, checkReply(resp.body, e, k)...)
	case ct == "text/event-stream":
		p = append(p, "reply is an SSE stream, want application/json")
		if msgs := sseMessages(resp.body); len(msgs) > 0 {
			p = append(p, checkReply(msgs[len(msgs)-1], e, k)...)
		}
	default:
		p = append(p, fmt.Sprintf("Content-Type %q, want application/json: %.300q", ct, resp.body))
	}

	hmsg, hid, htext := healthCall(i, k)
	hr := r.post(t, k, http.MethodPost, hmsg, func(req *http.Request) {
		if k == modernK {
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "echo")
		}
	})
	if hr.status != http.StatusOK || hr.header.Get("Content-Type") != "application/json" {
		p = append(p, fmt.Sprintf("the %s no longer serves: health call got %d %q: %.300s",
			map[kind]string{legacyK: "session", modernK: "endpoint"}[k], hr.status, hr.header.Get("Content-Type"), hr.body))
	} else if err := checkHealth(hr.body, hid, htext); err != nil {
		p = append(p, err.Error())
	}
	return p
}

// TestMalformed runs the hostile-input table over stdio and over
// Streamable HTTP in both eras, against one server hosting the reference
// tools, and after each case checks that the same connection, session or
// endpoint still serves a normal call.
func TestMalformed(t *testing.T) {
	r := newRig(t)
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			n := 0
			for i, c := range malformedCases {
				e, ok := c.expectFor(k)
				if !ok {
					continue
				}
				n++
				t.Run(c.name, func(t *testing.T) {
					var p []string
					if k == stdioK {
						p = r.runStdio(t, i, &c, e)
					} else {
						p = r.runHTTP(t, i, &c, e, k)
					}
					if len(p) > 0 {
						t.Errorf("%s", strings.Join(p, "\n"))
					}
				})
			}
			t.Logf("%d cases over %s", n, k)
		})
	}
}

// TestMalformedTableSize keeps the table honest: every transport runs at
// least 60 cases, names are unique, and each applicable case states an
// HTTP status for the HTTP transports.
func TestMalformedTableSize(t *testing.T) {
	seen := map[string]bool{}
	counts := map[kind]int{}
	for _, c := range malformedCases {
		if seen[c.name] {
			t.Errorf("case %q appears twice", c.name)
		}
		seen[c.name] = true
		for _, k := range kinds {
			e, ok := c.expectFor(k)
			if !ok {
				continue
			}
			counts[k]++
			if e == (expect{}) {
				t.Errorf("case %q states no reply for %s", c.name, k)
			}
			if k == legacyK && e.ls == 0 || k == modernK && e.ms == 0 {
				t.Errorf("case %q states no HTTP status for %s", c.name, k)
			}
		}
	}
	for _, k := range kinds {
		t.Logf("%s: %d cases", k, counts[k])
		if counts[k] < 60 {
			t.Errorf("%s runs %d cases, want at least 60", k, counts[k])
		}
	}
}
