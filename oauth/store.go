package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolwire/toolwire/internal/httpguard"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// TokenStore keeps tokens by resource key (the canonical URI of the MCP
// endpoint). Load returns nil, nil when there is none. Implementations
// must be safe for concurrent use.
type TokenStore interface {
	Load(ctx context.Context, key string) (*Token, error)
	Save(ctx context.Context, key string, t *Token) error
	Delete(ctx context.Context, key string) error
}

// MemoryStore keeps tokens in memory. The zero value is ready.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]Token
}

// Load returns a copy of the token stored under key.
func (s *MemoryStore) Load(_ context.Context, key string) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[key]
	if !ok {
		return nil, nil
	}
	t.Scopes = append([]string(nil), t.Scopes...)
	return &t, nil
}

// Save stores a copy of t under key.
func (s *MemoryStore) Save(_ context.Context, key string, t *Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]Token{}
	}
	c := *t
	c.Scopes = append([]string(nil), t.Scopes...)
	s.m[key] = c
	return nil
}

// Delete forgets the token under key.
func (s *MemoryStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

// FileStore keeps each token in a JSON file of its own under Dir (named
// by the SHA-256 of the key): the directory is created with mode 0700, a
// file is written with mode 0600 to a temporary file and renamed into
// place, and a file or directory that group or others may access is
// refused rather than read.
type FileStore struct {
	Dir string
	mu  sync.Mutex
}

// ErrInsecurePermissions: a token file or its directory is open to group
// or others.
var ErrInsecurePermissions = errors.New("token storage is accessible to other users")

type fileRecord struct {
	Key   string `json:"key"`
	Token *Token `json:"token"`
}

func (s *FileStore) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.Dir, "token-"+hex.EncodeToString(sum[:16])+".json")
}

// checkMode refuses a file or directory with any group or other bits.
func checkMode(p string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %v", ErrInsecurePermissions, p, fi.Mode().Perm())
	}
	return nil
}

// Load reads the token stored under key.
func (s *FileStore) Load(_ context.Context, key string) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fi, err := os.Stat(s.Dir); err == nil {
		if err := checkMode(s.Dir, fi); err != nil {
			return nil, err
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	p := s.path(key)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("oauth: %s is not a regular file", p)
	}
	if err := checkMode(p, fi); err != nil {
		return nil, err
	}
	data, err := httpguard.ReadLimited(f, maxStoredTokenBytes)
	if err != nil {
		return nil, fmt.Errorf("oauth: reading %s: %w", p, err)
	}
	var rec fileRecord
	if err := wirejson.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("oauth: %s is not a token file: %w", p, err)
	}
	if rec.Key != key || rec.Token == nil {
		return nil, nil // another key's file (a hash collision) or empty
	}
	return rec.Token, nil
}

// Save writes t under key atomically.
func (s *FileStore) Save(_ context.Context, key string, t *Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(s.Dir)
	if err != nil {
		return err
	}
	if err := checkMode(s.Dir, fi); err != nil {
		return err
	}
	data, err := json.MarshalIndent(fileRecord{Key: key, Token: t}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".token-*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // after the rename, nothing is there
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(name, s.path(key))
}

// Delete removes the token file of key.
func (s *FileStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := os.Remove(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
