package oauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	strict := netPolicy{}
	loose := netPolicy{allowLoopback: true, allowPrivate: true}
	for _, tc := range []struct {
		addr          string
		strict, loose bool // allowed
	}{
		{"93.184.216.34", true, true},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true},
		{"10.0.0.1", false, true},
		{"172.16.5.4", false, true},
		{"192.168.1.1", false, true},
		{"100.64.0.1", false, true},
		{"fd00::1", false, true},
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"::ffff:127.0.0.1", false, true},
		{"169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"ff02::1", false, false},
	} {
		a := netip.MustParseAddr(tc.addr)
		if got := strict.checkAddr(a) == nil; got != tc.strict {
			t.Errorf("strict %s: allowed %v", tc.addr, got)
		}
		if got := loose.checkAddr(a) == nil; got != tc.loose {
			t.Errorf("loose %s: allowed %v", tc.addr, got)
		}
	}
}

func TestCheckURL(t *testing.T) {
	p := netPolicy{allowLoopback: true}
	for raw, ok := range map[string]bool{
		"https://as.example.com/x":        true,
		"http://localhost:9000/x":         true,
		"http://127.0.0.1:9000/x":         true,
		"http://[::1]:9000/x":             true,
		"http://as.example.com/x":         false,
		"ftp://as.example.com/x":          false,
		"https://user:pw@as.example.com/": false,
		"https://as.example.com/#frag":    false,
		"/relative":                       false,
		"https://10.1.2.3/":               false,
		"javascript:alert(1)":             false,
	} {
		if _, err := p.checkURL("test URL", raw); (err == nil) != ok {
			t.Errorf("checkURL(%q) = %v", raw, err)
		}
	}
	if _, err := (netPolicy{}).checkURL("test URL", "http://localhost:1/"); err == nil {
		t.Error("loopback http allowed although loopback is not")
	}
}

// The guard runs at dial time, on the resolved address: a host name that
// resolves to loopback (as a rebinding name would) is refused although no
// URL check saw an IP address.
func TestDialGuardSeesResolvedAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	hc := newGuardedClient(netPolicy{}, 0, 0)
	_, err := hc.Get("http://localhost:" + port + "/")
	if !errors.Is(err, ErrUnsafeURL) {
		t.Fatalf("got %v, want the dial refused", err)
	}
	hc = newGuardedClient(netPolicy{allowLoopback: true}, 0, 0)
	resp, err := hc.Get("http://localhost:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// A redirect to a plain-http or private destination is not followed.
func TestGuardedRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://metadata.example.com/x", http.StatusFound)
	}))
	defer srv.Close()
	_, err := newGuardedClient(netPolicy{allowLoopback: true}, 0, 0).Get(srv.URL)
	if !errors.Is(err, ErrUnsafeURL) {
		t.Fatalf("got %v", err)
	}
}
