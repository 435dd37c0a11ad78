// Command srv-mcp-go is the mcp-go server of the benchmark, as its own process.
package main

import (
	"github.com/toolwire/toolwire/bench/impls/mcpgo"
	"github.com/toolwire/toolwire/bench/internal/srvmain"
)

func main() { srvmain.Main(mcpgo.Handler, mcpgo.ServeStdio) }
