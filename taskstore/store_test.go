package taskstore

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// The behaviour suite is storetest.Run, run on both stores by suite_test.go.

func sqliteMaker(t *testing.T, opts ...Option) Store {
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "tasks.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func task(id, owner string) *Record {
	return &Record{
		ID: id, Owner: owner, Status: mcp.TaskWorking,
		ProtocolVersion: "2026-07-28", Method: "tools/call",
		Params: json.RawMessage(`{"name":"slow","arguments":{"n":1}}`),
	}
}
