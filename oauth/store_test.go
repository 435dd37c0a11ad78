package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testToken() *Token {
	return &Token{AccessToken: "at-secret-value", TokenType: "Bearer", RefreshToken: "rt-secret-value",
		Expiry: time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC), Scopes: []string{"a"}, Resource: "https://m/mcp", Issuer: "https://as",
		Client: ClientInfo{ID: "c", Secret: "client-secret-value", Issuer: "https://as", AuthMethod: "client_secret_basic"}}
}

func TestMemoryStore(t *testing.T) {
	ctx := context.Background()
	var s MemoryStore
	if got, err := s.Load(ctx, "k"); got != nil || err != nil {
		t.Fatal(got, err)
	}
	tok := testToken()
	if err := s.Save(ctx, "k", tok); err != nil {
		t.Fatal(err)
	}
	tok.Scopes[0] = "changed"
	got, _ := s.Load(ctx, "k")
	if got.AccessToken != "at-secret-value" || got.Scopes[0] != "a" {
		t.Errorf("%v", got)
	}
	_ = s.Delete(ctx, "k")
	if got, _ := s.Load(ctx, "k"); got != nil {
		t.Error("not deleted")
	}
}

func TestFileStoreModes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "tokens")
	s := &FileStore{Dir: dir}
	if got, err := s.Load(ctx, "https://m/mcp"); got != nil || err != nil {
		t.Fatal(got, err)
	}
	if err := s.Save(ctx, "https://m/mcp", testToken()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v, %v", fi.Mode().Perm(), err)
	}
	p := s.path("https://m/mcp")
	fi, err = os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, %v", fi.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files: a temporary file is left", len(entries))
	}
	got, err := s.Load(ctx, "https://m/mcp")
	if err != nil || got.RefreshToken != "rt-secret-value" || got.Client.Secret != "client-secret-value" || !got.Expiry.Equal(testToken().Expiry) {
		t.Fatalf("%v, %v", got, err)
	}
	if got, _ := s.Load(ctx, "https://other/mcp"); got != nil {
		t.Error("another key loaded")
	}
	// A token file others can read is refused, not read.
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "https://m/mcp"); !errors.Is(err, ErrInsecurePermissions) {
		t.Errorf("group-readable file: %v", err)
	}
	_ = os.Chmod(p, 0o600)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "https://m/mcp"); !errors.Is(err, ErrInsecurePermissions) {
		t.Errorf("open directory: %v", err)
	}
	if err := s.Save(ctx, "https://m/mcp", testToken()); !errors.Is(err, ErrInsecurePermissions) {
		t.Errorf("save into an open directory: %v", err)
	}
	_ = os.Chmod(dir, 0o700)
	if err := s.Delete(ctx, "https://m/mcp"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, "https://m/mcp"); got != nil {
		t.Error("not deleted")
	}
}

func TestTokenRedaction(t *testing.T) {
	tok := testToken()
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "token", tok, "client", tok.Client)
	for _, s := range []string{tok.String(), tok.GoString(), tok.Client.String(), tok.LogValue().String(), buf.String(), fmt.Sprintf("%v %+v %#v", tok, tok.Client, tok.Client)} {
		for _, secret := range []string{"at-secret-value", "rt-secret-value", "client-secret-value"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shows %s", s, secret)
			}
		}
	}
}
