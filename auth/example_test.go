package auth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolwire/toolwire/auth"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// An HTTP middleware in front of the streamable handler authenticates each
// request and puts the caller on its context; tools read it in both eras.
func ExampleWithPrincipal() {
	keys := map[string]*auth.Principal{"key-ada": {Subject: "ada", Scopes: []string{"tools:call"}}}
	authenticate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := keys[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
			if !ok {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
		})
	}

	srv := server.New(mcp.Implementation{Name: "whoami", Version: "1.0.0"})
	type none struct{}
	_ = server.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *server.CallRequest, _ none) (string, error) {
		p := req.Principal()
		return fmt.Sprintf("%s (may call tools: %v)", p.Subject, p.HasScope("tools:call")), nil
	})
	h := streamable.NewHandler(srv)
	ts := httptest.NewServer(authenticate(h))
	defer ts.Close()
	defer h.Close()

	_, text, err := callWhoami(ts.URL, "key-ada")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	// Output: ada (may call tools: true)
}

// callWhoami sends a stateless 2026-07-28 tools/call of the whoami tool to
// url, with token as the bearer token (none when empty), and returns the
// response and the text of the result's first content block.
func callWhoami(url, token string) (*http.Response, string, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami",` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "whoami"} {
		req.Header.Set(k, v)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var reply struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	_ = json.Unmarshal(raw, &reply)
	if len(reply.Result.Content) == 0 {
		return resp, "", nil
	}
	return resp, reply.Result.Content[0].Text, nil
}
