package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/bench/tools"
)

// fakeServer serves fakeHandler(sse, reply) until the test ends.
func fakeServer(t *testing.T, sse bool, reply func(body string) string) *httptest.Server {
	t.Helper()
	return serve(t, fakeHandler(sse, reply))
}

// serve serves h on a loopback test server, closed when the test ends.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// withID is a fakeServer reply: reply with each %ID% replaced by the id of
// the request it answers.
func withID(reply string) func(body string) string {
	return func(body string) string {
		id := body[strings.Index(body, `"id":`)+5 : strings.Index(body, `,"method"`)]
		return strings.ReplaceAll(reply, "%ID%", id)
	}
}

// fakeHandler is a 2025-11-25 server with one session, s1: it answers
// initialize, accepts the initialized notification, and answers every
// tools/call in the session with reply(body) as JSON or as one SSE event.
func fakeHandler(sse bool, reply func(body string) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body := string(b)
		switch {
		case strings.Contains(body, `"notifications/initialized"`):
			w.WriteHeader(http.StatusAccepted)
			return
		case strings.Contains(body, `"initialize"`):
			w.Header().Set("Mcp-Session-Id", "s1")
			body = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`
		default:
			if r.Header.Get("Mcp-Session-Id") != "s1" {
				http.Error(w, "no session", http.StatusBadRequest)
				return
			}
			body = reply(body)
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			// a priming event with no data, then a notification, then the reply
			io.WriteString(w, "id: 0\ndata:\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\nevent: message\nid: 1\ndata: "+body+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

func TestChecks(t *testing.T) {
	long := strings.Repeat("x", tools.BigSize)
	cases := []struct {
		name   string
		reply  string // %ID% is replaced by the request's id
		tool   string
		args   []byte
		check  Check
		wantOK bool
	}{
		{"echo ok", `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"hi"}]}}`, "echo", EchoArgs("hi"), CheckEcho("hi"), true},
		{"echo wrong text", `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"ho"}]}}`, "echo", EchoArgs("hi"), CheckEcho("hi"), false},
		{"echo two blocks", `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"hi"},{"type":"text","text":"hi"}]}}`, "echo", EchoArgs("hi"), CheckEcho("hi"), false},
		{"echo isError", `{"jsonrpc":"2.0","id":%ID%,"result":{"isError":true,"content":[{"type":"text","text":"hi"}]}}`, "echo", EchoArgs("hi"), CheckEcho("hi"), false},
		{"wrong id", `{"jsonrpc":"2.0","id":999,"result":{"content":[{"type":"text","text":"hi"}]}}`, "echo", EchoArgs("hi"), CheckEcho("hi"), false},
		{"rpc error", `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32602,"message":"no"}}`, "echo", EchoArgs("hi"), CheckEcho("hi"), false},
		{"not json", `oops`, "echo", EchoArgs("hi"), CheckEcho("hi"), false},
		{"add ok", `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"{\"sum\":3.5}"}],"structuredContent":{"sum":3.5}}}`, "add", AddArgs(3, 0.5), CheckAdd(3, 0.5), true},
		{"add wrong sum", `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3}}}`, "add", AddArgs(3, 0.5), CheckAdd(3, 0.5), false},
		{"add no fallback", `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[],"structuredContent":{"sum":3.5}}}`, "add", AddArgs(3, 0.5), CheckAdd(3, 0.5), false},
		{"big ok", `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"` + tools.BigText + `"}]}}`, "big", []byte(`{}`), CheckBig, true},
		{"big wrong bytes", `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"` + long + `"}]}}`, "big", []byte(`{}`), CheckBig, false},
	}
	for _, sse := range []bool{false, true} {
		for _, tc := range cases {
			name := tc.name
			if sse {
				name += " (SSE)"
			}
			t.Run(name, func(t *testing.T) {
				srv := fakeServer(t, sse, withID(tc.reply))
				ctx := context.Background()
				s, err := Open(ctx, NewHTTPClient(1), srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				err = s.Call(ctx, tc.tool, tc.args, tc.check)
				if tc.wantOK && err != nil {
					t.Fatalf("want success, got %v", err)
				}
				if !tc.wantOK && err == nil {
					t.Fatal("a wrong reply passed the check")
				}
			})
		}
	}
}

func TestHTTPStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	if _, err := Open(context.Background(), NewHTTPClient(1), srv.URL); err == nil {
		t.Fatal("a 500 on initialize passed")
	}
}

func TestCallRejected(t *testing.T) {
	for _, tc := range []struct {
		reply  string
		wantOK bool
	}{
		{`{"jsonrpc":"2.0","id":%ID%,"result":{"isError":true,"content":[{"type":"text","text":"bad"}]}}`, true},
		{`{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32602,"message":"bad"}}`, true},
		{`{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"5"}]}}`, false},
	} {
		srv := fakeServer(t, false, withID(tc.reply))
		s, err := Open(context.Background(), NewHTTPClient(1), srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		err = s.CallRejected(context.Background(), "echo", []byte(`{"message":5}`))
		if (err == nil) != tc.wantOK {
			t.Errorf("reply %s: err = %v, want ok=%v", tc.reply, err, tc.wantOK)
		}
	}
}
