// Package toolwire is a Go toolkit for the Model Context Protocol: wire
// types (mcp, jsonrpc), a server hosting typed tools, resources and
// prompts (server), a client (client), the stdio and Streamable HTTP
// transports (transport/...), and a gateway putting many MCP servers behind
// one endpoint (gateway). This package holds what the whole module shares:
// its version.
package toolwire

import (
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// stamped is the version a release build sets with
// -ldflags "-X github.com/toolwire/toolwire.stamped=v1.2.3"; it wins over
// what the build info says.
var stamped string

// modulePath is this module's path, to find it among a program's
// dependencies.
const modulePath = "github.com/toolwire/toolwire"

// Build is what is known of how the running program's copy of this module
// was built.
type Build struct {
	// Version is the module version: a release tag ("v1.2.3"), a
	// pseudo-version for a build from a commit, or "(devel)" when nothing
	// says (a build outside any version control, as in `go run`).
	Version string
	// Commit is the VCS revision, "" when unknown (only known when this
	// module is the main one, built from its checkout).
	Commit string
	// Time is the commit's time, zero when unknown.
	Time time.Time
	// Modified says whether the checkout had uncommitted changes.
	Modified bool
	// GoVersion is the Go toolchain that built the program.
	GoVersion string
}

var (
	buildOnce sync.Once
	build     Build
)

// BuildInfo returns how this module was built, read once from the
// program's build information.
func BuildInfo() Build {
	buildOnce.Do(func() { build = readBuild(debug.ReadBuildInfo) })
	return build
}

// Version returns the module version (BuildInfo().Version): the version
// the CLI prints, and the one toolwire's clients and servers announce in
// their clientInfo and serverInfo by default.
func Version() string { return BuildInfo().Version }

func readBuild(read func() (*debug.BuildInfo, bool)) Build {
	b := Build{Version: "(devel)"}
	info, ok := read()
	if !ok {
		if stamped != "" {
			b.Version = stamped
		}
		return b
	}
	b.GoVersion = info.GoVersion
	mod := &info.Main
	if mod.Path != modulePath {
		mod = nil
		for _, d := range info.Deps {
			if d.Path == modulePath {
				mod = d
				if d.Replace != nil {
					mod = d.Replace
				}
				break
			}
		}
	}
	if mod != nil && mod.Version != "" {
		b.Version = mod.Version
	}
	if mod == &info.Main {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Time, _ = time.Parse(time.RFC3339, s.Value)
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if stamped != "" {
		b.Version = stamped
	}
	b.Version = strings.TrimSpace(b.Version)
	return b
}
