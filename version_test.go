package toolwire

import (
	"runtime/debug"
	"testing"
	"time"
)

// TestReadBuild: the version comes from the main module or, in a program
// that depends on toolwire, from the dependency (its replacement when
// replaced); the VCS settings only from the main module; "(devel)" when
// nothing says.
func TestReadBuild(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-27T18:50:00Z"}, {Key: "vcs.modified", Value: "true"}}
	cases := []struct {
		name string
		info *debug.BuildInfo
		want Build
	}{
		{"no build info", nil, Build{Version: "(devel)"}},
		{"main module from a checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: modulePath, Version: "v0.0.0-20261127185000-abc123+dirty"}, Settings: vcs},
			Build{Version: "v0.0.0-20261127185000-abc123+dirty", Commit: "abc123", Time: time.Date(2026, 11, 27, 18, 50, 0, 0, time.UTC), Modified: true, GoVersion: "go1.26.8"}},
		{"go install @v1.2.3", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: modulePath, Version: "v1.2.3"}},
			Build{Version: "v1.2.3", GoVersion: "go1.26.8"}},
		{"a dependency", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/app", Version: "(devel)"}, Settings: vcs,
			Deps: []*debug.Module{{Path: "example.com/x", Version: "v9"}, {Path: modulePath, Version: "v1.4.0"}}},
			Build{Version: "v1.4.0", GoVersion: "go1.26.8"}},
		{"a replaced dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v1.4.0", Replace: &debug.Module{Path: "../toolwire", Version: ""}}}},
			Build{Version: "(devel)"}},
	}
	for _, c := range cases {
		got := readBuild(func() (*debug.BuildInfo, bool) { return c.info, c.info != nil })
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	stamped = "v2.0.0"
	defer func() { stamped = "" }()
	if got := readBuild(func() (*debug.BuildInfo, bool) { return nil, false }); got.Version != "v2.0.0" {
		t.Errorf("a stamped version: %+v", got)
	}
}
