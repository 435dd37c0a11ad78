package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/admin"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// Abuse by callers of the real binary that hold something of the gateway's
// for others: input rounds never answered, and wrong admin keys posted at
// once.

// askAnswer is the ask tool's result: the elicitation's action and name.
type askAnswer struct {
	Answer string `json:"answer"`
}

// legacyAskUpstream serves, on a loopback listener, an upstream whose tool
// "ask" asks its caller's name by elicitation and answers with it. It
// speaks the 2025 era only: server/discover, the 2026-07-28 probe, gets
// -32601, so the gateway talks to it in a 2025-11-25 session and asks its
// callers on the call's reply stream. It returns the MCP endpoint's URL.
func legacyAskUpstream(t *testing.T) string {
	t.Helper()
	up := server.New(mcp.Implementation{Name: "ask", Version: "1"})
	err := server.AddTool(up, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) (askAnswer, error) {
		el, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		if err != nil {
			return askAnswer{}, err
		}
		name, _ := el.Content["name"].(string)
		return askAnswer{Answer: el.Action + ":" + name}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return serveMCP(t, streamable.NewHandler(up), func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == http.MethodPost {
			b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(b, &m) == nil && m.Method == mcp.MethodDiscover && len(m.ID) > 0 {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here: a 2025-era server"}}`, m.ID, m.Method)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		next.ServeHTTP(w, r)
	})
}

// gatewayMetric reads the value of a whole-numbered metric without labels
// from the gateway's /metrics.
func gatewayMetric(t *testing.T, g *gatewayProc, name string) int {
	t.Helper()
	_, b := testhttp.Get(t, g.admin+"/metrics")
	for line := range strings.Lines(b) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /metrics:\n%s", name, b)
	return 0
}

// TestGatewayAbandonedRoundsTakeOnlyTheirCallersShare: behind the binary, a
// 2025-era HTTP upstream asks each call's caller a question. Caller a
// (declaring elicitation but never answering; in 2026-07-28 on one
// session, or in 2025-11-25 over 8 sessions, whose client would hold 16
// questions each) makes 1,100 calls: 16 (gateway.DefaultPendingPerCaller)
// wait for it, parked or asked on their streams, and every other one is
// answered, not left waiting, with an error naming the per-caller limit.
// Meanwhile caller b is asked, answers and gets its answer back, in either
// era. The input timeout is an hour (limits.inputs.timeout), so that no
// parked call ends during the test however slow the machine; the shares
// are the defaults.
func TestGatewayAbandonedRoundsTakeOnlyTheirCallersShare(t *testing.T) {
	for _, aEra := range []mcp.Era{mcp.EraModern, mcp.EraLegacy} {
		t.Run(aEra.String(), func(t *testing.T) { abandonedRounds(t, aEra) })
	}
}

func abandonedRounds(t *testing.T, aEra mcp.Era) {
	upURL := legacyAskUpstream(t)
	keys, auth := apiKeys(t, "a", "b")
	keyA, keyB := keys[0], keys[1]
	cfg := writeConfig(t, t.TempDir(), auth+`
limits:
  inputs: {timeout: 1h}
upstreams:
  q:
    url: `+upURL+`
`)
	g := startGateway(t, "--config", cfg, "--watch-interval", "0")
	if !strings.Contains(g.log.String(), "version="+mcp.LatestLegacyVersion) {
		t.Fatalf("the upstream is not spoken to in %s:\n%s", mcp.LatestLegacyVersion, g.log.String())
	}

	var asked atomic.Int32
	sessions := 1
	if aEra == mcp.EraLegacy {
		sessions = 8
	}
	abandoners := make([]*client.Client, sessions)
	for i := range abandoners {
		abandoners[i] = connectKeyed(t, g.url, keyA, client.WithEra(aEra), testmcp.NeverAnswer(t, &asked))
	}
	const calls, workers = 1100, 32
	var refused, returned atomic.Int32
	var mu sync.Mutex
	var other []string
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(func() {
		stop()
		wg.Wait()
	})
	for w := range workers {
		wg.Go(func() {
			for range jobs {
				res, err := abandoners[w%sessions].CallTool(ctx, "q__ask", nil)
				if client.CodeOf(err) == client.CodeToolError && strings.Contains(testmcp.Text(res), "the limit per caller") {
					refused.Add(1)
				} else if ctx.Err() == nil {
					mu.Lock()
					other = append(other, fmt.Sprintf("%+v %v", res, err))
					mu.Unlock()
				}
				returned.Add(1)
			}
		})
	}
	wg.Go(func() {
		defer close(jobs)
		for range calls {
			select {
			case jobs <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	})
	testwait.WaitFor(t, "each of a's calls to park or be answered", func() bool {
		return int(asked.Load()+returned.Load()) == calls
	})
	parked := gatewayMetric(t, g, "toolwire_gateway_pending_inputs")
	mu.Lock()
	t.Logf("caller a (%s), never answering, made %d calls: %d parked (asked; /metrics pending_inputs %d), %d answered with an error naming the per-caller limit, %d otherwise %.300q",
		aEra, calls, asked.Load(), parked, refused.Load(), len(other), other)
	mu.Unlock()
	const share = gateway.DefaultPendingPerCaller
	if asked.Load() != share || parked != share || refused.Load() != calls-share {
		t.Fatalf("%d of a's calls parked (%d pending), %d refused naming the limit; want %d and %d", asked.Load(), parked, refused.Load(),
			share, calls-share)
	}

	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		name := "b in " + era.String()
		b := connectKeyed(t, g.url, keyB, client.WithEra(era),
			client.WithElicitationHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": name}}, nil
			}))
		res, err := b.CallTool(testwait.Context(t), "q__ask", nil)
		if err != nil || !strings.Contains(string(res.StructuredContent), "accept:"+name) {
			t.Fatalf("%s's call while a's are parked: %+v %v", name, res, err)
		}
	}
	if got := gatewayMetric(t, g, "toolwire_gateway_pending_inputs"); got != share || asked.Load() != share {
		t.Fatalf("after b's calls: %d calls pending, a asked %d times; want a's %d parked still", got, asked.Load(), share)
	}
	t.Logf("caller b's calls, one per era, were asked and answered while a's %d calls stayed parked", share)
}

// csrfField is the CSRF token of the admin login form.
var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// adminLogin is one browser of the admin page: a cookie jar and the CSRF
// token of the login form it loaded.
type adminLogin struct {
	c    *http.Client
	csrf string
}

// loadAdminLogin loads the admin login form at base with a fresh cookie jar.
func loadAdminLogin(t *testing.T, base string, tr http.RoundTripper) adminLogin {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Transport: tr, Timeout: testwait.Limit,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(base + "/admin/login")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindSubmatch(b)
	if err != nil || resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET /admin/login: %d %v\n%s", resp.StatusCode, err, b)
	}
	return adminLogin{c: c, csrf: string(m[1])}
}

