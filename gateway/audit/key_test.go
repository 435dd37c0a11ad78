package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testKey returns a key of KeySize bytes, all b.
func testKey(t testing.TB, b byte) *Key {
	t.Helper()
	k, err := NewKey(bytes.Repeat([]byte{b}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKeyFile: a key file is made once, 0600, as hex, never replaced, and
// reads back as the same key; raw bytes read too; a short key is refused.
func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.key")
	k, created, err := KeyFileIn(path)
	if err != nil || !created {
		t.Fatalf("first: created %v, %v", created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v %v", st, err)
	}
	b, _ := os.ReadFile(path)
	if len(b) != 2*KeySize+1 || !strings.HasSuffix(string(b), "\n") {
		t.Errorf("the key file holds %q", b)
	}
	again, created, err := KeyFileIn(path)
	if err != nil || created || again.ID() != k.ID() {
		t.Fatalf("second: created %v, id %s, want %s, %v", created, again.ID(), k.ID(), err)
	}
	if _, err := NewKeyFile(path); err == nil {
		t.Error("NewKeyFile replaced a key file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}

	raw := filepath.Join(dir, "raw.key")
	os.WriteFile(raw, bytes.Repeat([]byte{7}, KeySize), 0o600)
	if k, err := ReadKeyFile(raw); err != nil || k.ID() != testKey(t, 7).ID() {
		t.Errorf("a raw key file: %v", err)
	}
	short := filepath.Join(dir, "short.key")
	os.WriteFile(short, []byte("abcd\n"), 0o600)
	if _, err := ReadKeyFile(short); err == nil {
		t.Error("a short key was taken")
	}
	if k.ID() == testKey(t, 7).ID() || len(k.ID()) != 16 {
		t.Errorf("key ids %s", k.ID())
	}
}

// TestKeyedSeal: a keyed record's hash is the HMAC-SHA-256 of its version
// 2 encoding, which names its version, so that it never equals a keyless
// record's hash.
func TestKeyedSeal(t *testing.T) {
	k := testKey(t, 1)
	r := sample(1)
	k.Seal(r, Anchor{})
	enc := r.Encode()
	if r.Scheme != SchemeHMAC || !bytes.HasPrefix(enc, []byte("toolwire/audit/v2\x00")) {
		t.Fatalf("scheme %v, encoding %q", r.Scheme, enc[:20])
	}
	m := hmac.New(sha256.New, bytes.Repeat([]byte{1}, KeySize))
	m.Write(enc)
	if !bytes.Equal(m.Sum(nil), r.Hash[:]) {
		t.Error("the hash is not the HMAC of the encoding")
	}
	if sum, ok := k.Sum(r); !ok || sum != r.Hash {
		t.Error("Key.Sum disagrees with Seal")
	}
	if _, ok := (*Key)(nil).Sum(r); ok {
		t.Error("a keyed record's hash known without the key")
	}
	plain := sample(1)
	Seal(plain, Anchor{})
	if plain.Scheme != SchemeSHA256 || plain.Hash == r.Hash || plain.Hash != plain.ComputeHash() {
		t.Errorf("keyless: %+v", plain)
	}
	back, err := decodeEncoding(enc)
	if err != nil || back.Scheme != SchemeHMAC {
		t.Fatalf("decoding a keyed record: %+v %v", back, err)
	}
}
