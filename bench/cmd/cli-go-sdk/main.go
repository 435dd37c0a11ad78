// Command cli-go-sdk is the go-sdk client of the benchmark's client workload, as its
// own process (see internal/climain).
package main

import (
	"github.com/toolwire/toolwire/bench/clients/gosdk"
	"github.com/toolwire/toolwire/bench/internal/climain"
)

func main() { climain.Main(gosdk.Connect) }
