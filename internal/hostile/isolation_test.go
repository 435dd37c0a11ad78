package hostile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/stdio"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Isolation: clientsPerEra clients of each era share one server and, since
// every client numbers its requests and progress tokens from the same
// start and makes the same calls in the same order, the same request ids
// and progress tokens. Every call carries the client's secret; the tool
// echoes it in each progress report and in its result. Half the clients
// cancel one of their calls mid-flight while the other half's call with
// the same id is still running, and is only released once every
// cancellation has landed.
const (
	clientsPerEra = 100
	steps         = 3
)

// secretIn is the input of the "secret" tool.
type secretIn struct {
	Secret string `json:"secret"`
	Tag    string `json:"tag"`
	// Mode "" returns at once; "cancel" waits for the call's cancellation;
	// "release" waits for the test to release it.
	Mode string `json:"mode,omitempty"`
}

// served is what the server saw of one call.
type served struct {
	era     mcp.Era
	id      string // the request id
	peer    string // the clientInfo name the request arrived with
	outcome string // "done", "cancelled", "released", or a failure
}

type isoServer struct {
	mu        sync.Mutex
	calls     map[string]*served // by secret + "/" + tag
	cancelled chan string        // secrets of "cancel" calls whose cancellation arrived
	release   chan struct{}      // closed to let "release" calls return
}

// newIsoRig serves newIsoServer's server over Streamable HTTP until the
// test ends, and returns it with a rig whose requests go there.
func newIsoRig(t *testing.T) (*isoServer, *rig) {
	t.Helper()
	iso, srv := newIsoServer(t)
	h := streamable.NewHandler(srv)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.Close() })
	return iso, &rig{ts: ts, hc: &http.Client{Timeout: waitLimit}}
}

