package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// outbox collects the messages a session sends outside any request.
type outbox struct {
	mu   sync.Mutex
	msgs []jsonrpc.Message
}

func (o *outbox) Send(_ context.Context, m jsonrpc.Message) error {
	o.mu.Lock()
	o.msgs = append(o.msgs, m)
	o.mu.Unlock()
	return nil
}

func (o *outbox) methods() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, m := range o.msgs {
		if n, ok := m.(*jsonrpc.Notification); ok {
			out = append(out, n.Method)
		}
	}
	return out
}

var idSeq int64

// request serves method on ss and returns the response.
func request(t *testing.T, ss jsonrpc.Session, method string, params any) *jsonrpc.Response {
	t.Helper()
	idSeq++
	var raw json.RawMessage
	if params != nil {
		raw, _ = json.Marshal(params)
	}
	return ss.HandleRequest(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(idSeq), Method: method, Params: raw}, &outbox{})
}

// stateServer is a test server with a resource, so that it serves
// resources/subscribe.
func stateServer(t *testing.T, opts ...server.Option) *server.Server {
	t.Helper()
	s := newTestServer(t, opts...)
	if err := server.AddResource(s, &mcp.Resource{URI: "file:///a", Name: "a"}, func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// establish initializes ss as a 2025-11-25 client would.
func establish(t *testing.T, ss jsonrpc.Session) {
	t.Helper()
	r := request(t, ss, "initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"roots": map[string]any{}}, "clientInfo": map[string]any{"name": "c", "version": "1"}})
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	ss.HandleNotification(context.Background(), &jsonrpc.Notification{Method: "notifications/initialized"})
}

// TestSnapshotResumesElsewhere: a session established on one server serves
// on another from its snapshot: no second initialize, the same peer, log
// level and subscriptions; every change moves StateRevision.
func TestSnapshotResumesElsewhere(t *testing.T) {
	a, b := stateServer(t), stateServer(t)
	ss := a.NewSession(&outbox{})
	if _, err := ss.Snapshot(); !errors.Is(err, server.ErrNotEstablished) {
		t.Fatalf("snapshot before initialize: %v", err)
	}
	rev := ss.StateRevision()
	moved := func(what string) {
		t.Helper()
		if r := ss.StateRevision(); r == rev {
			t.Errorf("%s did not change the state revision", what)
		} else {
			rev = r
		}
	}
	establish(t, ss)
	moved("initialize")
	if r := request(t, ss, "logging/setLevel", map[string]any{"level": "warning"}); r.Error != nil {
		t.Fatal(r.Error)
	}
	moved("logging/setLevel")
	for _, uri := range []string{"file:///b", "file:///a"} {
		if r := request(t, ss, "resources/subscribe", map[string]any{"uri": uri}); r.Error != nil {
			t.Fatal(r.Error)
		}
	}
	moved("resources/subscribe")
	request(t, ss, "tools/list", nil)
	if ss.StateRevision() != rev {
		t.Error("tools/list changed the state revision")
	}
	snap, err := ss.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"version":"2025-11-25","clientInfo":{"name":"c","version":"1"},"capabilities":{"roots":{}},"ready":true,"logLevel":"warning","subscriptions":["file:///a","file:///b"]}`; string(snap) != want {
		t.Errorf("snapshot %s\nwant     %s", snap, want)
	}

	out := &outbox{}
	rs, err := b.ResumeSession(snap, out)
	if err != nil {
		t.Fatal(err)
	}
	resumed := rs.(*server.Session)
	if p := resumed.Peer(); p.ProtocolVersion != "2025-11-25" || p.ClientInfo.Name != "c" || !p.ClientCapabilities.Has("roots") {
		t.Errorf("resumed peer %+v", p)
	}
	if resumed.LogLevel() != mcp.LevelWarning {
		t.Errorf("resumed log level %q", resumed.LogLevel())
	}
	if r := request(t, resumed, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}}); r.Error != nil || !strings.Contains(string(r.Result), `"sum":5`) {
		t.Errorf("tools/call on the resumed session: %v %s", r.Error, r.Result)
	}
	if r := request(t, resumed, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "c", "version": "1"}}); r.Error == nil {
		t.Error("a resumed session took a second initialize")
	}
	b.NotifyResourceUpdated("file:///a")
	b.NotifyResourceUpdated("file:///zzz")
	testwait.WaitFor(t, "a notification to the resumed session", func() bool { return len(out.methods()) > 0 })
	if got := out.methods(); len(got) != 1 || got[0] != "notifications/resources/updated" {
		t.Errorf("the resumed session was told %v, want one update (of file:///a)", got)
	}
	again, err := resumed.Snapshot()
	if err != nil || string(again) != string(snap) {
		t.Errorf("the resumed session's snapshot %s, %v", again, err)
	}
}

// TestApplySnapshot: a copy of the session brought up to date with a
// later snapshot takes its log level and subscriptions; a snapshot of
// another session is refused.
func TestApplySnapshot(t *testing.T) {
	a, b := stateServer(t), stateServer(t)
	ss := a.NewSession(&outbox{})
	establish(t, ss)
	snap, _ := ss.Snapshot()
	copyOnB, err := b.ResumeSession(snap, &outbox{})
	if err != nil {
		t.Fatal(err)
	}
	request(t, ss, "logging/setLevel", map[string]any{"level": "error"})
	request(t, ss, "resources/subscribe", map[string]any{"uri": "file:///x"})
	later, _ := ss.Snapshot()
	st := copyOnB.(jsonrpc.StatefulSession)
	rev := st.StateRevision()
	if err := st.ApplySnapshot(later); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Snapshot(); string(got) != string(later) || st.StateRevision() == rev {
		t.Errorf("after ApplySnapshot: %s (revision %d → %d), want %s", got, rev, st.StateRevision(), later)
	}
	other := a.NewSession(&outbox{})
	r := request(t, other, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "someone-else", "version": "9"}})
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	foreign, _ := other.Snapshot()
	if err := st.ApplySnapshot(foreign); err == nil {
		t.Error("a snapshot of another session was applied")
	}
}

// TestResumeSessionRefusesBadSnapshots: damaged snapshots, revisions the
// server does not speak and snapshots past its limits are errors.
func TestResumeSessionRefusesBadSnapshots(t *testing.T) {
	s := stateServer(t, server.WithLimits(server.Limits{MaxSubscriptions: 2, MaxURILength: 16}))
	good := `{"version":"2025-11-25","clientInfo":{"name":"c","version":"1"},"capabilities":{}`
	for name, snap := range map[string]string{
		"empty":                  ``,
		"not JSON":               `{"version":`,
		"an array":               `[]`,
		"unknown member":         good + `,"admin":true}`,
		"a member in caps case":  `{"Version":"2025-11-25","clientInfo":{"name":"c","version":"1"},"capabilities":{}}`,
		"duplicate member":       good + `,"version":"2025-06-18"}`,
		"a 2026 revision":        `{"version":"2026-07-28","clientInfo":{"name":"c","version":"1"},"capabilities":{}}`,
		"an unknown revision":    `{"version":"1999-01-01","clientInfo":{"name":"c","version":"1"},"capabilities":{}}`,
		"no revision":            `{"clientInfo":{"name":"c","version":"1"},"capabilities":{}}`,
		"a bad log level":        good + `,"logLevel":"loud"}`,
		"too many subscriptions": good + `,"subscriptions":["a:1","a:2","a:3"]}`,
		"a long URI":             good + `,"subscriptions":["file:///0123456789abcdef"]}`,
		"an empty URI":           good + `,"subscriptions":[""]}`,
		"huge":                   good + `,"logLevel":"` + strings.Repeat("x", server.MaxSnapshotSize) + `"}`,
	} {
		if _, err := s.ResumeSession([]byte(snap), &outbox{}); err == nil {
			t.Errorf("%s: resumed", name)
		}
	}
	if _, err := s.ResumeSession([]byte(good+`,"subscriptions":["a:1","a:2"]}`), &outbox{}); err != nil {
		t.Errorf("a snapshot at the limits: %v", err)
	}
}

// FuzzResumeSession: any bytes resume or fail with an error; a resumed
// session's snapshot resumes again to the same snapshot.
func FuzzResumeSession(f *testing.F) {
	f.Add([]byte(`{"version":"2025-11-25","clientInfo":{"name":"c","version":"1"},"capabilities":{"roots":{}},"ready":true,"logLevel":"warning","subscriptions":["file:///a"]}`))
	f.Add([]byte(`{"version":"2025-03-26","clientInfo":{"name":"","version":""},"capabilities":{}}`))
	f.Add([]byte(`{"version":"2025-11-25","clientInfo":{"name":"c","version":"1"},"capabilities":{"experimental":{"x":{}}},"subscriptions":["a","a"]}`))
	f.Add([]byte(`nope`))
	s := server.New(mcp.Implementation{Name: "fuzz", Version: "1"})
	f.Fuzz(func(t *testing.T, snap []byte) {
		ss, err := s.ResumeSession(snap, nil)
		if err != nil {
			return
		}
		defer ss.Close()
		one, err := ss.(jsonrpc.StatefulSession).Snapshot()
		if err != nil {
			t.Fatalf("a resumed session has no snapshot: %v", err)
		}
		again, err := s.ResumeSession(one, nil)
		if err != nil {
			t.Fatalf("its own snapshot does not resume: %v\n%s", err, one)
		}
		defer again.Close()
		if two, _ := again.(jsonrpc.StatefulSession).Snapshot(); string(two) != string(one) {
			t.Fatalf("snapshots differ:\n%s\n%s", one, two)
		}
	})
}
