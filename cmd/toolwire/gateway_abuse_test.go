package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Abuse by callers without credentials, against the real binary: bodies
// declared large and sent slowly, and initialize floods. The limits are the
// defaults (transport/streamable) the binary applies when the config has
// no limits section.

// guestGateway starts a gateway with one upstream (one, `toolwire serve
// --stdio`), the API key alice allowed everything and, when guest is set,
// a persona admitting callers without credentials to one__echo; it returns
// the gateway and alice's key.
func guestGateway(t *testing.T, guest bool) (*gatewayProc, string) {
	t.Helper()
	keys, auth := apiKeys(t, "alice")
	personas := `
personas:
  everyone:
    identities: [alice]
    tools: {allow: ["*"]}
`
	if guest {
		personas += `  guest:
    anonymous: true
    tools: {allow: [one__echo]}
`
	}
	cfg := writeConfig(t, t.TempDir(), auth+stdioUpstreams(testenv.Toolwire(t), "one")+personas)
	return startGateway(t, "--config", cfg, "--watch-interval", "0"), keys[0]
}

// keyedEcho opens a 2025-era session at url with key and calls one__echo
// in it calls times in a row, failing the test unless every call is
// answered with its message.
func keyedEcho(t *testing.T, url, key string, calls int) {
	t.Helper()
	c := connectAs(t, url, key, mcp.EraLegacy)
	for i := range calls {
		msg := fmt.Sprintf("keyed %d", i)
		res, err := c.CallTool(testwait.Context(t), "one__echo", map[string]any{"message": msg})
		if err != nil || res.IsError || !strings.Contains(testmcp.Text(res), msg) {
			t.Fatalf("the key holder's call %d: %+v %v", i, res, err)
		}
	}
}

// declaredBody is what each slow caller declares (Content-Length), the
// largest body the gateway takes (streamable.DefaultMaxBodyBytes).
const declaredBody = streamable.DefaultMaxBodyBytes

// slowEnd is how the gateway ended a slow body: its answer's status and
// body, or the error reading one (the connection closed without an answer).
type slowEnd struct {
	status int
	body   string
	err    error
}

// holdSlowBody connects to the MCP endpoint u from the loopback address
// from, without credentials, declares a body of declaredBody bytes and,
// once the gateway reads it (its 100 Continue answers the request's
// Expect), sends one byte and holds. It returns the connection (nil and
// the error if the gateway answered otherwise) and delivers the gateway's
// answer on ended; gone counts the answers.
func holdSlowBody(u *url.URL, from net.IP, gone *atomic.Int32) (net.Conn, <-chan slowEnd, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: from}, Timeout: testwait.Limit}
	nc, err := d.Dial("tcp", u.Host)
	if err != nil {
		return nil, nil, fmt.Errorf("dialling from %v: %w", from, err)
	}
	// A failure bound, never a speed check: the gateway ends the body long before.
	_ = nc.SetDeadline(time.Now().Add(testwait.Limit))
	_, err = fmt.Fprintf(nc, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n",
		u.Path, u.Host, declaredBody)
	br := bufio.NewReader(nc)
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(br, nil)
	}
	if err == nil && resp.StatusCode != http.StatusContinue {
		err = fmt.Errorf("the gateway answered %d before reading the body", resp.StatusCode)
	}
	if err == nil {
		_, err = nc.Write([]byte("{"))
	}
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("slow body from %v: %w", from, err)
	}
	ended := make(chan slowEnd, 1)
	go func() {
		resp, err := http.ReadResponse(br, nil)
		var e slowEnd
		if err != nil {
			e.err = err
		} else {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			e.status, e.body = resp.StatusCode, string(b)
		}
		gone.Add(1)
		ended <- e
	}()
	return nc, ended, nil
}

// TestGatewaySlowDeclaredBodiesSpareKeyedCallers: with a persona admitting
// callers without credentials, 8 (and then 100) of them, each from its own
// loopback address, declare a 4 MiB body, send one byte and hold; while all
// are held, a key holder opens a session and gets 20 of 20 calls answered.
// Each slow body is then ended by the gateway (400 "request body too slow",
// or its connection closed), never completed.
func TestGatewaySlowDeclaredBodiesSpareKeyedCallers(t *testing.T) {
	g, key := guestGateway(t, true)
	u, err := url.Parse(g.url)
	if err != nil {
		t.Fatal(err)
	}
	const calls = 20
	for sub, slow := range []int{8, 100} {
		t.Run(fmt.Sprintf("%d slow bodies", slow), func(t *testing.T) {
			// A round counts once the key holder's calls were all answered
			// before the gateway ended any slow body: on a machine so slow
			// that the gateway's grace (5 s) passed first, it is done again
			// with fresh addresses.
			const rounds = 3
			for round := range rounds {
				var gone atomic.Int32
				type held struct {
					conn  net.Conn
					ended <-chan slowEnd
					err   error
				}
				attackers := make([]held, slow)
				var wg sync.WaitGroup
				for i := range attackers {
					from := net.IPv4(127, byte(10+sub), byte(round), byte(2+i))
					wg.Go(func() {
						a := &attackers[i]
						a.conn, a.ended, a.err = holdSlowBody(u, from, &gone)
					})
				}
				wg.Wait()
				for _, a := range attackers {
					if a.conn != nil {
						t.Cleanup(func() { a.conn.Close() })
					}
				}
				for _, a := range attackers {
					if a.err != nil {
						t.Fatal(a.err)
					}
				}
				keyedEcho(t, g.url, key, calls)
				endedEarly := int(gone.Load())

				statuses := map[string]int{}
				for i, a := range attackers {
					e := testwait.Recv(t, a.ended, fmt.Sprintf("the gateway to end slow body %d", i))
					switch {
					case e.err != nil:
						statuses["closed without an answer"]++
					case e.status == http.StatusBadRequest && strings.Contains(e.body, "request body too slow: 1 bytes received"):
						statuses["400 request body too slow"]++
					case e.status >= 400:
						statuses[fmt.Sprintf("%d %s", e.status, e.body)]++
					default:
						t.Errorf("slow body %d (one byte of %d sent) was answered %d: %s", i, declaredBody, e.status, e.body)
					}
				}
				if endedEarly > 0 {
					t.Logf("round %d: the gateway ended %d of the %d slow bodies before the key holder's %d calls were done; again", round, endedEarly, slow, calls)
					continue
				}
				t.Logf("%d slow %d-byte bodies without credentials held: the key holder's session opened and %d of %d calls answered meanwhile; the slow bodies then ended: %v",
					slow, declaredBody, calls, calls, statuses)
				return
			}
			t.Fatalf("in %d rounds the gateway ended slow bodies before the key holder's calls were done: the machine is too slow for this test", rounds)
		})
	}
}

