package admin

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
)

// bodyWatch counts a request as settled once the handler reads its body
// or returns without reading it.
type bodyWatch struct {
	io.ReadCloser
	once    sync.Once
	settled *atomic.Int32
}

func (b *bodyWatch) settle() { b.once.Do(func() { b.settled.Add(1) }) }

func (b *bodyWatch) Read(p []byte) (int, error) {
	b.settle()
	return b.ReadCloser.Read(p)
}

// TestLoginLimitParallel: 60 wrong admin keys posted at once from one
// address, their form bodies held back until the handler has either
// refused each request or begun reading its body, get the key compared at most the
// burst times (5): the others get 429 without their key being looked at.
// A login with the right key gives its token back, so logging in does not
// use up the failures allowed.
func TestLoginLimitParallel(t *testing.T) {
	const parallel = 60
	e := newEnv(t, true) // the clock stands still: no token comes back during the test
	var settled atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := &bodyWatch{ReadCloser: r.Body, settled: &settled}
		r.Body = b
		e.h.ServeHTTP(w, r)
		b.settle()
	}))
	t.Cleanup(srv.Close)
	newClient := func() *http.Client {
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Client{Jar: jar, Timeout: testwait.Limit,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	form := func(c *http.Client) string {
		r := do(t, c, "GET", srv.URL+"/admin/login", nil, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET /admin/login: %d", r.status)
		}
		return token(t, r.body)
	}
	post := func(c *http.Client, body io.Reader) (int, error) {
		req, err := http.NewRequest("POST", srv.URL+"/admin/login", body)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.URL)
		res, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, nil
	}

	// Logging in with the right key, more often than the burst, takes none
	// of the failures allowed.
	for range DefaultLoginBurst + 2 {
		c := newClient()
		body := url.Values{"key": {testKey}, "csrf": {form(c)}}.Encode()
		if s, err := post(c, strings.NewReader(body)); err != nil || s != http.StatusSeeOther {
			t.Fatalf("login with the right key: %d %v", s, err)
		}
	}

	type attempt struct {
		c    *http.Client
		body string
		w    *io.PipeWriter
	}
	attempts := make([]attempt, parallel)
	for i := range attempts {
		attempts[i].c = newClient()
		attempts[i].body = url.Values{"key": {"twk_wrong"}, "csrf": {form(attempts[i].c)}}.Encode()
	}
	settled.Store(0)
	statuses := make(chan int, parallel)
	var wg sync.WaitGroup
	for i := range attempts {
		pr, pw := io.Pipe()
		attempts[i].w = pw
		a := attempts[i]
		wg.Go(func() {
			s, err := post(a.c, pr)
			if err != nil {
				t.Error(err)
			}
			statuses <- s
		})
	}
	// Every attempt has passed or failed the limit before any key is sent.
	testwait.WaitFor(t, "every login to be refused or to read its form", func() bool {
		return settled.Load() == parallel
	})
	for _, a := range attempts {
		go func() {
			_, _ = io.WriteString(a.w, a.body)
			a.w.Close()
		}()
	}
	wg.Wait()
	close(statuses)
	checked, limited := 0, 0
	for s := range statuses {
		switch s {
		case http.StatusUnauthorized:
			checked++
		case http.StatusTooManyRequests:
			limited++
		default:
			t.Errorf("a wrong key got %d", s)
		}
	}
	logged := strings.Count(e.logs.String(), "admin: failed login")
	t.Logf("%d parallel wrong admin keys: %d compared (401), %d refused before the comparison (429)", parallel, checked, limited)
	if checked != DefaultLoginBurst || limited != parallel-DefaultLoginBurst || logged != checked {
		t.Fatalf("%d keys compared (%d logged), %d refused; want %d compared and %d refused",
			checked, logged, limited, DefaultLoginBurst, parallel-DefaultLoginBurst)
	}
	// Out of failures: even the right key waits now.
	c := newClient()
	body := url.Values{"key": {testKey}, "csrf": {form(c)}}.Encode()
	if s, err := post(c, strings.NewReader(body)); err != nil || s != http.StatusTooManyRequests {
		t.Fatalf("the right key after the burst: %d %v", s, err)
	}
}
