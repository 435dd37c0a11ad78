package oauth

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/testwait"
)

func TestLoopbackUserAgent(t *testing.T) {
	addr := testenv.FreeAddr(t)
	redirect := "http://" + addr + "/callback"
	var opened string
	page := make(chan string, 1)
	ua := LoopbackUserAgent{Open: func(ctx context.Context, u string) error {
		opened = u
		// The "browser": the authorization server redirects back at once.
		go func() {
			resp, err := http.Get(redirect + "?code=c1&state=s1")
			if err != nil {
				page <- "error: " + err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			page <- string(b)
		}()
		return nil
	}}
	ctx := testwait.Context(t)
	cb, err := ua.Authorize(ctx, "https://as.example.com/authorize?x=1", redirect)
	if err != nil {
		t.Fatal(err)
	}
	if opened != "https://as.example.com/authorize?x=1" || cb.Query().Get("code") != "c1" || cb.Path != "/callback" {
		t.Errorf("opened %q, callback %v", opened, cb)
	}
	// The browser gets its page even though Authorize has returned.
	if p := testwait.Recv(t, page, "the browser's page"); !strings.Contains(p, "Authorization complete") {
		t.Errorf("the browser got %q", p)
	}
	if _, err := ua.Authorize(ctx, "https://as", "http://example.com:80/cb"); err == nil {
		t.Error("a non-loopback redirect URI was accepted")
	}
}
