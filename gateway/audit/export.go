package audit

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"iter"
	"slices"
	"strconv"
	"time"
)

// WriteJSONL writes each record of recs to w as one JSON object per line
// (the Record's JSON form: hashes in hex, time in RFC 3339 with
// nanoseconds, Arguments as JSON) and returns how many it wrote. It stops at
// the first error, from recs or from w.
func WriteJSONL(w io.Writer, recs iter.Seq2[*Record, error]) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	for r, err := range recs {
		if err != nil {
			bw.Flush()
			return n, err
		}
		if err := enc.Encode(r); err != nil {
			return n, err
		}
		n++
	}
	return n, bw.Flush()
}

// CSVColumns is the header row WriteCSV writes; the order is stable, and new
// columns are only ever added at the end.
func CSVColumns() []string { return slices.Clone(csvColumns) }

var csvColumns = []string{
	"seq", "time", "duration_ns", "request_id", "session_id", "identity", "persona",
	"upstream", "tool", "method", "arguments", "outcome", "error", "request_bytes",
	"response_bytes", "content_blocks", "era", "transport", "prev_hash", "hash", "scheme",
}

// WriteCSV writes a header row (CSVColumns()) and then one row per record of
// recs to w, and returns how many records it wrote. Times are RFC 3339 with
// nanoseconds in UTC, hashes hex, arguments JSON text, the scheme
// "sha256" or "hmac-sha256". A text field that a
// spreadsheet would take for a formula (it starts with = + - @, tab or CR)
// gets a leading apostrophe, so an exported audit cannot run code in the
// reader's spreadsheet. It stops at the first error, from recs or from w.
func WriteCSV(w io.Writer, recs iter.Seq2[*Record, error]) (int, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvColumns); err != nil {
		return 0, err
	}
	n := 0
	row := make([]string, len(csvColumns))
	for r, err := range recs {
		if err != nil {
			cw.Flush()
			return n, err
		}
		i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
		row = append(row[:0],
			i64(r.Seq), r.Time.UTC().Format(time.RFC3339Nano), i64(int64(r.Duration)),
			cell(r.RequestID), cell(r.SessionID), cell(r.Identity), cell(r.Persona),
			cell(r.Upstream), cell(r.Tool), cell(r.Method), cell(string(r.Arguments)),
			string(r.Outcome), cell(r.Error), i64(r.RequestBytes), i64(r.ResponseBytes),
			i64(r.ContentBlocks), cell(r.Era), cell(r.Transport),
			r.PrevHash.String(), r.Hash.String(), r.Scheme.String())
		if err := cw.Write(row); err != nil {
			return n, err
		}
		n++
	}
	cw.Flush()
	return n, cw.Error()
}

// cell guards a text field against formula injection (see WriteCSV).
func cell(s string) string {
	if s != "" {
		switch s[0] {
		case '=', '+', '-', '@', '\t', '\r':
			return "'" + s
		}
	}
	return s
}
