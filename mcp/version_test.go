package mcp_test

import (
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

func TestEraOf(t *testing.T) {
	for v, want := range map[string]mcp.Era{
		"2026-07-28": mcp.EraModern, "2025-11-25": mcp.EraLegacy, "2025-06-18": mcp.EraLegacy,
		"2025-03-26": mcp.EraLegacy, "2024-11-05": 0, "": 0, "DRAFT-2025-v3": 0,
	} {
		if got := mcp.EraOf(v); got != want {
			t.Errorf("EraOf(%q) = %v, want %v", v, got, want)
		}
	}
	s := mcp.SupportedVersions()
	if s[0] != mcp.LatestVersion || len(s) != 4 {
		t.Errorf("SupportedVersions = %v", s)
	}
	s[0] = "mutated"
	if mcp.SupportedVersions()[0] != mcp.LatestVersion {
		t.Error("SupportedVersions shares its backing array")
	}
}