// floodInitialize is an initialize request of the 2025-11-25 era.
const floodInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`

// initializeFlood sends n initialize requests without credentials to url,
// workers at a time over kept-alive connections, and counts the answers by
// kind: "401 no session" (or 403), "200 session" (each session then told
// notifications/initialized, as a client meaning to use it does, so it is
// not ended as unused) and "503 anonymous limit" (the error naming
// streamable.DefaultMaxAnonymousSessions); anything else under its status
// and body.
func initializeFlood(t *testing.T, url string, n, workers int) map[string]int {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: testwait.Limit}
	post := func(sid, body string) (int, string, string, error) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return 0, "", "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", mcp.LatestLegacyVersion)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b), err
	}
	anonLimit := fmt.Sprintf("too many sessions without credentials: their limit of %d is reached", streamable.DefaultMaxAnonymousSessions)
	var mu sync.Mutex
	counts := map[string]int{}
	count := func(kind string) {
		mu.Lock()
		counts[kind]++
		mu.Unlock()
	}
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range jobs {
				status, sid, body, err := post("", floodInitialize)
				switch {
				case err != nil:
					count("error: " + err.Error())
				case (status == http.StatusUnauthorized || status == http.StatusForbidden) && sid == "":
					count(fmt.Sprintf("%d no session", status))
				case status == http.StatusOK && sid != "":
					if s, _, b, err := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || s != http.StatusAccepted {
						count(fmt.Sprintf("initialized refused: %d %s %v", s, b, err))
					}
					count("200 session")
				case status == http.StatusServiceUnavailable && sid == "" && strings.Contains(body, anonLimit):
					count("503 anonymous limit")
				default:
					count(fmt.Sprintf("%d session %q: %.200s", status, sid, body))
				}
			}
		})
	}
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	testwait.Returns(t, "the flood's workers", wg.Wait)
	return counts
}

// TestGatewayAnonymousInitializeFlood: initialize floods without
// credentials leave a key holder its session. When no persona admits
// callers without credentials, 10,100 of them get 401 and no session; when
// one does, 10,000 of them (each session then used) open
// streamable.DefaultMaxAnonymousSessions (2,500) sessions, all the gateway
// holds, and the rest get 503 naming that limit. Either way a key holder then opens a session and
// has its calls answered.
func TestGatewayAnonymousInitializeFlood(t *testing.T) {
	const workers, calls = 8, 10
	t.Run("no persona admits anonymous", func(t *testing.T) {
		const flood = 10_100
		g, key := guestGateway(t, false)
		counts := initializeFlood(t, g.url, flood, workers)
		t.Logf("%d initialize requests without credentials (no persona admits them): %v", flood, counts)
		if refused := counts["401 no session"] + counts["403 no session"]; refused != flood {
			t.Fatalf("%d of %d anonymous initializes refused without a session: %v", refused, flood, counts)
		}
		keyedEcho(t, g.url, key, calls)
	})
	t.Run("a persona admits anonymous", func(t *testing.T) {
		const flood = 10_000
		g, key := guestGateway(t, true)
		counts := initializeFlood(t, g.url, flood, workers)
		open := gatewayMetric(t, g, "toolwire_gateway_sessions")
		t.Logf("%d initialize requests without credentials (persona guest admits them): %v; sessions open (/metrics): %d", flood, counts, open)
		opened, refused := counts["200 session"], counts["503 anonymous limit"]
		if opened != streamable.DefaultMaxAnonymousSessions || refused != flood-opened || open != opened {
			t.Fatalf("%d anonymous sessions opened (%d open by /metrics) and %d refused naming their limit, want %d and %d: %v",
				opened, open, refused, streamable.DefaultMaxAnonymousSessions, flood-streamable.DefaultMaxAnonymousSessions, counts)
		}
		keyedEcho(t, g.url, key, calls)
	})
}
