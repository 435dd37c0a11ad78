package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/taskstore"
)

// TestSnapshotReadExactly: a session snapshot (another replica's bytes) is
// read by the strict reader at every depth: a member named twice, or a case
// variant of a member, anywhere in it is refused, as is a member a snapshot
// never has.
func TestSnapshotReadExactly(t *testing.T) {
	s := New(mcp.Implementation{Name: "s", Version: "1"})
	good := `{"version":"2025-11-25","clientInfo":{"name":"c","version":"1"},"capabilities":{"roots":{}}}`
	if _, err := s.decodeState([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for snap, want := range map[string]string{
		`{"version":"2025-11-25","clientInfo":{"name":"c","Name":"admin","version":"1"},"capabilities":{}}`:                         "case-sensitive",
		`{"version":"2025-11-25","clientInfo":{"name":"c","version":"1"},"capabilities":{"roots":{},"roots":{"listChanged":true}}}`: `duplicate member name "roots"`,
		`{"version":"2025-11-25","clientInfo":{"name":"c","version":"1"},"capabilities":{},"admin":true}`:                           `unknown member "admin"`,
	} {
		if _, err := s.decodeState([]byte(snap)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("snapshot %s: %v, want an error saying %q", snap, err, want)
		}
	}
}

// TestStampRefusesAmbiguousResult: a result the server would send with a
// member named twice is an error, not sent as the reading that keeps the
// last one.
func TestStampRefusesAmbiguousResult(t *testing.T) {
	s := New(mcp.Implementation{Name: "s", Version: "1"})
	for _, raw := range []string{
		`{"content":[],"isError":false,"isError":true}`,
		`{"content":[],"_meta":{"a":1,"a":2}}`,
	} {
		if out, err := s.stamp(json.RawMessage(raw), mcp.ResultComplete, false); err == nil {
			t.Errorf("stamp(%s) = %s, want an error", raw, out)
		}
	}
	out, err := s.stamp(json.RawMessage(`{"content":[],"_meta":{"a":1}}`), mcp.ResultComplete, false)
	if err != nil || !bytes.Contains(out, []byte(mcp.MetaServerInfo)) {
		t.Errorf("a plain result: %s, %v", out, err)
	}
}

// TestTaskRecordReadExactly: a stored task's error is read by the strict
// reader; one naming a member twice is not taken for either reading.
func TestTaskRecordReadExactly(t *testing.T) {
	rec := &taskstore.Record{Error: json.RawMessage(`{"code":-32602,"message":"bad","code":-32600}`), StatusMessage: "it failed"}
	if te := taskErrorOf(rec); te.Message != "it failed" {
		t.Errorf("task error %+v, want the status message in an internal error", te)
	}
	if _, err := setMeta(json.RawMessage(`{"_meta":{"k":1,"k":2}}`), "x", 1); err == nil {
		t.Error("setMeta accepted a _meta naming a member twice")
	}
}

// TestCapabilityDeclaredWronglyIsLeftOut: a capability a method declares
// with a value the strict reader refuses is left out and logged; the other
// capabilities are still declared.
func TestCapabilityDeclaredWronglyIsLeftOut(t *testing.T) {
	var log bytes.Buffer
	s := New(mcp.Implementation{Name: "s", Version: "1"}, WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	h := func(context.Context, *Request, *struct{}) (*struct{}, error) { return &struct{}{}, nil }
	if err := AddMethod(s, MethodSpec{Name: "x/list", Capability: "logging", CapabilityValue: json.RawMessage(`{"a":1,"a":2}`)}, h); err != nil {
		t.Fatal(err)
	}
	if err := AddMethod(s, MethodSpec{Name: "y/complete", Capability: "completions"}, h); err != nil {
		t.Fatal(err)
	}
	caps := s.capabilities(mcp.EraLegacy)
	if caps.Logging != nil || caps.Completions == nil {
		t.Errorf("capabilities %+v: want completions declared and logging left out", caps)
	}
	if !strings.Contains(log.String(), "capability=logging") {
		t.Errorf("log %q does not name the capability", log.String())
	}
}
