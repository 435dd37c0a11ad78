package policy

import (
	"net/http"
	"strings"
	"testing"
)

func TestNewKeyAndHash(t *testing.T) {
	k1, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := NewKey()
	if k1 == k2 {
		t.Fatal("two keys are equal")
	}
	if !strings.HasPrefix(k1, KeyPrefix) || len(k1) != len(KeyPrefix)+43 || !IsKeyFormat(k1) {
		t.Fatalf("key %q has the wrong shape", k1)
	}
	for _, s := range []string{"", "twk_", "twk_short", "eyJhbGciOi.x.y", KeyPrefix + strings.Repeat("!", 43)} {
		if IsKeyFormat(s) {
			t.Errorf("IsKeyFormat(%q) = true", s)
		}
	}
	// The SHA-256 of "abc" (FIPS 180-2 test vector).
	if got, want := HashKey("abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Fatalf("HashKey(abc) = %s, want %s", got, want)
	}
	if _, err := parseHash(HashKey(k1)); err != nil {
		t.Fatalf("HashKey output does not parse: %v", err)
	}
}

func TestKeySetLookup(t *testing.T) {
	ci, _ := NewKey()
	ops, _ := NewKey()
	ks, err := NewKeySet(map[string]string{"ci": HashKey(ci), "ops": HashKey(ops)})
	if err != nil {
		t.Fatal(err)
	}
	if ks.Len() != 2 {
		t.Fatalf("Len = %d", ks.Len())
	}
	for _, c := range []struct {
		presented, name string
		ok              bool
	}{
		{ci, "ci", true},
		{ops, "ops", true},
		{ci + "x", "", false},
		{ci[:len(ci)-1], "", false},
		{"", "", false},
		{HashKey(ci), "", false}, // the hash itself is not a credential
	} {
		name, ok := ks.Lookup(c.presented)
		if name != c.name || ok != c.ok {
			t.Errorf("Lookup(%.10q...) = %q, %v; want %q, %v", c.presented, name, ok, c.name, c.ok)
		}
	}
	var nilSet *KeySet
	if _, ok := nilSet.Lookup(ci); ok {
		t.Error("a nil KeySet found a key")
	}
}

func TestKeySetErrors(t *testing.T) {
	good := HashKey("k")
	for _, c := range []struct {
		hashes map[string]string
		want   []string
	}{
		{map[string]string{"ci": "md5:abc"}, []string{`API key "ci"`, `does not start with "sha256:"`}},
		{map[string]string{"ci": "sha256:abc"}, []string{`API key "ci"`, "3 hex digits"}},
		{map[string]string{"ci": strings.ToUpper(good[:7]) + good[7:]}, []string{`API key "ci"`}},
		{map[string]string{"ci": "sha256:" + strings.Repeat("A", 64)}, []string{`API key "ci"`, "lowercase hex"}},
		{map[string]string{"ci": "twk_" + strings.Repeat("a", 43)}, []string{`API key "ci"`, "key in clear"}},
		{map[string]string{"a": good, "b": good}, []string{`API key "b": same hash as API key "a"`}},
		{map[string]string{"": good}, []string{"empty name"}},
		{map[string]string{"x": "", "y": "sha256:"}, []string{`API key "x"`, `API key "y"`}},
	} {
		_, err := NewKeySet(c.hashes)
		if err == nil {
			t.Errorf("NewKeySet(%v): no error", c.hashes)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("NewKeySet(%v) = %v; want it to say %q", c.hashes, err, w)
			}
		}
		if strings.Contains(err.Error(), "twk_aaaa") {
			t.Errorf("error echoes a key in clear: %v", err)
		}
	}
}

func TestFromRequest(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	for name, c := range map[string]struct {
		h       http.Header
		want    string
		wantErr string
	}{
		"none":              {hdr(), "", ""},
		"bearer":            {hdr("Authorization", "Bearer twk_a"), "twk_a", ""},
		"bearer lowercase":  {hdr("Authorization", "bearer  twk_a "), "twk_a", ""},
		"x-api-key":         {hdr("X-API-Key", "twk_b"), "twk_b", ""},
		"both, same":        {hdr("Authorization", "Bearer twk_a", "X-Api-Key", "twk_a"), "twk_a", ""},
		"both, different":   {hdr("Authorization", "Bearer twk_a", "X-API-Key", "twk_b"), "", "different credentials"},
		"basic":             {hdr("Authorization", "Basic dXNlcjpwYXNz"), "", "unsupported Authorization scheme"},
		"empty bearer":      {hdr("Authorization", "Bearer "), "", "empty bearer"},
		"bare scheme":       {hdr("Authorization", "Bearer"), "", "empty bearer"},
		"empty x-api-key":   {hdr("X-API-Key", " "), "", "empty X-API-Key"},
		"two authorization": {hdr("Authorization", "Bearer a", "Authorization", "Bearer a"), "", "more than one Authorization"},
		"two x-api-key":     {hdr("X-API-Key", "a", "X-API-Key", "b"), "", "more than one X-API-Key"},
	} {
		got, err := FromRequest(c.h)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: FromRequest = %q, %v; want error %q", name, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: FromRequest = %q, %v; want %q", name, got, err, c.want)
		}
	}
}
