package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestCallOverOTCRedirectKeepsTheKey: `toolwire call --otc URL
// --otc-api-key K` against a server that redirects to another origin
// fails as a transport error, and the other server never sees the key.
func TestCallOverOTCRedirectKeepsTheKey(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %v", r.Method, r.URL.Path, r.Header))
		mu.Unlock()
		w.Write([]byte(`{"tools":[]}`))
	}))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer origin.Close()
	for _, args := range [][]string{
		{"--otc-api-key", "otc-key-never-elsewhere"},
		{"--otc-api-key", "otc-key-never-elsewhere", "--otc-token", "otc-token-never-elsewhere"},
	} {
		r := runCLI(t, append(append([]string{"call", "--otc", origin.URL}, args...), "Calculator.Add", "a=1")...)
		if r.code != 3 || !strings.Contains(r.stderr, "ERR_OTC_TRANSPORT") || !strings.Contains(r.stderr, "not followed") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Errorf("the other origin was asked: %q", seen)
	}
}