func newIsoServer(t *testing.T) (*isoServer, *server.Server) {
	t.Helper()
	iso := &isoServer{calls: map[string]*served{}, cancelled: make(chan string, 2*clientsPerEra), release: make(chan struct{})}
	srv, err := reference.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	err = server.AddTool(srv, &mcp.Tool{Name: "secret", Description: "echoes a secret in its progress and its result"},
		func(ctx context.Context, req *server.CallRequest, in secretIn) (string, error) {
			key := in.Secret + "/" + in.Tag
			rec := &served{era: req.Peer.Era, id: req.ID.String(), peer: req.Peer.ClientInfo.Name}
			iso.mu.Lock()
			if iso.calls[key] != nil {
				rec.outcome = "served twice"
			}
			iso.calls[key] = rec
			iso.mu.Unlock()
			set := func(o string) {
				iso.mu.Lock()
				if rec.outcome == "" {
					rec.outcome = o
				}
				iso.mu.Unlock()
			}
			n := steps
			if in.Mode != "" {
				n = 1 // one report, then wait
			}
			for i := 1; i <= n; i++ {
				if err := req.Progress(ctx, float64(i), float64(n), fmt.Sprintf("%s step %d", key, i)); err != nil {
					set("progress failed: " + err.Error())
					return "", err
				}
			}
			switch in.Mode {
			case "cancel":
				select {
				case <-ctx.Done():
					set("cancelled")
					iso.cancelled <- in.Secret
					return "", ctx.Err()
				case <-time.After(testwait.Limit):
					set("never cancelled")
					return "", errors.New("never cancelled")
				}
			case "release":
				select {
				case <-ctx.Done():
					set("cancelled")
					return "", ctx.Err()
				case <-iso.release:
					set("released")
				}
			default:
				set("done")
			}
			return key + " done", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return iso, srv
}

// isoClient is one client's view.
type isoClient struct {
	era    mcp.Era
	secret string
	cancel bool // cancels its "hold" call
	c      *client.Client

	mu       sync.Mutex
	progress map[string][]client.Progress // by tag
	problems []string
}

func (ic *isoClient) fail(format string, args ...any) {
	ic.mu.Lock()
	ic.problems = append(ic.problems, fmt.Sprintf(format, args...))
	ic.mu.Unlock()
}

// call makes one call of the secret tool and checks its result; onFirst,
// when set, runs on the first progress report.
func (ic *isoClient) call(ctx context.Context, tag, mode string, onFirst func()) (*mcp.CallToolResult, error) {
	var once sync.Once
	res, err := ic.c.CallTool(ctx, "secret", secretIn{Secret: ic.secret, Tag: tag, Mode: mode},
		client.WithProgress(func(p client.Progress) {
			ic.mu.Lock()
			ic.progress[tag] = append(ic.progress[tag], p)
			ic.mu.Unlock()
			if onFirst != nil {
				once.Do(onFirst)
			}
		}))
	return res, err
}

// checkDone checks a call that ran to its end.
func (ic *isoClient) checkDone(tag string, res *mcp.CallToolResult, err error, wantSteps int) {
	key := ic.secret + "/" + tag
	if err != nil {
		ic.fail("%s: %v", key, err)
		return
	}
	if got := testmcp.Text(res); got != key+" done" {
		ic.fail("%s: result %q, want %q", key, got, key+" done")
	}
	ic.checkProgress(tag, wantSteps, wantSteps)
}

// checkProgress checks that every report of a call carries the client's
// secret and the call's tag, in increasing order, between min and max of
// them.
func (ic *isoClient) checkProgress(tag string, min, max int) {
	key := ic.secret + "/" + tag
	ic.mu.Lock()
	ps := append([]client.Progress(nil), ic.progress[tag]...)
	ic.mu.Unlock()
	if len(ps) < min || len(ps) > max {
		ic.fail("%s: %d progress reports, want %d to %d: %+v", key, len(ps), min, max, ps)
	}
	for i, p := range ps {
		if want := fmt.Sprintf("%s step %d", key, i+1); p.Message != want || p.Progress != float64(i+1) {
			ic.fail("%s: progress report %d is %+v, want %q at %d: it reached the wrong client or call", key, i+1, p, want, i+1)
		}
	}
}

// TestIsolation runs clientsPerEra 2025-11-25 clients and clientsPerEra
// 2026-07-28 clients, all over HTTP on one server, concurrently, with the
// same request ids and progress tokens, and checks that every result and
// progress report a client receives is its own and that a cancellation
// ends only the call of the client that sent it.
func TestIsolation(t *testing.T) {
	iso, srv := newIsoServer(t)
	h := streamable.NewHandler(srv)
	ts := httptest.NewServer(h)
	tr := &http.Transport{MaxIdleConns: 4 * clientsPerEra, MaxIdleConnsPerHost: 4 * clientsPerEra}
	hc := &http.Client{Transport: tr}
	defer func() {
		h.Close()
		ts.Close()
		tr.CloseIdleConnections()
	}()

	var clients []*isoClient
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		for i := range clientsPerEra {
			clients = append(clients, &isoClient{
				era:      era,
				secret:   fmt.Sprintf("%s-%03d-%08x", era, i, uint32(i*2654435761)),
				cancel:   i%2 == 0,
				progress: map[string][]client.Progress{},
			})
		}
	}
	cancellers := 0
	for _, ic := range clients {
		if ic.cancel {
			cancellers++
		}
	}

	// Connect everyone first, so that the calls below run side by side.
	ctx := testwait.Context(t)
	var wg sync.WaitGroup
	connectErr := make(chan error, len(clients))
	for _, ic := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Connect(ctx, &client.HTTP{URL: ts.URL, Client: hc},
				client.WithEra(ic.era), client.WithClientInfo(mcp.Implementation{Name: ic.secret, Version: "1"}),
				client.WithTimeout(testwait.Limit))
			if err != nil {
				connectErr <- fmt.Errorf("%s: connect: %w", ic.secret, err)
				return
			}
			ic.c = c
		}()
	}
	wg.Wait()
	close(connectErr)
	for err := range connectErr {
		t.Fatal(err)
	}
	defer func() {
		for _, ic := range clients {
			ic.c.Close()
		}
	}()
	if n := h.SessionCount(); n != clientsPerEra {
		t.Errorf("%d sessions open, want %d (one per 2025-era client)", n, clientsPerEra)
	}

	// Phase 1: a call with progress, everyone at once. Phase 2: the hold
	// call; cancellers cancel it on its first progress report while the
	// others' call with the same id waits for the release, which comes
	// once every cancellation has reached the server. Phase 3: two calls
	// at once per client, after the cancellation, on the same connection.
	var holding sync.WaitGroup // every hold call has reported progress
	holding.Add(len(clients))
	allHeld := make(chan struct{})
	for _, ic := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := ic.call(ctx, "first", "", nil)
			ic.checkDone("first", res, err, steps)

			if ic.cancel {
				// Cancel only once every client's call with this id is
				// running, so that a cancellation that leaked would hit one.
				cctx, cancel := context.WithCancel(ctx)
				res, err := ic.call(cctx, "hold", "cancel", func() {
					holding.Done()
					go func() { <-allHeld; cancel() }()
				})
				cancel()
				if !errors.Is(err, context.Canceled) {
					ic.fail("%s/hold: cancelled call ended with %v (result %q), want context.Canceled", ic.secret, err, testmcp.Text(res))
				}
				ic.checkProgress("hold", 1, 1)
			} else {
				res, err := ic.call(ctx, "hold", "release", holding.Done)
				ic.checkDone("hold", res, err, 1)
			}

			var pair sync.WaitGroup
			for _, tag := range []string{"then-a", "then-b"} {
				pair.Add(1)
				go func() {
					defer pair.Done()
					res, err := ic.call(ctx, tag, "", nil)
					ic.checkDone(tag, res, err, steps)
				}()
			}
			pair.Wait()
		}()
	}

	// Once every hold call runs, let the cancellers cancel; once every
	// cancellation has reached the server, release the others.
	func() {
		timeout := time.After(testwait.Limit)
		waited := make(chan struct{})
		go func() { holding.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-timeout:
			t.Errorf("not every hold call reported progress")
		}
		close(allHeld)
		for range cancellers {
			select {
			case <-iso.cancelled:
			case <-timeout:
				t.Errorf("only some cancellations reached the server")
				return
			}
		}
	}()
	close(iso.release)
	wg.Wait()

	for _, ic := range clients {
		for _, p := range ic.problems {
			t.Error(p)
		}
	}
	checkServed(t, iso, clients)
}

