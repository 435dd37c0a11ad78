package httpguard_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
)

// redirector answers /hop/N with a redirect to /hop/N-1 and /hop/0 with
// 200, the Authorization header it got as the body; /away redirects to
// target.
func redirector(t *testing.T, target func() string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/away":
			http.Redirect(w, r, target(), http.StatusTemporaryRedirect)
		case strings.HasPrefix(r.URL.Path, "/hop/") && r.URL.Path != "/hop/0":
			n := strings.TrimPrefix(r.URL.Path, "/hop/")
			prev := map[string]string{"1": "0", "2": "1", "3": "2", "4": "3"}[n]
			http.Redirect(w, r, "/hop/"+prev, http.StatusTemporaryRedirect)
		default:
			io.WriteString(w, "auth="+r.Header.Get("Authorization"))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func get(t *testing.T, c *http.Client, method, u string) (int, string, error) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader("body"))
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestOutboundRedirects(t *testing.T) {
	other := redirector(t, nil)
	s := redirector(t, func() string { return other.URL + "/hop/0" })
	refused := errors.New("refused elsewhere")
	for _, tc := range []struct {
		name   string
		o      httpguard.Outbound
		method string
		path   string
		status int    // 0: an error
		body   string // or the error's text
	}{
		{"none", httpguard.Outbound{}, http.MethodGet, "/hop/1", http.StatusTemporaryRedirect, ""},
		{"same origin followed", httpguard.Outbound{Redirects: httpguard.SameOriginRedirects}, http.MethodGet, "/hop/2", 200, "auth=Bearer secret"},
		{"same origin, elsewhere returned", httpguard.Outbound{Redirects: httpguard.SameOriginRedirects}, http.MethodGet, "/away", http.StatusTemporaryRedirect, ""},
		{"same origin, elsewhere refused", httpguard.Outbound{Redirects: httpguard.SameOriginRedirects, Refuse: func(*url.URL) error { return refused }}, http.MethodGet, "/away", 0, "refused elsewhere"},
		{"no POST: POST returned", httpguard.Outbound{Redirects: httpguard.SameOriginNoPOSTRedirects}, http.MethodPost, "/hop/1", http.StatusTemporaryRedirect, ""},
		{"no POST: GET followed", httpguard.Outbound{Redirects: httpguard.SameOriginNoPOSTRedirects}, http.MethodGet, "/hop/1", 200, "auth=Bearer secret"},
		{"checked: elsewhere followed without credentials", httpguard.Outbound{Redirects: httpguard.CheckedRedirects}, http.MethodGet, "/away", 200, "auth="},
		{"checked: refused by Check", httpguard.Outbound{Redirects: httpguard.CheckedRedirects, Check: func(u *url.URL) error {
			if u.Host != strings.TrimPrefix(s.URL, "http://") {
				return refused
			}
			return nil
		}}, http.MethodGet, "/away", 0, "refused elsewhere"},
		{"at most MaxRedirects", httpguard.Outbound{Redirects: httpguard.SameOriginRedirects, MaxRedirects: 2}, http.MethodGet, "/hop/3", 0, "stopped after 2 redirects"},
		{"exactly MaxRedirects", httpguard.Outbound{Redirects: httpguard.SameOriginRedirects, MaxRedirects: 2}, http.MethodGet, "/hop/2", 200, "auth=Bearer secret"},
		{"negative MaxRedirects: none", httpguard.Outbound{Redirects: httpguard.CheckedRedirects, MaxRedirects: -1}, http.MethodGet, "/hop/1", 0, "redirects are not followed"},
		{"the setting named", httpguard.Outbound{Redirects: httpguard.CheckedRedirects, MaxRedirects: 1, MaxRedirectsName: "Config.MaxRedirects"}, http.MethodGet, "/hop/2", 0, "stopped after 1 redirects (Config.MaxRedirects)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, err := get(t, tc.o.Client(), tc.method, s.URL+tc.path)
			if tc.status == 0 {
				if err == nil || !strings.Contains(err.Error(), tc.body) {
					t.Fatalf("status %d %q, err %v; want an error saying %q", status, body, err, tc.body)
				}
				return
			}
			if err != nil || status != tc.status || (tc.body != "" && body != tc.body) {
				t.Fatalf("status %d %q, err %v; want %d %q", status, body, err, tc.status, tc.body)
			}
		})
	}
}

// The caller's client is copied, not changed; its CheckRedirect is asked
// after the rule, and its timeout wins over Outbound's.
func TestOutboundBase(t *testing.T) {
	s := redirector(t, nil)
	asked := 0
	base := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error {
		asked++
		return errors.New("the caller refuses")
	}}
	c := httpguard.Outbound{Base: base, Timeout: time.Second, Redirects: httpguard.SameOriginRedirects}.Client()
	if c == base || c.Timeout != time.Minute {
		t.Fatalf("client %p (base %p), timeout %v", c, base, c.Timeout)
	}
	if _, _, err := get(t, c, http.MethodGet, s.URL+"/hop/1"); err == nil || !strings.Contains(err.Error(), "the caller refuses") || asked != 1 {
		t.Fatalf("err %v, asked %d", err, asked)
	}
	if _, _, err := get(t, base, http.MethodGet, s.URL+"/hop/1"); err == nil || asked != 2 {
		t.Fatalf("the base client changed: err %v, asked %d", err, asked)
	}
	if c := (httpguard.Outbound{Timeout: time.Second}).Client(); c.Timeout != time.Second {
		t.Fatalf("no base: timeout %v", c.Timeout)
	}
}

func TestReadLimited(t *testing.T) {
	if b, err := httpguard.ReadLimited(strings.NewReader("12345"), 5); err != nil || string(b) != "12345" {
		t.Fatalf("%q, %v", b, err)
	}
	r := strings.NewReader("123456789")
	_, err := httpguard.ReadLimited(r, 5)
	var tl *httpguard.TooLongError
	if !errors.As(err, &tl) || tl.Max != 5 || err.Error() != "longer than the limit of 5 bytes" {
		t.Fatalf("%v", err)
	}
	if r.Len() != 3 {
		t.Fatalf("read %d bytes past the limit, want 1", 9-5-r.Len())
	}
}
