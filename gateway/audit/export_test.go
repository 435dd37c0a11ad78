package audit

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strings"
	"testing"
)

func records(rs []*Record, err error) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err)
		}
	}
}

func TestWriteJSONL(t *testing.T) {
	var rs []*Record
	prev := Anchor{}
	for i := range 3 {
		r := sample(i)
		r.Error = "<b>&</b>"
		r.Arguments = json.RawMessage(`{"q":"a\nb"}`)
		Seal(r, prev)
		prev = Anchor{Seq: r.Seq, Hash: r.Hash}
		rs = append(rs, r)
	}
	var buf bytes.Buffer
	n, err := WriteJSONL(&buf, records(rs, nil))
	if err != nil || n != 3 {
		t.Fatalf("%d, %v", n, err)
	}
	sc := bufio.NewScanner(&buf)
	var got []*Record
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if r.ComputeHash() != r.Hash {
			t.Errorf("seq %d: exported record does not hash to its hash", r.Seq)
		}
		got = append(got, &r)
	}
	if len(got) != 3 || got[2].Seq != 3 || got[0].Error != "<b>&</b>" {
		t.Fatalf("got %d records", len(got))
	}
	// The exported lines are a verifiable chain on their own.
	v := NewVerifier(Anchor{}, Anchor{3, got[2].Hash})
	for _, r := range got {
		v.Add(r)
	}
	if rep := v.Report(); !rep.OK {
		t.Errorf("exported chain: %v", rep.Break)
	}

	boom := errors.New("boom")
	buf.Reset()
	n, err = WriteJSONL(&buf, records(got[:1], boom))
	if n != 1 || !errors.Is(err, boom) || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("error case: %d, %v, %q", n, err, buf.String())
	}
}

func TestWriteCSV(t *testing.T) {
	rs := chainOf(2)
	rs[0].Error = "=HYPERLINK(\"http://x\")"
	rs[1].Arguments = json.RawMessage(`{"a":"x,y","b":"line\nbreak"}`)
	var buf bytes.Buffer
	n, err := WriteCSV(&buf, records(rs, nil))
	if err != nil || n != 2 {
		t.Fatalf("%d, %v", n, err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || !slices.Equal(rows[0], csvColumns) {
		t.Fatalf("rows %v", rows)
	}
	want := []string{"seq", "time", "duration_ns", "request_id", "session_id", "identity", "persona",
		"upstream", "tool", "method", "arguments", "outcome", "error", "request_bytes",
		"response_bytes", "content_blocks", "era", "transport", "prev_hash", "hash", "scheme"}
	if !slices.Equal(csvColumns, want) {
		t.Errorf("column order changed: %v", csvColumns)
	}
	col := func(row []string, name string) string { return row[slices.Index(csvColumns, name)] }
	if col(rows[1], "seq") != "1" || col(rows[1], "identity") != "alice" || col(rows[1], "outcome") != "ok" ||
		col(rows[1], "time") != "2026-11-23T12:00:00Z" || col(rows[2], "hash") != rs[1].Hash.String() ||
		col(rows[2], "prev_hash") != rs[0].Hash.String() || col(rows[2], "arguments") != string(rs[1].Arguments) ||
		col(rows[1], "scheme") != "sha256" {
		t.Errorf("rows %q", rows[1:])
	}
	if got := col(rows[1], "error"); got != "'"+rs[0].Error {
		t.Errorf("formula not neutralised: %q", got)
	}
	for _, row := range rows {
		if len(row) != len(csvColumns) {
			t.Errorf("row of %d columns", len(row))
		}
	}
	boom := errors.New("boom")
	if n, err := WriteCSV(&bytes.Buffer{}, records(rs[:1], boom)); n != 1 || !errors.Is(err, boom) {
		t.Errorf("error case: %d, %v", n, err)
	}
}
