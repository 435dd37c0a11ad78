package filestore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// The file is a header (magic) followed by records, each framed as
//
//	length  uint32, little-endian: the payload's bytes
//	crc     uint32, little-endian: CRC-32C of the payload
//	payload a kind byte, then the kind's fields
//
// Byte strings (id, owner, state) are a uvarint length and the bytes, an
// expiry a varint (unix ms), prime one byte (0 or 1). A record is written
// with one write(2) at the file's end; one torn by a crash fails its
// length or checksum, and the file is read up to it.
const magic = "toolwire sessions 1\n"

// op is a record's kind.
type op byte

const (
	opCreate op = 'c' // id, owner, prime, expires, state: a new session
	opUpdate op = 'u' // id, expires, state: its state changed
	opExpiry op = 'x' // id, expires: its expiry moved later
	opDelete op = 'd' // id: it ended
)

// record is one record of the file.
type record struct {
	op      op
	id      string
	owner   string
	prime   bool
	expires int64 // unix ms
	state   []byte
}

// frameLen is the bytes before a record's payload.
const frameLen = 8

// MaxOwnerLen bounds a session's owner (an auth.Principal key); a longer
// one is refused, never stored.
const MaxOwnerLen = 64 << 10

// maxPayload bounds a record's payload: the largest id, owner and state
// with their lengths, the kind, prime and expiry.
const maxPayload = 3 + 4*binary.MaxVarintLen64 + MaxIDLen + MaxOwnerLen + MaxSessionState

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends r, framed, to b.
func appendRecord(b []byte, r *record) []byte {
	start := len(b)
	b = append(b, make([]byte, frameLen)...)
	b = append(b, byte(r.op))
	b = appendBytes(b, r.id)
	switch r.op {
	case opCreate:
		b = appendBytes(b, r.owner)
		p := byte(0)
		if r.prime {
			p = 1
		}
		b = append(b, p)
		b = binary.AppendVarint(b, r.expires)
		b = appendBytes(b, r.state)
	case opUpdate:
		b = binary.AppendVarint(b, r.expires)
		b = appendBytes(b, r.state)
	case opExpiry:
		b = binary.AppendVarint(b, r.expires)
	}
	payload := b[start+frameLen:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b
}

func appendBytes[T string | []byte](b []byte, s T) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// errDamaged is why a record cannot be read: the bytes from it on are not
// what the store wrote (torn by a crash, or changed since).
var errDamaged = errors.New("damaged record")

// decodeRecord reads one record's payload, all of it, within the store's
// bounds.
func decodeRecord(p []byte) (*record, error) {
	d := decoder{b: p}
	r := &record{op: op(d.byte())}
	r.id = string(d.bytes(MaxIDLen))
	switch r.op {
	case opCreate:
		r.owner = string(d.bytes(MaxOwnerLen))
		switch d.byte() {
		case 0:
		case 1:
			r.prime = true
		default:
			d.fail()
		}
		r.expires = d.varint()
		r.state = d.bytes(MaxSessionState)
	case opUpdate:
		r.expires = d.varint()
		r.state = d.bytes(MaxSessionState)
	case opExpiry:
		r.expires = d.varint()
	case opDelete:
	default:
		d.fail()
	}
	if d.bad || len(d.b) != 0 || r.id == "" {
		return nil, errDamaged
	}
	return r, nil
}

// decoder reads a payload's fields; bad once any did not fit.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) fail() { d.bad, d.b = true, nil }

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes reads a length and that many bytes, at most limit (a copy: the
// payload's buffer is reused).
func (d *decoder) bytes(limit int) []byte {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(limit) || n > uint64(len(d.b)-k) {
		d.fail()
		return nil
	}
	out := make([]byte, n)
	copy(out, d.b[k:])
	d.b = d.b[k+int(n):]
	return out
}

// replay reads the records of f (positioned after the header, size bytes
// long in all) in order and hands each to apply. It returns the offset
// where the readable records end: size, or where a damaged or torn record
// begins (damage then says what is wrong with it).
func replay(f io.Reader, size int64, apply func(*record)) (end int64, damage error) {
	br := bufio.NewReaderSize(f, 64<<10)
	end = int64(len(magic))
	var head [frameLen]byte
	var buf []byte
	for end < size {
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return end, fmt.Errorf("a record torn at byte %d: %w", end, errDamaged)
		}
		n := binary.LittleEndian.Uint32(head[:])
		if n == 0 || n > maxPayload || int64(n) > size-end-frameLen {
			return end, fmt.Errorf("a record at byte %d claims %d bytes: %w", end, n, errDamaged)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		p := buf[:n]
		if _, err := io.ReadFull(br, p); err != nil {
			return end, fmt.Errorf("a record torn at byte %d: %w", end, errDamaged)
		}
		if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(head[4:]) {
			return end, fmt.Errorf("a record at byte %d fails its checksum: %w", end, errDamaged)
		}
		r, err := decodeRecord(p)
		if err != nil {
			return end, fmt.Errorf("a record at byte %d: %w", end, err)
		}
		apply(r)
		end += frameLen + int64(n)
	}
	return end, nil
}

// writeFile writes, in place of the file at path, a file of the header
// and the records recs yields, durably: into path+".tmp", synced, renamed
// over path, the directory synced. It returns the new file, open for
// writing at its end, and its size.
func writeFile(path string, recs func(yield func(*record) bool)) (*os.File, int64, error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, 0, err
	}
	fail := func(err error) (*os.File, int64, error) {
		f.Close()
		os.Remove(tmp)
		return nil, 0, err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	size := int64(len(magic))
	w.WriteString(magic)
	var b []byte
	for r := range recs {
		b = appendRecord(b[:0], r)
		size += int64(len(b))
		if _, err := w.Write(b); err != nil {
			return fail(err)
		}
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
