package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJUnitReport: the report has one testsuite per file and one testcase
// per test, in order, with counts and times in seconds; a failed flow is a
// <failure> (type: the error code), one that could not run an <error>.
// Text that XML cannot hold as is (markup characters, control characters
// such as a terminal's escape sequences, invalid UTF-8) is escaped or
// replaced, so the file always parses; the file is created with its
// directory and replaced whole.
func TestJUnitReport(t *testing.T) {
	started := time.Date(2026, 11, 24, 1, 2, 3, 0, time.UTC)
	files := []junitFile{
		{Path: "flows/a.flow.yaml", Started: started, Tests: []junitTest{
			{Name: "passes", Line: 1, Duration: 1500 * time.Millisecond},
			{Name: "fails", Line: 9, Duration: 250 * time.Millisecond, Failed: true, Type: "ERR_ASSERTION",
				Message: `ERR_ASSERTION: expected "<a & b>" to equal 1`,
				Body:    "ERR_ASSERTION: boom\nstep: check at flows/a.flow.yaml:12:5\nexpected: \"<a & b>\"\nactual:   \x1b[31mred\x1b[0m \xff\n"},
		}},
		{Path: "flows/broken.flow.yaml", Tests: []junitTest{
			{Name: "broken.flow.yaml", Errored: true, Type: "load", Message: "does not pass the check", Body: "flows/broken.flow.yaml:1:1: no steps\n"},
		}},
		{Path: "flows/empty.flow.yaml"},
	}
	path := filepath.Join(t.TempDir(), "reports", "nested", "junit.xml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("an older, longer report that must be replaced entirely"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeJUnit(path, files, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), xml.Header) || strings.Contains(string(data), "older") {
		t.Fatalf("report:\n%s", data)
	}
	if bytes.IndexByte(data, 0x1b) >= 0 || bytes.IndexByte(data, 0xff) >= 0 {
		t.Errorf("control characters or invalid UTF-8 left in the report:\n%q", data)
	}
	var doc junitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the report does not parse: %v\n%s", err, data)
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Errors != 1 || len(doc.Suites) != 3 {
		t.Fatalf("totals: %+v", doc)
	}
	a := doc.Suites[0]
	if a.Name != "flows/a.flow.yaml" || a.Tests != 2 || a.Failures != 1 || len(a.Cases) != 2 {
		t.Fatalf("suite a: %+v", a)
	}
	if c := a.Cases[0]; c.Name != "passes" || c.Classname != "flows/a.flow.yaml" || c.Time != "1.500" || c.Failure != nil || c.Error != nil {
		t.Errorf("passing case: %+v", c)
	}
	c := a.Cases[1]
	if c.Name != "fails" || c.Time != "0.250" || c.Failure == nil || c.Error != nil {
		t.Fatalf("failing case: %+v", c)
	}
	if c.Failure.Type != "ERR_ASSERTION" || c.Failure.Message != `ERR_ASSERTION: expected "<a & b>" to equal 1` {
		t.Errorf("failure attributes: %+v", c.Failure)
	}
	if !strings.Contains(c.Failure.Body, "step: check at flows/a.flow.yaml:12:5\nexpected: \"<a & b>\"\n") ||
		!strings.Contains(c.Failure.Body, "red") {
		t.Errorf("failure body: %q", c.Failure.Body)
	}
	if b := doc.Suites[1]; b.Name != "flows/broken.flow.yaml" || len(b.Cases) != 1 || b.Cases[0].Error == nil || b.Cases[0].Failure != nil {
		t.Errorf("suite of a broken file: %+v", b)
	}
	if e := doc.Suites[2]; e.Name != "flows/empty.flow.yaml" || e.Tests != 0 || len(e.Cases) != 0 {
		t.Errorf("suite of a file without tests: %+v", e)
	}

	// Attributes the Go structure above does not read.
	for _, want := range []string{`<testsuites name="toolwire test" tests="3" failures="1" errors="1" time="3.000">`,
		`timestamp="2026-11-24T01:02:03"`, `time="1.750"`, `line="9"`, `<error message="does not pass the check" type="load">`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("report lacks %s:\n%s", want, data)
		}
	}
	// Nothing is left next to it.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("the report's directory holds %d entries, want 1", len(entries))
	}
}

// TestJUnitReportUnwritable: a report that cannot be written is an error.
func TestJUnitReportUnwritable(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeJUnit(filepath.Join(blocker, "junit.xml"), nil, 0); err == nil {
		t.Error("writing under a regular file succeeded")
	}
}
