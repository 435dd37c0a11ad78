package inproc

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/toolwire/toolwire/bench/impls"
	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/tools"
)

// subtester is *testing.T or *testing.B: a test whose Run takes its own kind.
type subtester[T any] interface {
	testing.TB
	Run(name string, f func(T)) bool
}

// eachImpl runs f as a subtest (or sub-benchmark) per server of impls.All,
// with the server's name and a client of its handler in process: a
// 2025-11-25 session (initialized), or, modern, a stateless 2026-07-28
// client of its ModernHandler.
func eachImpl[T subtester[T]](tb T, modern bool, f func(tb T, impl string, c *Client)) {
	for _, impl := range impls.All {
		tb.Run(impl, func(tb T) {
			if modern {
				h, err := ModernHandler(impl)
				if err != nil {
					tb.Fatal(err)
				}
				f(tb, impl, &Client{H: h})
				return
			}
			h, err := Handler(impl)
			if err != nil {
				tb.Fatal(err)
			}
			c, err := Open(h)
			if err != nil {
				tb.Fatal(err)
			}
			f(tb, impl, c)
		})
	}
}

// The echo call the benchmarks time: its message and JSON-RPC id.
const (
	echoMsg = "hello"
	echoID  = 7
)

// benchEcho times call, one echo tools/call of echoMsg (id echoID) through
// each server's handler (a 2025-11-25 session, or, modern, stateless
// 2026-07-28 requests), the same way for W6 and W8 so that the two can be
// set side by side. check checks the first and the last reply fully,
// outside the timer; inside the loop only a cheap check runs, the same for
// every server: HTTP 200 with the echoed text and each of also in the body.
func benchEcho(b *testing.B, modern bool, call func(c *Client) *httptest.ResponseRecorder,
	check func(rec *httptest.ResponseRecorder, id int64, check load.Check) error, also ...[]byte) {
	want := append([][]byte{[]byte(`"` + echoMsg + `"`)}, also...)
	eachImpl(b, modern, func(b *testing.B, impl string, c *Client) {
		if err := check(call(c), echoID, load.CheckEcho(echoMsg)); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			rec := call(c)
			if rec.Code != 200 || !containsAll(rec.Body.Bytes(), want) {
				b.Fatalf("bad reply: HTTP %d %.200s", rec.Code, rec.Body)
			}
		}
		b.StopTimer()
		if err := check(call(c), echoID, load.CheckEcho(echoMsg)); err != nil {
			b.Fatal(err)
		}
	})
}

// containsAll reports whether body contains every one of want.
func containsAll(body []byte, want [][]byte) bool {
	for _, w := range want {
		if !bytes.Contains(body, w) {
			return false
		}
	}
	return true
}

// checkTools checks a server's tools through its handler in process, in
// either era: call makes one tools/call and check checks its reply fully
// (CheckCall, or CheckModernCall for a complete 2026-07-28 result). echo,
// add and big must give the right results; and, but from the floor (which
// by design validates nothing), an echo whose message is no string must be
// refused, with a tool error or a JSON-RPC error (in a 2025-11-25 session
// one answered with HTTP 200; modern, with any status).
func checkTools(t *testing.T, impl string, modern bool, call func(id int64, tool string, args []byte) *httptest.ResponseRecorder,
	check func(rec *httptest.ResponseRecorder, id int64, check load.Check) error) {
	t.Helper()
	if err := check(call(1, tools.Echo, load.EchoArgs("hi \"there\"")), 1, load.CheckEcho("hi \"there\"")); err != nil {
		t.Error("echo:", err)
	}
	if err := check(call(2, tools.Add, load.AddArgs(2, 0.5)), 2, load.CheckAdd(2, 0.5)); err != nil {
		t.Error("add:", err)
	}
	if err := check(call(3, tools.Big, []byte(`{}`)), 3, load.CheckBig); err != nil {
		t.Error("big:", err)
	}
	if impl == impls.Floor {
		return
	}
	rec := call(4, tools.Echo, []byte(`{"message":5}`))
	res, err := load.ParseCallResult(rec.Body.Bytes(), rec.Header().Get("Content-Type"), 4)
	if err == nil {
		err = load.CheckRejected(res)
	} else if (modern || rec.Code == 200) && bytes.Contains(rec.Body.Bytes(), []byte(`"error"`)) {
		err = nil // refused with a JSON-RPC error
	}
	if err != nil {
		t.Error("invalid echo:", err)
	}
}
