// Command cli-toolwire is the toolwire client of the benchmark's client workload, as its
// own process (see internal/climain).
package main

import (
	"github.com/toolwire/toolwire/bench/clients/toolwire"
	"github.com/toolwire/toolwire/bench/internal/climain"
)

func main() { climain.Main(toolwire.Connect) }