// post posts a login form, read from body, to base's login page and
// returns the status; with expect the body is sent only once the gateway
// asks for it (Expect: 100-continue).
func (l adminLogin) post(ctx context.Context, base string, body io.Reader, expect bool) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/admin/login", body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	if expect {
		req.Header.Set("Expect", "100-continue")
	}
	resp, err := l.c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// form is the login form giving key.
func (l adminLogin) form(key string) string {
	return url.Values{"key": {key}, "csrf": {l.csrf}}.Encode()
}

// TestGatewayParallelWrongAdminLogins: 60 wrong admin keys posted at once
// from one address to the binary's admin login get the key compared at
// most the burst (admin.DefaultLoginBurst, 5) times; the other 55 get 429
// without their body being read. Each login's body is held until the
// gateway has either refused it or asked for it (100 Continue), so no
// order of arrival lets more through. Once a failed login comes back (one
// every admin.DefaultLoginEvery) the right key logs in.
func TestGatewayParallelWrongAdminLogins(t *testing.T) {
	adminKey, _ := policy.NewKey()
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
admin:
  key_hash: %q
upstreams: {}
`, policy.HashKey(adminKey)))
	g := startGateway(t, "--config", cfg, "--watch-interval", "0")
	const parallel = 60
	// The transport sends a body only once the gateway asks for it.
	tr := &http.Transport{ExpectContinueTimeout: testwait.Limit, MaxIdleConnsPerHost: parallel}
	t.Cleanup(tr.CloseIdleConnections)
	logins := make([]adminLogin, parallel)
	for i := range logins {
		logins[i] = loadAdminLogin(t, g.admin, tr)
	}

	var continued, answered atomic.Int32
	statuses := make([]int, parallel)
	errs := make([]error, parallel)
	bodies := make([]*io.PipeWriter, parallel)
	asked := make([]atomic.Bool, parallel)
	var wg sync.WaitGroup
	start := time.Now()
	for i, l := range logins {
		pr, pw := io.Pipe()
		bodies[i] = pw
		ctx := httptrace.WithClientTrace(testwait.Context(t), &httptrace.ClientTrace{Got100Continue: func() {
			asked[i].Store(true)
			continued.Add(1)
		}})
		wg.Go(func() {
			statuses[i], errs[i] = l.post(ctx, g.admin, pr, true)
			answered.Add(1)
		})
	}
	// Every attempt has been refused or has had its body asked for
	// before any key is sent: all have passed the limiter.
	waitFor(t, func() bool { return continued.Load()+answered.Load() == parallel }, g)
	// A failed login comes back every DefaultLoginEvery: on a machine slow
	// enough for that to pass before all were in, one more may be compared.
	refills := int(time.Since(start) / admin.DefaultLoginEvery)
	refusedUnread := int(answered.Load())
	for i, pw := range bodies {
		if asked[i].Load() {
			go func() {
				_, _ = io.WriteString(pw, logins[i].form("twk_wrong"))
				pw.Close()
			}()
		} else {
			pw.Close()
		}
	}
	testwait.Returns(t, "the parallel logins", wg.Wait)

	checked, limited := 0, 0
	for i, s := range statuses {
		switch {
		case errs[i] != nil:
			t.Errorf("login %d: %v", i, errs[i])
		case s == http.StatusUnauthorized && asked[i].Load():
			checked++
		case s == http.StatusTooManyRequests && !asked[i].Load():
			limited++
		default:
			t.Errorf("login %d with a wrong key (body asked for: %v) got %d", i, asked[i].Load(), s)
		}
	}
	waitFor(t, func() bool { return strings.Count(g.log.String(), `msg="admin: failed login"`) >= checked }, g)
	logged := strings.Count(g.log.String(), `msg="admin: failed login"`)
	t.Logf("%d wrong admin keys posted at once: %d compared (401, logged %d), %d refused before their body was read (429); %d refills possible meanwhile",
		parallel, checked, logged, limited, refills)
	if checked < admin.DefaultLoginBurst || checked > admin.DefaultLoginBurst+refills || limited != parallel-checked ||
		refusedUnread != limited || logged != checked {
		t.Fatalf("%d keys compared (%d logged), %d refused (%d before any body was sent); want %d compared and %d refused",
			checked, logged, limited, refusedUnread, admin.DefaultLoginBurst, parallel-admin.DefaultLoginBurst)
	}

	// Out of failed logins, even the right key is refused until one comes
	// back; then it logs in.
	l := loadAdminLogin(t, g.admin, tr)
	waits := 0
	waitFor(t, func() bool {
		s, err := l.post(testwait.Context(t), g.admin, strings.NewReader(l.form(adminKey)), false)
		if err != nil {
			t.Fatal(err)
		}
		if s == http.StatusTooManyRequests {
			waits++
			return false
		}
		if s != http.StatusSeeOther {
			t.Fatalf("the right admin key: %d", s)
		}
		return true
	}, g)
	waitFor(t, func() bool { return strings.Contains(g.log.String(), `msg="admin: login"`) }, g)
	t.Logf("the right key was refused (429) %d times, then logged in (303) once a failed login came back", waits)
}
