package audit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// sample returns a record with every caller field set.
func sample(i int) *Record {
	return &Record{
		Time:          time.Date(2026, 11, 23, 12, 0, 0, i, time.UTC),
		Duration:      time.Duration(i) * time.Millisecond,
		RequestID:     "1",
		SessionID:     "sess",
		Identity:      "alice",
		Persona:       "analyst",
		Upstream:      "warehouse",
		Tool:          "query_table",
		Method:        "tools/call",
		Arguments:     json.RawMessage(`{"table":"orders"}`),
		Outcome:       OutcomeOK,
		RequestBytes:  120,
		ResponseBytes: 4000,
		ContentBlocks: 2,
		Era:           "2025",
		Transport:     "streamable",
	}
}

func TestOutcomeValid(t *testing.T) {
	for _, o := range outcomes {
		if !o.Valid() {
			t.Errorf("%q not valid", o)
		}
	}
	if len(outcomes) != 9 {
		t.Errorf("%d outcomes, want 9", len(outcomes))
	}
	// Gap records are the store's own: Append refuses their outcome.
	if err := (Limits{}).Prepare(&Record{Outcome: OutcomeLost}, time.Now()); !errors.Is(err, ErrInvalidOutcome) {
		t.Errorf("Prepare of outcome lost: %v", err)
	}
	for _, o := range []Outcome{"", "OK", "error", "ok "} {
		if o.Valid() {
			t.Errorf("%q valid", o)
		}
	}
}

func TestPrepare(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	l := Limits{MaxArgumentsBytes: 32, MaxErrorBytes: 20}

	r := &Record{Outcome: "bogus"}
	if err := l.Prepare(r, now); !errors.Is(err, ErrInvalidOutcome) {
		t.Fatalf("bogus outcome: %v", err)
	}

	r = &Record{Outcome: OutcomeOK, Arguments: json.RawMessage{}}
	if err := l.Prepare(r, now); err != nil {
		t.Fatal(err)
	}
	if !r.Time.Equal(now) || r.Time.Location() != time.UTC {
		t.Errorf("time %v, want %v in UTC", r.Time, now)
	}
	if r.Arguments != nil {
		t.Errorf("empty arguments kept as %q", r.Arguments)
	}

	// Arguments limit: at the limit kept, over it replaced with a marker.
	at := json.RawMessage(`"` + strings.Repeat("a", 30) + `"`)
	r = &Record{Outcome: OutcomeOK, Arguments: at}
	l.Prepare(r, now)
	if string(r.Arguments) != string(at) {
		t.Errorf("arguments at the limit changed: %s", r.Arguments)
	}
	over := json.RawMessage(`"` + strings.Repeat("a", 31) + `"`)
	r = &Record{Outcome: OutcomeOK, Arguments: over}
	l.Prepare(r, now)
	if string(r.Arguments) != `"[arguments truncated: 33 bytes]"` {
		t.Errorf("arguments over the limit: %s", r.Arguments)
	}
	r = &Record{Outcome: OutcomeOK, Arguments: json.RawMessage(`{"a":`)}
	l.Prepare(r, now)
	if string(r.Arguments) != `"[arguments not JSON: 5 bytes]"` {
		t.Errorf("invalid arguments: %s", r.Arguments)
	}

	// Error limit: cut at a rune boundary, with the mark, within the limit.
	r = &Record{Outcome: OutcomeToolError, Error: strings.Repeat("é", 20)}
	l.Prepare(r, now)
	if len(r.Error) > 20 || !strings.HasSuffix(r.Error, TruncatedMark) || !utf8.ValidString(r.Error) {
		t.Errorf("error %q (%d bytes)", r.Error, len(r.Error))
	}
	r = &Record{Outcome: OutcomeToolError, Error: strings.Repeat("x", 20)}
	l.Prepare(r, now)
	if r.Error != strings.Repeat("x", 20) {
		t.Errorf("error at the limit changed: %q", r.Error)
	}

	// Defaults.
	r = &Record{Outcome: OutcomeOK, Error: strings.Repeat("x", DefaultMaxErrorBytes+1),
		Arguments: json.RawMessage(`"` + strings.Repeat("a", DefaultMaxArgumentsBytes) + `"`)}
	Limits{}.Prepare(r, now)
	if len(r.Error) > DefaultMaxErrorBytes || !strings.HasSuffix(r.Error, TruncatedMark) {
		t.Errorf("default error limit: %d bytes", len(r.Error))
	}
	if !strings.HasPrefix(string(r.Arguments), `"[arguments truncated`) {
		t.Errorf("default arguments limit: %.40s", r.Arguments)
	}
}

func TestRecordJSON(t *testing.T) {
	r := sample(1)
	Seal(r, Anchor{})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.ComputeHash() != r.Hash || back.Hash != r.Hash || back.Scheme != SchemeSHA256 {
		t.Errorf("JSON round trip changed the record: %s", b)
	}
	k := testKey(t, 1)
	k.Seal(r, Anchor{})
	b, _ = json.Marshal(r)
	back = Record{}
	if err := json.Unmarshal(b, &back); err != nil || !strings.Contains(string(b), `"scheme":"hmac-sha256"`) {
		t.Fatalf("%s: %v", b, err)
	}
	if sum, _ := k.Sum(&back); sum != r.Hash || back.Scheme != SchemeHMAC {
		t.Errorf("JSON round trip changed the keyed record: %s", b)
	}
}
