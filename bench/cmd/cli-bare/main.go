// Command cli-bare is the bare client of the benchmark's client workload, as its
// own process (see internal/climain).
package main

import (
	"github.com/toolwire/toolwire/bench/clients/bare"
	"github.com/toolwire/toolwire/bench/internal/climain"
)

func main() { climain.Main(bare.Connect) }
