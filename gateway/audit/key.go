package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// KeySize is the size of the keys NewKeyFile makes, and the least a key
// may have.
const KeySize = 32

// Key is the secret of a keyed chain: records sealed with it carry an
// HMAC-SHA-256 of their encoding instead of a SHA-256, so that write access
// to the database is not enough to forge, relink or append records. It is
// kept outside the database (a key file). A Key is safe for concurrent use.
type Key struct {
	secret []byte
	id     string
	macs   sync.Pool // of *mac
}

// mac is an HMAC-SHA-256 under a key, with room for its sum (a sum into
// the caller's stack would escape through the hash.Hash interface).
type mac struct {
	h   hash.Hash
	sum [sha256.Size]byte
}

// NewKey returns the key of secret, which must be at least KeySize bytes.
func NewKey(secret []byte) (*Key, error) {
	if len(secret) < KeySize {
		return nil, fmt.Errorf("audit: a key of %d bytes, want at least %d", len(secret), KeySize)
	}
	k := &Key{secret: bytes.Clone(secret)}
	id := sha256.Sum256(append([]byte("toolwire/audit/key-id\x00"), secret...))
	k.id = hex.EncodeToString(id[:8])
	k.macs.New = func() any { return &mac{h: hmac.New(sha256.New, k.secret)} }
	return k, nil
}

// ID names the key without revealing it: 16 hex digits of a hash of it,
// for log lines and error messages that say which key is meant.
func (k *Key) ID() string { return k.id }

// sum returns the HMAC-SHA-256 of b under k.
func (k *Key) sum(b []byte) Digest {
	m := k.macs.Get().(*mac)
	m.h.Reset()
	m.h.Write(b)
	m.h.Sum(m.sum[:0])
	d := Digest(m.sum)
	k.macs.Put(m)
	return d
}

// ReadKeyFile reads a key file: 64 or more hex digits (as NewKeyFile
// writes them, with a newline), or at least KeySize raw bytes.
func ReadKeyFile(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit: key file: %w", err)
	}
	secret := b
	if t := bytes.TrimSpace(b); len(t) >= 2*KeySize && len(t)%2 == 0 {
		if d, err := hex.DecodeString(string(t)); err == nil {
			secret = d
		}
	}
	k, err := NewKey(secret)
	if err != nil {
		return nil, fmt.Errorf("audit: key file %s: %w", path, err)
	}
	return k, nil
}

// NewKeyFile makes a key of KeySize random bytes and writes it to path as
// hex, mode 0600, complete or not at all; it never replaces a file.
func NewKeyFile(path string) (*Key, error) {
	secret := make([]byte, KeySize)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	k, err := NewKey(secret)
	if err != nil {
		return nil, err
	}
	// Written whole under another name, then linked into place: a crash
	// never leaves a short key at path, and an existing file is kept.
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return nil, fmt.Errorf("audit: key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(secret) + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil {
		return nil, fmt.Errorf("audit: key file: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return k, nil
}

// KeyFileIn returns the key of the key file at path, making one
// (NewKeyFile) when there is none; created says which.
func KeyFileIn(path string) (k *Key, created bool, err error) {
	k, err = ReadKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	k, err = NewKeyFile(path)
	if errors.Is(err, fs.ErrExist) { // made meanwhile by another process
		k, err = ReadKeyFile(path)
		return k, false, err
	}
	return k, err == nil, err
}
