package otc

import (
	"net/http"
	"testing"
	"time"
)

// Without WithHTTPClient a request is bounded by DefaultTimeout (not
// http.DefaultClient, which waits forever); with it, the caller's timeout
// holds.
func TestClientTimeout(t *testing.T) {
	c, err := NewClient("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if c.http == http.DefaultClient || c.http.Timeout != DefaultTimeout || DefaultTimeout <= 0 {
		t.Errorf("default HTTP client: timeout %v", c.http.Timeout)
	}
	mine := &http.Client{Timeout: 5 * time.Second}
	c, err = NewClient("http://127.0.0.1:1", WithHTTPClient(mine))
	if err != nil {
		t.Fatal(err)
	}
	if c.http == mine || c.http.Timeout != 5*time.Second || mine.CheckRedirect != nil {
		t.Errorf("the caller's client: timeout %v, shared %v, CheckRedirect set %v", c.http.Timeout, c.http == mine, mine.CheckRedirect != nil)
	}
}
