package auth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestMetadataURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://mcp.example.com/mcp": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com/":    "https://mcp.example.com/.well-known/oauth-protected-resource",
		"https://mcp.example.com":     "https://mcp.example.com/.well-known/oauth-protected-resource",
		"http://127.0.0.1:8080/a/b/":  "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/b",
		"https://h/mcp?tenant=1":      "https://h/.well-known/oauth-protected-resource/mcp?tenant=1",
		"https://h/sp%20ace":          "https://h/.well-known/oauth-protected-resource/sp%20ace",
	} {
		got, err := MetadataURL(in)
		if err != nil || got != want {
			t.Errorf("MetadataURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"/mcp", "mcp.example.com", "https://h/mcp#frag", "://"} {
		if _, err := MetadataURL(bad); err == nil {
			t.Errorf("MetadataURL(%q) accepted", bad)
		}
	}
	if p := MetadataPath("/mcp"); p != "/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("MetadataPath = %q", p)
	}
}

func TestMetadataHandler(t *testing.T) {
	h := MetadataHandler(ResourceMetadata{Resource: "https://mcp.example.com/mcp",
		AuthorizationServers: []string{"https://as.example.com"}, ScopesSupported: []string{"mcp", "admin"}, ResourceName: "toolwire"})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, MetadataPath("/mcp"), nil))
	var md map[string]any
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || json.Unmarshal(w.Body.Bytes(), &md) != nil {
		t.Fatalf("GET: %d %s", w.Code, w.Body)
	}
	want := map[string]any{"resource": "https://mcp.example.com/mcp", "authorization_servers": []any{"https://as.example.com"},
		"scopes_supported": []any{"mcp", "admin"}, "bearer_methods_supported": []any{"header"}, "resource_name": "toolwire"}
	if len(md) != len(want) {
		t.Fatalf("metadata = %v", md)
	}
	for k, v := range want {
		got, _ := json.Marshal(md[k])
		exp, _ := json.Marshal(v)
		if string(got) != string(exp) {
			t.Errorf("%s = %s, want %s", k, got, exp)
		}
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
	if w.Code != 200 || w.Body.Len() != 0 {
		t.Fatalf("HEAD: %d, %d bytes", w.Code, w.Body.Len())
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
	if w.Code != http.StatusMethodNotAllowed || !slices.Contains([]string{"GET, HEAD, OPTIONS"}, w.Header().Get("Allow")) {
		t.Fatalf("POST: %d", w.Code)
	}
}