// checkServed checks the server's side: every call arrived with its own
// client's identity, ended as its client meant, and the clients of an era
// really used the same request ids.
func checkServed(t *testing.T, iso *isoServer, clients []*isoClient) {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	ids := map[mcp.Era]map[string]map[string]int{} // era, tag, id: clients
	for _, ic := range clients {
		for _, tag := range []string{"first", "hold", "then-a", "then-b"} {
			key := ic.secret + "/" + tag
			s := iso.calls[key]
			if s == nil {
				t.Errorf("%s: the server never saw it", key)
				continue
			}
			if s.peer != ic.secret || s.era != ic.era {
				t.Errorf("%s: served as %s's call in era %v: it reached the wrong session", key, s.peer, s.era)
			}
			want := "done"
			if tag == "hold" {
				want = map[bool]string{true: "cancelled", false: "released"}[ic.cancel]
			}
			if s.outcome != want {
				t.Errorf("%s: ended %q on the server, want %q", key, s.outcome, want)
			}
			if tag == "then-a" || tag == "then-b" {
				tag = "then" // the two concurrent calls take their ids in either order
			}
			if ids[ic.era] == nil {
				ids[ic.era] = map[string]map[string]int{}
			}
			if ids[ic.era][tag] == nil {
				ids[ic.era][tag] = map[string]int{}
			}
			ids[ic.era][tag][s.id]++
		}
	}
	// The point of the test: the calls of an era collide on their ids.
	for era, byTag := range ids {
		for tag, byID := range byTag {
			var list []string
			for id, n := range byID {
				list = append(list, fmt.Sprintf("%s×%d", id, n))
			}
			sort.Strings(list)
			want := 1
			if tag == "then" {
				want = 2
			}
			t.Logf("era %v, call %q: request ids %v", era, tag, list)
			if len(byID) != want {
				t.Errorf("era %v, call %q: the clients used ids %v; the test needs them to share %d id(s)", era, tag, list, want)
			}
		}
	}
}

// outcome returns how the server ended a call of the secret tool ("" while
// it runs) and whether it started.
func (iso *isoServer) outcome(key string) (string, bool) {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	s := iso.calls[key]
	if s == nil {
		return "", false
	}
	return s.outcome, true
}

// waitStarted waits until the server runs a call of the secret tool.
func (iso *isoServer) waitStarted(t *testing.T, key string) {
	t.Helper()
	testwait.WaitFor(t, key+" to start", func() bool { _, ok := iso.outcome(key); return ok })
}

// notCancelling are cancellations that name no running request: the
// running call has the integer id 4. Each must leave it running.
var notCancelling = []string{
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"4"}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4.0}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[4]}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestID":4}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"requestId":5}}`,
	`{"jsonrpc":"2.0","method":"notifications/Cancelled","params":{"requestId":4}}`,
}

const (
	holdCall = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"secret","arguments":{"secret":"s","tag":"t","mode":"%s"}%s}}`
	cancel4  = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`
)

