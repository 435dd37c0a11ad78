package filestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/transport/streamable"
	"github.com/toolwire/toolwire/transport/streamable/sessionstoretest"
)

// fileOf is the bytes a store wrote for three sessions: "a" created,
// "b" created and its state updated, "c" created and deleted; and where
// each record starts.
func fileOf(t *testing.T, clk *sessionstoretest.Clock) (data []byte, starts []int) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.log")
	s := open(t, path, clk)
	for _, id := range []string{"a", "b", "c"} {
		if err := s.Create(ctx, &streamable.SessionRecord{ID: id, Owner: "iss\x00" + id, Prime: true, State: []byte(`{"v":1}`)}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Update(ctx, "b", []byte(`{"v":2}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for off := len(magic); off < len(data); {
		starts = append(starts, off)
		off += frameLen + int(binary.LittleEndian.Uint32(data[off:]))
	}
	if len(starts) != 5 {
		t.Fatalf("%d records, want 5", len(starts))
	}
	return data, starts
}

// frame wraps payload as a record with a right checksum.
func frame(payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// TestDamagedFile: a file damaged at some point (torn by a crash, bytes
// changed) is read up to it, the loss is logged, and the store goes on
// from the sessions before it on a file rewritten clean; a file that is
// not a session file is refused and left as it is.
func TestDamagedFile(t *testing.T) {
	clk := sessionstoretest.NewClock()
	good, starts := fileOf(t, clk)
	uv := binary.AppendUvarint
	cases := []struct {
		name  string
		data  func() []byte
		live  []string // sessions held after opening
		b     string   // b's state then
		logs  string   // in the warning, "" for none
		error string   // Open's error, "" for none
	}{
		{"whole", func() []byte { return good }, []string{"a", "b"}, `{"v":2}`, "", ""},
		{"empty", func() []byte { return nil }, nil, "", "", ""},
		{"header only", func() []byte { return []byte(magic) }, nil, "", "", ""},
		{"torn in the last frame", func() []byte { return good[:starts[4]+3] }, []string{"a", "b", "c"}, `{"v":2}`, "torn", ""},
		{"torn in the last payload", func() []byte { return good[:len(good)-1] }, []string{"a", "b", "c"}, `{"v":2}`, "torn", ""},
		{"torn in the update", func() []byte { return good[:starts[3]+10] }, []string{"a", "b", "c"}, `{"v":1}`, "torn", ""},
		{"a byte changed in b's create", func() []byte {
			d := bytes.Clone(good)
			d[starts[1]+frameLen+3] ^= 0x20
			return d
		}, []string{"a"}, "", "checksum", ""},
		{"length past the file", func() []byte {
			d := bytes.Clone(good)
			binary.LittleEndian.PutUint32(d[starts[2]:], 1<<20)
			return d
		}, []string{"a", "b"}, `{"v":1}`, "claims", ""},
		{"length past the bound", func() []byte {
			d := bytes.Clone(good)
			binary.LittleEndian.PutUint32(d[starts[2]:], maxPayload+1)
			return d
		}, []string{"a", "b"}, `{"v":1}`, "claims", ""},
		{"zero length", func() []byte { return append(bytes.Clone(good), make([]byte, frameLen)...) }, []string{"a", "b"}, `{"v":2}`, "claims", ""},
		{"zeroes after the records (a file extended, not written)", func() []byte { return append(bytes.Clone(good), make([]byte, 4096)...) }, []string{"a", "b"}, `{"v":2}`, "claims", ""},
		{"unknown kind", func() []byte { return append(bytes.Clone(good), frame(uv([]byte{'z'}, 0))...) }, []string{"a", "b"}, `{"v":2}`, "damaged", ""},
		{"empty id", func() []byte { return append(bytes.Clone(good), frame(uv([]byte{'d'}, 0))...) }, []string{"a", "b"}, `{"v":2}`, "damaged", ""},
		{"id past MaxIDLen", func() []byte {
			p := append(uv([]byte{'d'}, MaxIDLen+1), strings.Repeat("x", MaxIDLen+1)...)
			return append(bytes.Clone(good), frame(p)...)
		}, []string{"a", "b"}, `{"v":2}`, "damaged", ""},
		{"id longer than the payload", func() []byte { return append(bytes.Clone(good), frame(append(uv([]byte{'d'}, 9), "ab"...))...) }, []string{"a", "b"}, `{"v":2}`, "damaged", ""},
		{"bytes after the fields", func() []byte { return append(bytes.Clone(good), frame(append(uv([]byte{'d'}, 1), "ab"...))...) }, []string{"a", "b"}, `{"v":2}`, "damaged", ""},
		{"prime neither 0 nor 1", func() []byte {
			p := append(uv([]byte{'c'}, 1), 'z')
			p = append(uv(p, 0), 2)
			p = binary.AppendVarint(p, 1<<62)
			return append(bytes.Clone(good), frame(uv(p, 0))...)
		}, []string{"a", "b"}, `{"v":2}`, "damaged", ""},
		{"expiry cut short", func() []byte {
			p := append(uv([]byte{'x'}, 1), 'a', 0x80)
			return append(bytes.Clone(good), frame(p)...)
		}, []string{"a", "b"}, `{"v":2}`, "damaged", ""},
		{"an update and expiry of no session", func() []byte {
			d := bytes.Clone(good)
			d = appendRecord(d, &record{op: opUpdate, id: "ghost", expires: 1 << 62, state: []byte("x")})
			return appendRecord(d, &record{op: opExpiry, id: "ghost", expires: 1 << 62})
		}, []string{"a", "b"}, `{"v":2}`, "", ""},
		{"another file", func() []byte { return []byte("SQLite format 3\x00 and then some") }, nil, "", "", "not a toolwire session file"},
		{"a header cut short", func() []byte { return []byte(magic[:5]) }, nil, "", "", "not a toolwire session file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions.log")
			data := tc.data()
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			s, err := Open(path, WithClock(clk.Now), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			if tc.error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.error) {
					t.Fatalf("Open: %v, want an error saying %q", err, tc.error)
				}
				if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
					t.Error("a refused file was changed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := held(s); !slices.Equal(got, tc.live) {
				t.Errorf("sessions %q, want %q", got, tc.live)
			}
			if tc.logs == "" && logs.Len() != 0 {
				t.Errorf("logged %q for a sound file", logs.String())
			}
			if tc.logs != "" && (!strings.Contains(logs.String(), tc.logs) || !strings.Contains(logs.String(), "bytes_dropped=")) {
				t.Errorf("logged %q, want a warning saying %q and the bytes dropped", logs.String(), tc.logs)
			}
			if tc.b != "" {
				if rec, err := s.Touch(context.Background(), "b", time.Minute); err != nil || string(rec.State) != tc.b || rec.Owner != "iss\x00b" || !rec.Prime {
					t.Errorf("b: %+v, %v; want state %s", rec, err, tc.b)
				}
			}
			// The store goes on, and what it writes now is read back.
			if err := s.Create(context.Background(), &streamable.SessionRecord{ID: "new"}, time.Minute); err != nil {
				t.Fatal(err)
			}
			s.Close()
			logs.Reset()
			s, err = Open(path, WithClock(clk.Now), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, want := held(s), append(slices.Clone(tc.live), "new"); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
				t.Errorf("reopened: sessions %q, want %q", got, want)
			}
			if logs.Len() != 0 {
				t.Errorf("the rewritten file is still damaged: %s", logs.String())
			}
		})
	}
}

// held is the ids a store holds, sorted.
func held(s *Store) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.cache {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// TestRecordRoundTrip: every kind of record reads back as written, at the
// bounds too.
func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []record{
		{op: opCreate, id: "s", owner: "iss\x00alice", prime: true, expires: 1700000000000, state: []byte("{}")},
		{op: opCreate, id: strings.Repeat("i", MaxIDLen), owner: strings.Repeat("o", MaxOwnerLen), expires: -1, state: make([]byte, MaxSessionState)},
		{op: opCreate, id: "anon", state: []byte{}},
		{op: opUpdate, id: "s", expires: 1 << 62, state: []byte("\x00\xff")},
		{op: opExpiry, id: "s", expires: 0},
		{op: opDelete, id: "s"},
	} {
		b := appendRecord(nil, &r)
		if n := binary.LittleEndian.Uint32(b); int(n) != len(b)-frameLen || n > maxPayload {
			t.Fatalf("%c: framed length %d for %d bytes", r.op, n, len(b)-frameLen)
		}
		got, err := decodeRecord(b[frameLen:])
		if err != nil {
			t.Fatalf("%c: %v", r.op, err)
		}
		if got.op != r.op || got.id != r.id || got.owner != r.owner || got.prime != r.prime || got.expires != r.expires || !bytes.Equal(got.state, r.state) {
			t.Errorf("%c: read back %+v", r.op, got)
		}
	}
}

// TestFileStaysBounded: a session whose state keeps changing grows the
// file by a record each time, and a write that finds it twice its size
// (and CompactBytes more) rewrites it: it never holds much more than that,
// and a reopened store finds the last state.
func TestFileStaysBounded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.log")
	clk := sessionstoretest.NewClock()
	s := open(t, path, clk)
	state := make([]byte, 64<<10)
	if err := s.Create(ctx, &streamable.SessionRecord{ID: "s", State: state}, time.Minute); err != nil {
		t.Fatal(err)
	}
	largest := int64(0)
	for i := range 400 { // 25 MiB of updates
		state[0] = byte(i)
		if err := s.Update(ctx, "s", state, time.Minute); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, st.Size())
	}
	if most := int64(len(magic)) + 2*(64<<10+100) + CompactBytes; largest > most {
		t.Errorf("the file reached %d bytes, want at most %d", largest, most)
	}
	s.Close()
	s = open(t, path, clk)
	if rec, err := s.Touch(ctx, "s", time.Minute); err != nil || rec.State[0] != byte(399%256) {
		t.Fatalf("after reopening: %v", err)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the rewrite left its temporary file: %v", err)
	}
}

// TestLeftoverTemporaryFile: a rewrite a crash cut short leaves its
// temporary file; the next store reads the file it was to replace, and its
// own rewrite takes the temporary's place.
func TestLeftoverTemporaryFile(t *testing.T) {
	clk := sessionstoretest.NewClock()
	good, _ := fileOf(t, clk)
	path := filepath.Join(t.TempDir(), "sessions.log")
	os.WriteFile(path, good, 0o600)
	os.WriteFile(path+".tmp", []byte(magic+"half a rewrite"), 0o600)
	s := open(t, path, clk)
	if got := held(s); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("sessions %q, want a and b", got)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}

// TestClosedStore: a closed store refuses to write, with an error.
func TestClosedStore(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "sessions.log"), sessionstoretest.NewClock())
	s.Close()
	if err := s.Create(context.Background(), &streamable.SessionRecord{ID: "s"}, time.Minute); !errors.Is(err, errClosed) {
		t.Errorf("Create on a closed store: %v", err)
	}
}

// TestSelectFirst: selectFirst puts the n earliest expiries first, for
// any n, with repeated expiries too.
func TestSelectFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		es := make([]*entry, 1+r.IntN(300))
		for i := range es {
			es[i] = &entry{exp: int64(r.IntN(1 + round))}
		}
		want := make([]int64, len(es))
		for i, e := range es {
			want[i] = e.exp
		}
		slices.Sort(want)
		n := 1 + r.IntN(len(es))
		selectFirst(es, n)
		got := make([]int64, n)
		for i := range n {
			got[i] = es[i].exp
		}
		slices.Sort(got)
		if !slices.Equal(got, want[:n]) {
			t.Fatalf("round %d, n %d of %d: first %v, want %v", round, n, len(es), got, want[:n])
		}
	}
}

// ExampleOpen keeps an endpoint's sessions in a file, so that they
// survive a restart of the process.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	st, err := Open(filepath.Join(dir, "sessions.log"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	_ = streamable.WithSessionStore(st) // a streamable.NewHandler option
	fmt.Println(st.Len())
	// Output: 0
}
