// Package impls names the benchmarked servers. Each subpackage builds one
// server's Streamable HTTP handler and serves it over stdio, through the
// library's own idiomatic API.
package impls

// Names of the servers, in the order of the first repetition.
const (
	Floor    = "floor"
	Toolwire = "toolwire"
	GoSDK    = "go-sdk"
	MCPGo    = "mcp-go"
)

// All lists every server; the floor first, as every ratio is to it.
var All = []string{Floor, Toolwire, GoSDK, MCPGo}
