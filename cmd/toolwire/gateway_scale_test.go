package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testhttp"
	"github.com/toolwire/toolwire/mcp"
)

// scaleHang bounds every wait of TestGatewayScaleOut: it only stops a
// broken run from hanging, it asserts no timing.
const scaleHang = 30 * time.Second

// Headers of the test's reverse proxy: scalePin sends a request to one
// replica; scaleServed names the replica that answered.
const (
	scalePin    = "X-Scale-Pin"
	scaleServed = "X-Scale-Backend"
)

// TestGatewayScaleOut: two replicas of `toolwire gateway` sharing Redis
// (store.redis) and one PostgreSQL audit trail, behind a round-robin
// reverse proxy, in front of one `toolwire serve` over HTTP: sessions,
// streams, tasks, cancellations and rate limits cross replicas; a replica
// killed mid-stream loses no event; a Redis outage refuses new sessions
// only; the audit trail holds every call of both, in one chain.
func TestGatewayScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis, PostgreSQL and three toolwire processes")
	}
	rds := testenv.Redis(t)
	pg := testenv.Postgres(t)
	dsn := pg.CreateDatabase("scale_audit")
	// As the docs say to write them: secrets come from the environment.
	t.Setenv("TOOLWIRE_SCALE_REDIS_URL", rds.URL())
	t.Setenv("TOOLWIRE_SCALE_DATABASE_URL", dsn)
	up := startServe(t, []string{"XDG_STATE_HOME=" + t.TempDir()}, "--data-dir", "")

	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	prefix := "scale-" + hex.EncodeToString(rnd[:]) + ":"
	config := fmt.Sprintf(`
data_dir: state
upstreams:
  ref:
    url: %s
rate_limits:
  tools: {ref__get-sum: {rate: 1/m, burst: 3}}
audit:
  store: postgres
  postgres: "${TOOLWIRE_SCALE_DATABASE_URL}"
store:
  redis:
    url: "${TOOLWIRE_SCALE_REDIS_URL}"
    prefix: %q
`, up.url, prefix)
	cfgA := writeConfig(t, t.TempDir(), config)
	cfgB := writeConfig(t, t.TempDir(), config)
	// One after the other: the first creates the audit tables.
	ga := scaleGateway(t, cfgA)
	gb := scaleGateway(t, cfgB)
	proxy := newScaleProxy(t, map[string]string{"A": ga.url, "B": gb.url}, "A", "B")
	t.Logf("upstream %s, replica A %s, replica B %s, proxy %s, Redis prefix %s", up.url, ga.url, gb.url, proxy.url, prefix)
	for _, g := range []*gatewayProc{ga, gb} {
		if !strings.Contains(g.log.String(), "state shared with the other replicas through Redis") {
			t.Fatalf("a replica does not say it shares its state:\n%s", g.log.String())
		}
	}

	var expect []scaleExpect // every tools/call a replica answered
	var mu sync.Mutex
	answered := func(replica, tag string, o audit.Outcome) {
		mu.Lock()
		expect = append(expect, scaleExpect{replica, tag, o})
		mu.Unlock()
	}

	// 1. A session opened on A serves on B: no second initialize.
	t.Run("SessionOpenedOnAServedByB", func(t *testing.T) {
		sid, served := scaleOpen(t, proxy.url, "A")
		if served != "A" {
			t.Fatalf("initialize answered by %q, want A", served)
		}
		res, served := scaleCall(t, proxy.url, "B", sid, 2, "ref__echo", map[string]any{"message": "s1-via-proxy-on-B"})
		if served != "B" || res.IsError || !strings.Contains(res.text(), "s1-via-proxy-on-B") {
			t.Fatalf("tools/call through the proxy on B: served by %q: %+v", served, res)
		}
		answered("B", "s1-via-proxy-on-B", audit.OutcomeOK)
		// Straight to B's own URL: B, not the proxy, holds the session now.
		res, _ = scaleCall(t, gb.url, "", sid, 3, "ref__echo", map[string]any{"message": "s1-direct-on-B"})
		if res.IsError || !strings.Contains(res.text(), "s1-direct-on-B") {
			t.Fatalf("tools/call on B's URL: %+v", res)
		}
		answered("B", "s1-direct-on-B", audit.OutcomeOK)
		res, served = scaleCall(t, proxy.url, "", sid, 4, "ref__echo", map[string]any{"message": "s1-round-robin"})
		if res.IsError || !strings.Contains(res.text(), "s1-round-robin") {
			t.Fatalf("tools/call round robin: %+v", res)
		}
		answered(served, "s1-round-robin", audit.OutcomeOK)
		// A session no replica opened is not found anywhere.
		resp := scalePost(t, gb.url, "", "never-opened", scaleCallBody(t, 5, "ref__echo", map[string]any{"message": "x"}, nil, nil), nil)
		if testhttp.ReadBody(t, resp); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("an unknown session on B: status %d, want 404", resp.StatusCode)
		}
		t.Logf("session %s: initialize answered by A; tools/call answered by B (through the proxy and on B's URL) and by %s (round robin), one initialize in all", sid, served)
	})

	// 2. A POST stream dropped on A resumes on B with Last-Event-ID.
	t.Run("StreamResumedOnB", func(t *testing.T) {
		sid, _ := scaleOpen(t, proxy.url, "A")
		const steps = 10
		args := map[string]any{"duration": 5, "steps": steps}
		resp := scalePost(t, ga.url, "", sid, scaleCallBody(t, 7, "ref__trigger-long-running-operation", args, map[string]any{"progressToken": "p-resume"}, nil), nil)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("long call on A: status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		sa := newScaleStream(t, resp)
		prime, ok := sa.next()
		if !ok || prime.ID == "" || prime.Data != "" {
			t.Fatalf("no priming event on A: %+v", prime)
		}
		var onA []scaleEvent
		for len(onA) < 3 {
			e, ok := sa.next()
			if !ok {
				t.Fatalf("A's stream ended after %d events", len(onA))
			}
			if _, isProgress := e.Msg.progress(); !isProgress || e.ID == "" {
				t.Fatalf("event on A: %+v, want progress with an id", e)
			}
			onA = append(onA, e)
		}
		sa.close() // the client drops the connection
		last := onA[len(onA)-1].ID

		rb := scaleGet(t, gb.url, "", sid, last)
		if rb.StatusCode != http.StatusOK {
			t.Fatalf("resume on B: status %d: %s", rb.StatusCode, testhttp.ReadBody(t, rb))
		}
		sb := newScaleStream(t, rb)
		defer sb.close()
		var onB []scaleEvent
		results := 0
		for e, ok := sb.next(); ok; e, ok = sb.next() {
			if e.Data == "" {
				continue
			}
			onB = append(onB, e)
			if e.Msg.isResponse() {
				results++
				break
			}
		}
		// Nothing after the reply.
		if rest, _ := sb.drain(time.Second); len(rest) > 0 {
			for _, e := range rest {
				if e.Msg.isResponse() {
					results++
				}
			}
			t.Errorf("B's stream went on after the reply: %+v", rest)
		}
		if results != 1 {
			t.Fatalf("%d results on B, want exactly 1 (events %+v)", results, onB)
		}
		all := append(append([]scaleEvent{}, onA...), onB...)
		lastP := scaleProgressRun(t, "A then B", all, 1)
		if lastP != steps {
			t.Fatalf("progress ended at %v, want %d: %v", lastP, steps, scaleProgressList(all))
		}
		ids := map[string]bool{prime.ID: true}
		for _, e := range all {
			if ids[e.ID] {
				t.Fatalf("event id %s delivered twice", e.ID)
			}
			ids[e.ID] = true
		}
		reply := onB[len(onB)-1].Msg
		if string(reply.ID) != "7" {
			t.Fatalf("reply for id %s, want 7", reply.ID)
		}
		if r := scaleDecode(t, reply); r.IsError || !strings.Contains(r.text(), "Long running operation completed") {
			t.Fatalf("the result on B: %+v", r)
		}
		answered("A", `"steps":10`, audit.OutcomeOK)
		t.Logf("stream: %d progress events read on A, then %d events on B (replayed and live) ending with the result", len(onA), len(onB))
	})

	// 3. A task created on A is read on B.
	t.Run("TaskCreatedOnAFetchedOnB", func(t *testing.T) {
		sid, _ := scaleOpen(t, proxy.url, "A")
		args := map[string]any{"duration": 1, "steps": 2}
		resp := scalePost(t, ga.url, "", sid, scaleCallBody(t, 11, "ref__trigger-long-running-operation", args, nil, map[string]any{"ttl": 60000}), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("task call on A: status %d: %s", resp.StatusCode, testhttp.ReadBody(t, resp))
		}
		m, _ := scaleReply(t, resp)
		created := scaleDecode(t, m)
		if created.Task == nil || created.Task.TaskID == "" {
			t.Fatalf("no task in A's answer: %s", m.Result)
		}
		id := created.Task.TaskID
		var statuses []string
		deadline := time.Now().Add(scaleHang)
		for {
			resp := scalePost(t, gb.url, "", sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":12,"method":"tasks/get","params":{"taskId":%q}}`, id), nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("tasks/get on B: status %d: %s", resp.StatusCode, testhttp.ReadBody(t, resp))
			}
			m, _ := scaleReply(t, resp)
			got := scaleDecode(t, m)
			if got.TaskID != id {
				t.Fatalf("tasks/get on B: %s", m.Result)
			}
			if len(statuses) == 0 || statuses[len(statuses)-1] != got.Status {
				statuses = append(statuses, got.Status)
			}
			if got.Status == "completed" {
				break
			}
			if got.Status != "working" || time.Now().After(deadline) {
				t.Fatalf("task %s on B: statuses %v", id, statuses)
			}
			time.Sleep(100 * time.Millisecond)
		}
		resp = scalePost(t, proxy.url, "B", sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":13,"method":"tasks/result","params":{"taskId":%q}}`, id), nil)
		if served := resp.Header.Get(scaleServed); resp.StatusCode != http.StatusOK || served != "B" {
			t.Fatalf("tasks/result: status %d, served by %q", resp.StatusCode, served)
		}
		m, _ = scaleReply(t, resp)
		if r := scaleDecode(t, m); r.IsError || !strings.Contains(r.text(), "Long running operation completed") {
			t.Fatalf("tasks/result on B: %s", m.Result)
		}
		answered("A", `"steps":2`, audit.OutcomeOK)
		t.Logf("task %s created on A; statuses seen on B: %v; result fetched on B", id, statuses)
	})

	// 4. A cancellation sent to B stops the call running on A.
	t.Run("CancelOnBStopsCallOnA", func(t *testing.T) {
		sid, _ := scaleOpen(t, proxy.url, "A")
		const steps = 41
		args := map[string]any{"duration": 20.5, "steps": steps}
		resp := scalePost(t, ga.url, "", sid, scaleCallBody(t, "slow-1", "ref__trigger-long-running-operation", args, map[string]any{"progressToken": "p-cancel"}, nil), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("long call on A: status %d: %s", resp.StatusCode, testhttp.ReadBody(t, resp))
		}
		sa := newScaleStream(t, resp)
		defer sa.close()
		var before []scaleEvent
		for len(before) < 2 {
			e, ok := sa.next()
			if !ok {
				t.Fatal("A's stream ended before any progress")
			}
			if _, p := e.Msg.progress(); p {
				before = append(before, e)
			}
		}
		c := scalePost(t, gb.url, "", sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"scale test"}}`, nil)
		if testhttp.ReadBody(t, c); c.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/cancelled on B: status %d", c.StatusCode)
		}
		var after []scaleEvent
		var reply *scaleMsg
		for e, ok := sa.next(); ok; e, ok = sa.next() {
			if e.Data == "" {
				continue
			}
			if e.Msg.isResponse() {
				m := e.Msg
				reply = &m
				break
			}
			after = append(after, e)
		}
		all := append(append([]scaleEvent{}, before...), after...)
		lastP := scaleProgressRun(t, "cancelled call", all, 1)
		if lastP >= steps {
			t.Fatalf("the cancelled call reported all %d steps", steps)
		}
		if reply != nil {
			if reply.Error == nil {
				r := scaleDecode(t, *reply)
				if !r.IsError {
					t.Fatalf("the cancelled call got a result: %s", reply.Result)
				}
			}
		}
		// The call's handler on A returned (the gateway audits a call once
		// its upstream request has ended), and it says why.
		var rec *audit.Record
		waitFor(t, func() bool {
			for _, r := range auditJSONL(t, "--config", cfgA, "--tool", "ref__trigger-long-running-operation") {
				if strings.Contains(string(r.Arguments), `"steps":41`) {
					rec = &r
					return true
				}
			}
			return false
		}, ga)
		if !scaleCancelled(*rec) {
			t.Fatalf("the audit record of the cancelled call: %s %q", rec.Outcome, rec.Error)
		}
		t.Logf("cancelled on B after %d of %d steps on A: A's stream ended with no result (reply: %v); audited as %s %q",
			int(lastP), steps, reply != nil, rec.Outcome, rec.Error)
		answered("A", `"steps":41`, audit.OutcomeCancelled)
	})

	// 5. One rate limit for both replicas.
	t.Run("RateLimitShared", func(t *testing.T) {
		servedBy := map[string]int{}
		for i := 1; i <= 3; i++ {
			status, m, served := scaleModern(t, proxy.url, "", 100+i, "ref__get-sum", map[string]any{"a": 5000 + i, "b": 1})
			if status != http.StatusOK {
				t.Fatalf("call %d: status %d %s", i, status, served)
			}
			r := scaleDecode(t, m)
			if r.IsError || !strings.Contains(r.text(), fmt.Sprint(5001+i)) {
				t.Fatalf("call %d on %s: %+v", i, served, r)
			}
			servedBy[served]++
			answered(served, fmt.Sprintf(`"a":%d`, 5000+i), audit.OutcomeOK)
		}
		if servedBy["A"] == 0 || servedBy["B"] == 0 {
			t.Fatalf("the three calls were not spread over both replicas: %v", servedBy)
		}
		for _, pin := range []string{"A", "B"} {
			status, m, served := scaleModern(t, proxy.url, pin, 110, "ref__get-sum", map[string]any{"a": 5010, "b": 1})
			if status != http.StatusOK || served != pin {
				t.Fatalf("4th call on %s: status %d, served by %s", pin, status, served)
			}
			r := scaleDecode(t, m)
			var retry struct {
				RetryAfterMs *int64 `json:"retryAfterMs"`
			}
			if raw, ok := r.Meta[mcp.MetaRetryGuidance]; ok {
				_ = json.Unmarshal(raw, &retry)
			}
			if !r.IsError || retry.RetryAfterMs == nil || *retry.RetryAfterMs <= 0 {
				t.Fatalf("a call past the shared burst on %s: %s", pin, m.Result)
			}
			answered(pin, `"a":5010`, audit.OutcomeRateLimited)
			t.Logf("past the burst on %s: isError, retryAfterMs %d (%q)", pin, *retry.RetryAfterMs, r.text())
		}
		t.Logf("the burst of 3 was spent on %v", servedBy)
	})

	// 6. A killed mid-stream: the client resumes on B and loses nothing.
	t.Run("ReplicaKilledMidStream", func(t *testing.T) {
		sid, _ := scaleOpen(t, proxy.url, "A")
		const steps = 43
		args := map[string]any{"duration": 21.5, "steps": steps}
		resp := scalePost(t, proxy.url, "A", sid, scaleCallBody(t, 21, "ref__trigger-long-running-operation", args, map[string]any{"progressToken": "p-kill"}, nil), nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get(scaleServed) != "A" {
			t.Fatalf("long call on A: status %d served by %q", resp.StatusCode, resp.Header.Get(scaleServed))
		}
		sa := newScaleStream(t, resp)
		defer sa.close()
		prime, _ := sa.next()
		// The client has handled two progress events when A dies; three
		// more had reached it, unhandled.
		var got []scaleEvent
		for len(got) < 5 {
			e, ok := sa.next()
			if !ok {
				t.Fatal("A's stream ended early")
			}
			got = append(got, e)
		}
		if err := ga.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = ga.cmd.Wait()
		<-ga.done
		// What else A had written before it died, still on the connection.
		tail, ended := sa.drain(scaleHang)
		if !ended {
			t.Fatal("A's stream did not end with A")
		}
		sent := append(append([]scaleEvent{}, got...), tail...)
		lastSent := scaleProgressRun(t, "A's stream", sent, 1)
		handled, lost := sent[:2], sent[2:]
		last := handled[len(handled)-1].ID

		rb := scaleGet(t, proxy.url, "", sid, last)
		if rb.StatusCode != http.StatusOK || rb.Header.Get(scaleServed) != "B" {
			t.Fatalf("resume through the proxy: status %d, served by %q: %s", rb.StatusCode, rb.Header.Get(scaleServed), testhttp.ReadBody(t, rb))
		}
		sb := newScaleStream(t, rb)
		var replay []scaleEvent
		for len(replay) < len(lost) {
			e, ok := sb.next()
			if !ok {
				t.Fatalf("B's stream ended after %d of the %d events A sent after %s", len(replay), len(lost), last)
			}
			if e.Data != "" {
				replay = append(replay, e)
			}
		}
		more, _ := sb.drain(time.Second) // events A stored but had not sent
		replay = append(replay, more...)
		sb.close()
		all := append(append([]scaleEvent{}, handled...), replay...)
		lastReplayed := scaleProgressRun(t, "handled on A, then replayed on B", all, 1)
		if lastReplayed < lastSent {
			t.Fatalf("B replayed up to progress %v; A had sent %v", lastReplayed, lastSent)
		}
		ids := map[string]bool{prime.ID: true}
		for _, e := range all {
			if e.Msg.isResponse() {
				t.Fatalf("a result for a call whose replica died: %+v", e)
			}
			if ids[e.ID] {
				t.Fatalf("event %s twice", e.ID)
			}
			ids[e.ID] = true
		}
		for i, e := range lost {
			if replay[i].ID != e.ID || replay[i].Data != e.Data {
				t.Fatalf("replayed event %d: %+v; A sent %+v", i, replay[i], e)
			}
		}
		t.Logf("A killed mid-stream: it had sent progress 1..%v (the client handled 2); B replayed %d events after event %s, progress %v..%v of %d, none twice, no result",
			lastSent, len(replay), last, len(handled)+1, lastReplayed, steps)

		// The session goes on through B; the proxy sends everything there.
		defer func() {
			proxy.mu.Lock()
			defer proxy.mu.Unlock()
			t.Logf("the proxy took A out after %d refused connection(s); every request since went to B", proxy.failovers)
		}()
		for i := range 4 {
			tag := fmt.Sprintf("s6-after-kill-%d", i)
			res, served := scaleCall(t, proxy.url, "", sid, 30+i, "ref__echo", map[string]any{"message": tag})
			if served != "B" || res.IsError || !strings.Contains(res.text(), tag) {
				t.Fatalf("call %d after A died: served by %q: %+v", i, served, res)
			}
			answered("B", tag, audit.OutcomeOK)
		}
	})

	// 7. Redis stopped and started again, with only B running.
	t.Run("RedisOutage", func(t *testing.T) {
		held, _ := scaleOpen(t, gb.url, "")
		res, _ := scaleCall(t, gb.url, "", held, 2, "ref__echo", map[string]any{"message": "s7-before-outage"})
		if res.IsError {
			t.Fatalf("call before the outage: %+v", res)
		}
		answered("B", "s7-before-outage", audit.OutcomeOK)
		logBefore := len(gb.log.String())

		rds.Stop()
		resp := scalePost(t, proxy.url, "", "", scaleInit, nil)
		body := testhttp.ReadBody(t, resp)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("initialize with Redis down: status %d: %s", resp.StatusCode, body)
		}
		waitFor(t, func() bool {
			return strings.Contains(gb.log.String()[logBefore:], "session store unavailable")
		}, gb)
		for line := range strings.Lines(gb.log.String()[logBefore:]) {
			if strings.Contains(line, "session store unavailable") {
				t.Logf("B's log while Redis is down: %s", strings.TrimSpace(line))
				break
			}
		}
		status, m, served := scaleModern(t, proxy.url, "", 70, "ref__echo", map[string]any{"message": "s7-stateless-during-outage"})
		if status != http.StatusOK || served != "B" {
			t.Fatalf("a 2026-07-28 call with Redis down: status %d %s", status, served)
		}
		if r := scaleDecode(t, m); r.IsError || !strings.Contains(r.text(), "s7-stateless-during-outage") {
			t.Fatalf("a 2026-07-28 call with Redis down: %s", m.Result)
		}
		answered("B", "s7-stateless-during-outage", audit.OutcomeOK)
		res, _ = scaleCall(t, gb.url, "", held, 3, "ref__echo", map[string]any{"message": "s7-held-during-outage"})
		if res.IsError || !strings.Contains(res.text(), "s7-held-during-outage") {
			t.Fatalf("B's own session with Redis down: %+v", res)
		}
		answered("B", "s7-held-during-outage", audit.OutcomeOK)

		rds.Start()
		started := time.Now()
		refused := 0
		deadline := started.Add(scaleHang)
		for {
			resp := scalePost(t, proxy.url, "", "", scaleInit, nil)
			testhttp.ReadBody(t, resp)
			if resp.StatusCode == http.StatusOK && resp.Header.Get("Mcp-Session-Id") != "" {
				break
			}
			if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
				t.Fatalf("initialize after Redis came back: status %d after %d refusals", resp.StatusCode, refused)
			}
			refused++
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("Redis back: new sessions refused for %v more (%d refusals) after Start returned", time.Since(started).Round(time.Millisecond), refused)
		// Redis came back empty (nothing is saved): the session B held is
		// gone there too.
		resp = scalePost(t, gb.url, "", held, scaleCallBody(t, 4, "ref__echo", map[string]any{"message": "s7-gone"}, nil, nil), nil)
		if testhttp.ReadBody(t, resp); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("B's session after Redis restarted empty: status %d, want 404", resp.StatusCode)
		}
		sid, _ := scaleOpen(t, proxy.url, "")
		res, _ = scaleCall(t, proxy.url, "", sid, 2, "ref__echo", map[string]any{"message": "s7-after-outage"})
		if res.IsError {
			t.Fatalf("a call on a session opened after the outage: %+v", res)
		}
		answered("B", "s7-after-outage", audit.OutcomeOK)
	})

	// 8. One audit trail for both replicas.
	t.Run("AuditOneChain", func(t *testing.T) {
		if err := gb.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		_ = gb.cmd.Wait()
		<-gb.done
		out, stderr, code := runToolwire(t, "audit", "verify", "--config", cfgA)
		if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("ok: %d records", len(expect))) {
			t.Errorf("audit verify: exit %d, want ok with %d records\n%s%s", code, len(expect), out, stderr)
		}
		recs := auditJSONL(t, "--config", cfgA)
		used := make([]bool, len(recs))
		perReplica := map[string]int{}
		seqs := map[string][]int64{}
		for _, e := range expect {
			found := false
			for i, r := range recs {
				if !used[i] && r.Method == "tools/call" && strings.Contains(string(r.Arguments), e.tag) && scaleOutcome(r, e.outcome) {
					used[i], found = true, true
					perReplica[e.replica]++
					seqs[e.replica] = append(seqs[e.replica], r.Seq)
					break
				}
			}
			if !found {
				t.Errorf("no audit record for the call on %s tagged %s (%s)", e.replica, e.tag, e.outcome)
			}
		}
		for i, r := range recs {
			if !used[i] {
				t.Errorf("an audit record no call explains: seq %d %s %s %s %s", r.Seq, r.Tool, r.Outcome, r.Arguments, r.Error)
			}
		}
		if perReplica["A"] == 0 || perReplica["B"] == 0 {
			t.Errorf("records per replica: %v", perReplica)
		}
		t.Logf("audit: %d records in one chain for %d calls answered (A %d, seq %v; B %d, seq %v); verify: %s",
			len(recs), len(expect), perReplica["A"], seqs["A"], perReplica["B"], seqs["B"], strings.TrimSpace(out))
	})
}
