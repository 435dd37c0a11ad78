package otc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/otc"
)

func TestNamingRule(t *testing.T) {
	n := otc.Naming{Toolkit: "Ref"}
	for name, want := range map[string]string{
		"Gmail.GetEmails":             "Gmail.GetEmails@1.0.0 Gmail_GetEmails",
		"get-sum":                     "Ref.get_sum@1.0.0 Ref_get_sum",
		"com.example.weather.get":     "com_example_weather.get@1.0.0 com_example_weather_get",
		"trigger-long-running-op.run": "trigger_long_running_op.run@1.0.0 trigger_long_running_op_run",
	} {
		ref, err := n.Map(&mcp.Tool{Name: name})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := ref.ID() + " " + ref.Name(); got != want {
			t.Errorf("%s -> %s, want %s", name, got, want)
		}
	}
	custom := otc.Naming{Toolkit: "K", Separator: "__", Replacement: "X", Version: "2.3.4"}
	ref, err := custom.Map(&mcp.Tool{Name: "a.b__c-d"})
	if err != nil || ref.ID() != "aXb.cXd@2.3.4" {
		t.Errorf("custom rule: %v %v", ref, err)
	}
	ref, err = n.Map(&mcp.Tool{Name: "x", Meta: mcp.Meta{otc.MetaToolID: "Calc.Add", otc.MetaToolVersion: "3.1.4"}})
	if err != nil || ref.ID() != "Calc.Add@3.1.4" {
		t.Errorf("meta override: %v %v", ref, err)
	}
	for name, tool := range map[string]*mcp.Tool{
		"bad meta id":      {Name: "x", Meta: mcp.Meta{otc.MetaToolID: "no-dot"}},
		"meta id with ver": {Name: "x", Meta: mcp.Meta{otc.MetaToolID: "A.B@1"}},
		"bad meta version": {Name: "x", Meta: mcp.Meta{otc.MetaToolVersion: "v1"}},
		"empty part":       {Name: "x."},
		"name too long":    {Name: strings.Repeat("a", 40) + "." + strings.Repeat("b", 40)},
	} {
		if _, err := n.Map(tool); err == nil {
			t.Errorf("%s: mapped without error", name)
		}
	}
	skip := otc.Naming{Func: func(t *mcp.Tool) (otc.Ref, error) {
		if t.Name == "hidden" {
			return otc.Ref{}, otc.ErrSkipTool
		}
		return otc.Ref{Toolkit: "F", Tool: t.Name, Version: "1.0.0"}, nil
	}}
	if _, err := skip.Map(&mcp.Tool{Name: "hidden"}); !errors.Is(err, otc.ErrSkipTool) {
		t.Errorf("skip: %v", err)
	}
	if _, err := otc.NewHandler(&fakeBackend{}, otc.WithNaming(otc.Naming{Replacement: "-"})); err == nil {
		t.Error("a replacement OTC ids do not allow is accepted")
	}
}

func TestNamingCollisions(t *testing.T) {
	meta := func(id, v string) mcp.Meta { return mcp.Meta{otc.MetaToolID: id, otc.MetaToolVersion: v} }
	for name, tc := range map[string]struct {
		tools []*mcp.Tool
		want  string
	}{
		"same id":        {[]*mcp.Tool{{Name: "a-b"}, {Name: "a_b"}}, "same OTC id"},
		"same via meta":  {[]*mcp.Tool{{Name: "x", Meta: meta("A.B", "1.0.0")}, {Name: "A.B"}}, "same OTC id"},
		"same semver":    {[]*mcp.Tool{{Name: "x", Meta: meta("A.B", "1.0.0")}, {Name: "y", Meta: meta("A.B", "01.0.0")}}, "same version"},
		"same name":      {[]*mcp.Tool{{Name: "a_b.c"}, {Name: "a.b_c"}}, "same OTC name"},
		"bad input":      {[]*mcp.Tool{{Name: "x", InputSchema: []byte(`{"$schema":"urn:nope"}`)}}, "inputSchema does not compile"},
		"unmappable one": {[]*mcp.Tool{{Name: "ok"}, {Name: "x", Meta: meta("bad", "1.0.0")}}, `"x"`},
	} {
		for _, tool := range tc.tools {
			if tool.InputSchema == nil {
				tool.InputSchema = []byte(`{"type":"object"}`)
			}
		}
		h, err := otc.NewHandler(&fakeBackend{tools: tc.tools})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Tools(t.Context())
		var me *otc.MappingError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Versions of one tool under different MCP names are not a collision.
	h, _ := otc.NewHandler(&fakeBackend{tools: []*mcp.Tool{
		{Name: "x", Meta: meta("A.B", "1.0.0"), InputSchema: []byte(`{"type":"object"}`)},
		{Name: "y", Meta: meta("A.B", "2.0.0"), InputSchema: []byte(`{"type":"object"}`)},
	}})
	defs, err := h.Tools(t.Context())
	if err != nil || len(defs) != 2 || defs[0].Name != defs[1].Name {
		t.Errorf("versions: %+v %v", defs, err)
	}
}
