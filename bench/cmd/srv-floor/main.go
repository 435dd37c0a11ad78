// Command srv-floor is the floor server of the benchmark, as its own process.
package main

import (
	"github.com/toolwire/toolwire/bench/impls/floor"
	"github.com/toolwire/toolwire/bench/internal/srvmain"
)

func main() { srvmain.Main(floor.Handler, floor.ServeStdio) }
