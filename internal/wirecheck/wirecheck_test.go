package wirecheck_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/wirecheck"
)

// allowed names the decoding calls outside the strict reader that read no
// bytes from the wire, each with the reason. Keep it short: anything a peer
// sent (a request, a response, a notification, metadata fetched over HTTP)
// is decoded by internal/wirejson.
var allowed = map[string]string{}

// TestNoSecondDecoder fails when non-test code decodes JSON with
// encoding/json (or the v2 package directly) outside internal/wirejson,
// unless the allow-list says why those bytes are not wire data.
func TestNoSecondDecoder(t *testing.T) {
	found, err := wirecheck.Find(testenv.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, f := range found {
		if _, ok := allowed[f.Key()]; ok {
			used[f.Key()] = true
			continue
		}
		t.Errorf("%s: decode wire bytes with internal/wirejson (exact member names, no duplicates), or add %q to the allow-list with the reason they are not wire data", f, f.Key())
	}
	for k := range allowed {
		if !used[k] {
			t.Errorf("allow-list entry %q matches no decoding call any more: remove it", k)
		}
	}
}

// TestFindReportsAPlantedDecoder shows the check failing: a gateway file
// that reads request params with encoding/json, under any import name, is
// reported with its file, line and function; the strict reader's own
// package and test files are not.
func TestFindReportsAPlantedDecoder(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gateway/forward.go", `package gateway

import (
	"encoding/json"
	std "encoding/json"
	"strings"

	v2 "github.com/go-json-experiment/json"
)

type Request struct{ Params json.RawMessage }

func (g *Gateway) middleware(req *Request) string {
	var p struct{ Name string `+"`json:\"name\"`"+` }
	_ = json.Unmarshal(req.Params, &p)
	return p.Name
}

func stream(s string) {
	var v any
	_ = std.NewDecoder(strings.NewReader(s)).Decode(&v)
	_ = v2.Unmarshal([]byte(s), &v)
	_, _ = json.Marshal(v) // encoding is not decoding
}
`)
	write("internal/wirejson/wirejson.go", `package wirejson

import "encoding/json"

func Unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
`)
	write("gateway/forward_test.go", `package gateway

import "encoding/json"

func decode(b []byte) { var v any; _ = json.Unmarshal(b, &v) }
`)
	found, err := wirecheck.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, f.String())
	}
	want := []string{
		"gateway/forward.go:15: json.Unmarshal in Gateway.middleware",
		"gateway/forward.go:21: std.NewDecoder in stream",
		"gateway/forward.go:22: v2.Unmarshal in stream",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if k := found[0].Key(); k != "gateway/forward.go:Gateway.middleware" {
		t.Errorf("key %q", k)
	}
}
