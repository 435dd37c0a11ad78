package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testmcp"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

type reading struct {
	Temp float64 `json:"temp"`
}

// nullableServer is a toolwire server over Streamable HTTP with a tool whose
// declared outputSchema allows null ("maybe", a nil *reading for city "") and
// one whose output is a slice ("none", always a nil slice).
func nullableServer(t *testing.T) *client.HTTP {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "nullable", Version: "1"})
	type cityIn struct {
		City string `json:"city"`
	}
	err := server.AddTool(s, &mcp.Tool{Name: "maybe",
		OutputSchema: json.RawMessage(`{"type":["object","null"],"properties":{"temp":{"type":"number"}},"required":["temp"]}`)},
		func(ctx context.Context, req *server.CallRequest, in cityIn) (*reading, error) {
			if in.City == "" {
				return nil, nil
			}
			return &reading{Temp: 21}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	err = server.AddTool(s, &mcp.Tool{Name: "none"}, func(ctx context.Context, req *server.CallRequest, _ struct{}) ([]int, error) {
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &client.HTTP{URL: testmcp.ServeHTTP(t, s)}
}

// TestNullStructuredContentFromToolwire: toolwire's client accepts the
// structuredContent null that toolwire's server sends (2026-07-28) when the
// tool's outputSchema allows null, and a nil slice arrives as [].
func TestNullStructuredContentFromToolwire(t *testing.T) {
	c := connect(t, nullableServer(t), client.WithEra(mcp.EraModern))
	ctx := context.Background()
	res, err := c.CallTool(ctx, "maybe", map[string]any{"city": ""})
	if err != nil {
		t.Fatalf("structuredContent null refused: %v", err)
	}
	if string(res.StructuredContent) != "null" {
		t.Errorf("structuredContent = %q, want null", res.StructuredContent)
	}
	r, err := client.CallToolAs[*reading](ctx, c, "maybe", map[string]any{"city": ""})
	if err != nil || r != nil {
		t.Errorf("CallToolAs: %v, %v; want nil, nil", r, err)
	}
	r, err = client.CallToolAs[*reading](ctx, c, "maybe", map[string]any{"city": "x"})
	if err != nil || r == nil || r.Temp != 21 {
		t.Errorf("CallToolAs: %v, %v", r, err)
	}
	primes, err := client.CallToolAs[[]int](ctx, c, "none", nil)
	if err != nil || primes == nil || len(primes) != 0 {
		t.Errorf("nil slice output: %#v, %v; want [], nil", primes, err)
	}
}

// scriptedStructured is a 2026-07-28 server whose tool t declares schema as
// its outputSchema and answers every call with result.
func scriptedStructured(t *testing.T, schema, result string) *client.Client {
	t.Helper()
	f := modernFake(t, `[{"name":"t","inputSchema":{"type":"object"},"outputSchema":`+schema+`}]`,
		func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
			writeResult(w, req.ID, result)
		})
	return connect(t, f.transport())
}

// TestNullStructuredContentIsAValue: a present structuredContent, null
// included, is a value checked against the outputSchema: accepted when the
// schema allows null, a ProtocolError naming the path when it does not; an
// absent one with an outputSchema is still refused as missing.
func TestNullStructuredContentIsAValue(t *testing.T) {
	ctx := context.Background()
	const withNull = `{"resultType":"complete","content":[{"type":"text","text":"null"}],"structuredContent":null}`

	c := scriptedStructured(t, `{"type":["object","null"]}`, withNull)
	res, err := c.CallTool(ctx, "t", nil)
	if err != nil {
		t.Fatalf("null refused by a schema that allows it: %v", err)
	}
	if string(res.StructuredContent) != "null" {
		t.Errorf("structuredContent = %q, want null", res.StructuredContent)
	}

	c = scriptedStructured(t, `{"type":"object","properties":{"temp":{"type":"number"}}}`, withNull)
	_, err = c.CallTool(ctx, "t", nil)
	var pe *client.ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("null against an object schema: %v, want a ProtocolError", err)
	}
	if !strings.Contains(pe.Reason, "does not match the tool's outputSchema") || pe.Path != "/" || !strings.Contains(err.Error(), "null") {
		t.Errorf("ProtocolError reason %q path %q (%v)", pe.Reason, pe.Path, err)
	}

	c = scriptedStructured(t, `{"type":["object","null"]}`, `{"resultType":"complete","content":[{"type":"text","text":"null"}]}`)
	_, err = c.CallTool(ctx, "t", nil)
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "no structuredContent") || pe.Path != "/structuredContent" {
		t.Errorf("absent structuredContent: %v", err)
	}
}
