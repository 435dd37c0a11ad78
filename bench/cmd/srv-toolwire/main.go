// Command srv-toolwire is the toolwire server of the benchmark, as its own process.
package main

import (
	"github.com/toolwire/toolwire/bench/impls/toolwire"
	"github.com/toolwire/toolwire/bench/internal/srvmain"
)

func main() { srvmain.Main(toolwire.Handler, toolwire.ServeStdio) }
