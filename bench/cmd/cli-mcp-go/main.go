// Command cli-mcp-go is the mcp-go client of the benchmark's client workload, as its
// own process (see internal/climain).
package main

import (
	"github.com/toolwire/toolwire/bench/clients/mcpgo"
	"github.com/toolwire/toolwire/bench/internal/climain"
)

func main() { climain.Main(mcpgo.Connect) }
