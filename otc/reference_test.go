package otc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/otc"
	"github.com/toolwire/toolwire/reference"
)

// TestReferenceToolsOverOTC is what `toolwire serve --otc-addr` serves: every
// reference tool maps to a distinct OTC id and can be called.
func TestReferenceToolsOverOTC(t *testing.T) {
	srv, err := reference.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	h, err := otc.NewHandler(otc.NewServerBackend(srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	defs, _ := h.Tools(t.Context())
	if len(defs) != len(srv.Tools()) {
		t.Errorf("%d definitions for %d tools", len(defs), len(srv.Tools()))
	}
	for _, d := range defs {
		if !strings.HasPrefix(d.ID, "toolwire_reference.") {
			t.Errorf("id %s: the default toolkit is the server's name", d.ID)
		}
	}
	ts := newTestServer(t, h)
	for id, want := range map[string]string{
		"toolwire_reference.get_sum":        `"The sum of 2 and 3 is 5."`,
		"toolwire_reference.echo@1":         `"Echo: hi"`,
		"toolwire_reference.get_tiny_image": `[{"type":"text"`,
	} {
		in := map[string]any{"a": 2, "b": 3}
		if strings.Contains(id, "echo") {
			in = map[string]any{"message": "hi"}
		} else if strings.Contains(id, "image") {
			in = nil
		}
		r := call(t, ts, map[string]any{"tool_id": id, "input": in}, nil)
		wantStatus(t, r, http.StatusOK)
		if !strings.Contains(string(r.raw), `"value":`+want) {
			t.Errorf("%s: %s", id, r.raw)
		}
		if err := validate(t, loadSchema(t, "call-tool-response.json"), r.body["result"]); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	// A toolkit of one's choosing.
	h, _ = otc.NewHandler(otc.NewServerBackend(srv), otc.WithNaming(otc.Naming{Toolkit: "Reference"}))
	defs, err = h.Tools(t.Context())
	if err != nil || defs[0].ID != "Reference.echo@1.0.0" {
		t.Errorf("WithNaming: %v %v", defs[0].ID, err)
	}
}
