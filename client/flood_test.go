package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/transport/memory"
)

// floodSize is how many requests a flooding server sends.
const floodSize = 20000

// flood writes floodSize ping requests to an SSE stream, flushing every
// hundred, then last, when it is set; it records the goroutine count of the
// process after each flush in peak.
func flood(w http.ResponseWriter, last string, peak *atomic.Int64) error {
	writeSSE(w)
	for i := range floodSize {
		if _, err := io.WriteString(w, sseData(fmt.Sprintf(`{"jsonrpc":"2.0","id":"flood-%d","method":"ping"}`, i))); err != nil {
			return err
		}
		if i%100 == 99 {
			w.(http.Flusher).Flush()
			if g := int64(runtime.NumGoroutine()); g > peak.Load() {
				peak.Store(g)
			}
		}
	}
	if last != "" {
		io.WriteString(w, sseData(last))
	}
	w.(http.Flusher).Flush()
	return nil
}

// A server that floods the client with requests (20,000 pings) and never
// takes the answers gets at most WithMaxServerRequests of them answered at
// once: that many answers POSTed, and the goroutines of the process stay
// within 4 per answer in flight (the client's, its connection's reader and
// writer, the server's) plus 32, where without the limit there was a
// goroutine and a connection per request, until the file descriptors ran
// out. On a call's reply stream the call fails at once naming the limit;
// on the standalone stream the extra requests are dropped. For the default
// limit and a smaller one.
func TestHTTPServerRequestFlood(t *testing.T) {
	for _, limit := range []int{client.DefaultMaxServerRequests, 4} {
		for _, where := range []string{"reply stream", "standalone stream"} {
			t.Run(fmt.Sprintf("%s/limit %d", where, limit), func(t *testing.T) {
				var answers, peak atomic.Int64
				f := newFake(t)
				f.answer = func(w http.ResponseWriter, r *http.Request, resp *jsonrpc.Response) bool {
					answers.Add(1)
					<-r.Context().Done() // the answer is never taken
					return true
				}
				reached := make(chan struct{}, 1)
				opts := []client.Option{legacy(), client.WithTimeout(time.Minute),
					client.WithLogHandler(func(client.LogMessage) { reached <- struct{}{} })}
				if limit != client.DefaultMaxServerRequests {
					opts = append(opts, client.WithLimits(client.Limits{MaxServerRequests: limit}))
				}
				before := int64(runtime.NumGoroutine())
				if where == "reply stream" {
					f.handle = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
						if req.Method != "tools/call" {
							return false
						}
						if flood(w, "", &peak) == nil {
							<-r.Context().Done()
						}
						return true
					}
					c := connect(t, f.transport(), opts...)
					_, err := c.CallTool(context.Background(), "flood", nil, client.WithOutputValidation(false))
					var te *client.TransportError
					if !errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded) ||
						!strings.Contains(err.Error(), fmt.Sprintf("answering %d of its requests, the client's limit", limit)) {
						t.Fatalf("err = %v, want a transport error naming the limit of %d", err, limit)
					}
				} else {
					f.get = func(w http.ResponseWriter, r *http.Request) {
						if flood(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"the end"}}`, &peak) == nil {
							<-r.Context().Done()
						}
					}
					connect(t, f.transport(), opts...)
					testwait.Recv(t, reached, "the client to read the flood to its end")
				}
				testwait.WaitFor(t, fmt.Sprintf("%d answers POSTed (the requests within the limit are answered)", limit),
					func() bool { return answers.Load() >= int64(limit) })
				now := int64(runtime.NumGoroutine())
				peak.Store(max(peak.Load(), now))
				t.Logf("%d requests: %d answers POSTed; goroutines %d before, at most %d during, %d after", floodSize, answers.Load(), before, peak.Load(), now)
				if n := answers.Load(); n != int64(limit) {
					t.Errorf("%d answers POSTed, want %d (the limit)", n, limit)
				}
				if want := before + 4*int64(limit) + 32; peak.Load() > want {
					t.Errorf("%d goroutines at the peak, want at most %d (%d before, 4 per answer in flight, 32 more)", peak.Load(), want, before)
				}
			})
		}
	}
}

// The same over a Conn: a server that floods the client with requests
// and reads none of the answers (they wait on the full pipe) gets at most
// the limit of them answered at once, the rest dropped, and the goroutines
// stay within one per answer in flight plus 16.
func TestConnServerRequestFlood(t *testing.T) {
	const limit = 4
	cl, sv := memory.NewPipe(16)
	t.Cleanup(func() { sv.Close() })
	go func() {
		msg, err := sv.Read(context.Background())
		if err != nil {
			return
		}
		m, _, _ := jsonrpc.Decode(msg)
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.Method != "initialize" {
			t.Errorf("first message %s, want initialize", msg)
			return
		}
		sv.Write(context.Background(), []byte(`{"jsonrpc":"2.0","id":`+req.ID.String()+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"flood","version":"1"}}}`))
		for i := range floodSize {
			if sv.Write(context.Background(), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"flood-%d","method":"ping"}`, i))) != nil {
				return
			}
		}
		sv.Write(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"the end"}}`))
	}()
	reached := make(chan struct{}, 1)
	before := runtime.NumGoroutine()
	connect(t, &client.Conn{Conn: cl}, legacy(), client.WithLimits(client.Limits{MaxServerRequests: limit}),
		client.WithLogHandler(func(client.LogMessage) { reached <- struct{}{} }))
	testwait.Recv(t, reached, "the client to read the flood to its end")
	now := runtime.NumGoroutine()
	t.Logf("%d requests: goroutines %d before, %d after", floodSize, before, now)
	if want := before + limit + 16; now > want {
		t.Errorf("%d goroutines, want at most %d (%d before, one per answer in flight, 16 more)", now, want, before)
	}
}