// TestCancelNamesExactID: a notifications/cancelled cancels the request
// whose id it names exactly, "4" is not 4, and a malformed one cancels
// nothing; over 2026-07-28 HTTP, where cancelling is closing the stream,
// no notification cancels anything.
func TestCancelNamesExactID(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		iso, srv := newIsoServer(t)
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		served := make(chan error, 1)
		go func() {
			served <- transport.Serve(context.Background(), stdio.NewConn(inR, outW, 0), srv)
			outW.Close()
		}()
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(outR)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		defer func() {
			inW.Close()
			<-served
		}()
		write := func(s string) {
			t.Helper()
			if _, err := io.WriteString(inW, s+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		next := func() string {
			t.Helper()
			select {
			case l := <-lines:
				return l
			case <-time.After(waitLimit):
				t.Fatal("no reply")
				return ""
			}
		}
		write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"s","version":"1"}}}`)
		next()
		write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		write(fmt.Sprintf(holdCall, "cancel", `,"_meta":{"progressToken":"tok"}`))
		if l := next(); !strings.Contains(l, `"progressToken":"tok"`) {
			t.Fatalf("want the call's progress first, got %s", l)
		}
		for i, n := range notCancelling {
			write(n)
			write(fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, i))
			if l := next(); l != fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","result":{}}`, i) {
				t.Fatalf("after %s: got %s, want the ping's reply alone", n, l)
			}
			if o, _ := iso.outcome("s/t"); o != "" {
				t.Fatalf("%s ended the call with id 4: %s", n, o)
			}
		}
		write(cancel4)
		select {
		case <-iso.cancelled:
		case <-time.After(waitLimit):
			t.Fatal("the cancellation naming 4 did not cancel the call")
		}
		write(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)
		if l := next(); l != `{"jsonrpc":"2.0","id":"last","result":{}}` {
			t.Fatalf("a cancelled call must get no reply; got %s", l)
		}
	})

	t.Run("http-2025-11-25", func(t *testing.T) {
		iso, r := newIsoRig(t)
		init := r.post(t, legacyK, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"s","version":"1"}}}`, nil)
		r.session = init.header.Get("Mcp-Session-Id")
		if init.status != http.StatusOK || r.session == "" {
			t.Fatalf("initialize: %d %s", init.status, init.body)
		}
		r.post(t, legacyK, http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		call := make(chan httpReply, 1)
		go func() {
			rep, err := r.send(legacyK, http.MethodPost, fmt.Sprintf(holdCall, "cancel", `,"_meta":{"progressToken":"tok"}`), nil)
			if err != nil {
				rep.body = err.Error()
			}
			call <- rep
		}()
		iso.waitStarted(t, "s/t")
		for _, n := range notCancelling {
			if rep := r.post(t, legacyK, http.MethodPost, n, nil); rep.status != http.StatusAccepted || rep.body != "" {
				t.Fatalf("%s: %d %q, want 202 and no body", n, rep.status, rep.body)
			}
			if rep := r.post(t, legacyK, http.MethodPost, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`, nil); rep.body != `{"jsonrpc":"2.0","id":"ping","result":{}}` {
				t.Fatalf("ping: %d %s", rep.status, rep.body)
			}
			if o, _ := iso.outcome("s/t"); o != "" {
				t.Fatalf("%s ended the call with id 4: %s", n, o)
			}
		}
		if rep := r.post(t, legacyK, http.MethodPost, cancel4, nil); rep.status != http.StatusAccepted {
			t.Fatalf("cancel: %d %s", rep.status, rep.body)
		}
		select {
		case <-iso.cancelled:
		case <-time.After(waitLimit):
			t.Fatal("the cancellation naming 4 did not cancel the call")
		}
		select {
		case rep := <-call:
			// The POST's stream ends with the progress report and no response.
			if rep.status != http.StatusOK || rep.header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("cancelled call: %d %q %s", rep.status, rep.header.Get("Content-Type"), rep.body)
			}
			for _, m := range sseMessages(rep.body) {
				if !strings.Contains(m, `"method":"notifications/progress"`) {
					t.Fatalf("a cancelled call must get no response; its stream carried %s", m)
				}
			}
		case <-time.After(waitLimit):
			t.Fatal("the cancelled call's POST never ended")
		}
	})

	t.Run("http-2026-07-28", func(t *testing.T) {
		iso, r := newIsoRig(t)
		modern := func(req *http.Request) {
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "secret")
		}
		call := make(chan httpReply, 1)
		go func() {
			rep, err := r.send(modernK, http.MethodPost, fmt.Sprintf(holdCall, "release", `,"_meta":{`+modernMembers+`}`), modern)
			if err != nil {
				rep.body = err.Error()
			}
			call <- rep
		}()
		iso.waitStarted(t, "s/t")
		for _, n := range append(notCancelling, cancel4) {
			rep := r.post(t, modernK, http.MethodPost, n, func(req *http.Request) { req.Header.Set("Mcp-Method", "notifications/cancelled") })
			if rep.status != http.StatusAccepted || rep.body != "" {
				t.Fatalf("%s: %d %q, want 202 and no body", n, rep.status, rep.body)
			}
			if o, _ := iso.outcome("s/t"); o != "" {
				t.Fatalf("%s ended a stateless call with id 4: %s", n, o)
			}
		}
		close(iso.release)
		select {
		case rep := <-call:
			if rep.status != http.StatusOK || rep.header.Get("Content-Type") != "application/json" || checkReply(rep.body, ok(4, "s/t done"), modernK) != nil {
				t.Fatalf("released call: %d %s", rep.status, rep.body)
			}
		case <-time.After(waitLimit):
			t.Fatal("the released call never ended")
		}
		if o, _ := iso.outcome("s/t"); o != "released" {
			t.Fatalf("the call ended %q, want released", o)
		}
	})
}
