// Command srv-go-sdk is the go-sdk server of the benchmark, as its own process.
package main

import (
	"github.com/toolwire/toolwire/bench/impls/gosdk"
	"github.com/toolwire/toolwire/bench/internal/srvmain"
)

func main() { srvmain.Main(gosdk.Handler, gosdk.ServeStdio) }
