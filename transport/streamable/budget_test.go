package streamable

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testwait"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/transport"
)

// paddedCall is a 2025-era tools/call of tool padded through _meta (which
// the server checks without keeping) to size bytes.
func paddedCall(id int, tool string, size int) string {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"_meta":{"pad":"`, id, tool)
	tail := `"}}}`
	return head + strings.Repeat("p", size-len(head)-len(tail)) + tail
}

// waitInUse waits until the budget holds want bytes.
func waitInUse(t *testing.T, b *transport.MemoryBudget, want int64) {
	t.Helper()
	testwait.WaitForNil(t, fmt.Sprintf("the budget to hold %d bytes", want), func() error {
		if n := b.InUse(); n != want {
			return fmt.Errorf("it holds %d", n)
		}
		return nil
	})
}

// TestMemoryBudgetOverHTTP: a POST body is charged to the memory budget
// before it is decoded and until its call ends, even after the client drops
// the POST; past the budget a request gets 503, Retry-After and -32005,
// before its body is read when its length is declared (id null) and after
// reading it otherwise (its id recovered); a small cancellation is still
// handled when the budget is spent, and cancelling frees the budget.
func TestMemoryBudgetOverHTTP(t *testing.T) {
	f := newFixture(t)
	const size = 80 << 10 // past the 64 KiB a body may have to be read before the budget is asked
	first := paddedCall(2, "block", size)
	budget := transport.NewMemoryBudget(int64(len(first)))
	_, ts := testServer(t, f, WithMemoryBudget(budget))
	sid := initialize(t, ts.URL)
	waitInUse(t, budget, 0) // initialize and initialized are released once answered

	ctx, drop := context.WithCancel(context.Background())
	go func() {
		if resp, err := http.DefaultClient.Do(legacyRequest(t, ts.URL, sid, first).WithContext(ctx)); err == nil {
			resp.Body.Close()
		}
	}()
	testwait.Recv(t, f.started, "the blocking call")
	drop() // the client drops its POST; the call goes on and keeps its bytes
	waitInUse(t, budget, int64(len(first)))

	refused := func(r *http.Request, wantID any) {
		t.Helper()
		resp := do(t, r)
		body := readAll(t, resp)
		rep := decodeReply(t, body)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			rep.Error == nil || rep.Error.Code != jsonrpc.CodeOverloaded || fmt.Sprint(rep.ID) != fmt.Sprint(wantID) {
			t.Fatalf("past the budget: status %d, Retry-After %q, body %s; want 503, Retry-After, %d with id %v",
				resp.StatusCode, resp.Header.Get("Retry-After"), body, jsonrpc.CodeOverloaded, wantID)
		}
	}
	refused(legacyRequest(t, ts.URL, sid, paddedCall(3, "echo", size)), nil) // declared length: not read
	chunked := legacyRequest(t, ts.URL, sid, "")
	chunked.Body, chunked.ContentLength = io.NopCloser(strings.NewReader(paddedCall(4, "echo", size))), 0
	refused(chunked, float64(4))
	refused(modernRequest(t, ts.URL, 5, "tools/call", map[string]any{
		"name": "echo", "arguments": map[string]any{"message": strings.Repeat("m", size)}}), nil)
	if got := budget.InUse(); got != int64(len(first)) {
		t.Fatalf("refusals changed the budget: %d bytes held, want %d", got, len(first))
	}

	resp := do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`))
	if readAll(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancellation with the budget spent: status %d, want 202", resp.StatusCode)
	}
	testwait.Recv(t, f.stopped, "the cancelled call")
	waitInUse(t, budget, 0)

	resp = do(t, legacyRequest(t, ts.URL, sid, paddedCall(6, "echo", size)))
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":6`) {
		t.Fatalf("after the budget was freed: status %d: %.200s", resp.StatusCode, body)
	}
	waitInUse(t, budget, 0)
}

// TestNoMemoryBudget: with the budget off (here after a one-byte
// budget, which the later option overrides), bodies are admitted.
func TestNoMemoryBudget(t *testing.T) {
	f := newFixture(t)
	_, ts := testServer(t, f, WithMemoryBudget(transport.NewMemoryBudget(1)), WithMemoryBudget(nil))
	sid := initialize(t, ts.URL)
	resp := do(t, legacyRequest(t, ts.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`))
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Echo: hi") {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
}
