// Command srv-go-sdk is the go-sdk server of the benchmark, as its own process.
// With -stateless it serves the SDK's stateless handler, which the 2026-07-28
// workloads need (see gosdk.StatelessHandler).
package main

import (
	"flag"
	"net/http"

	"github.com/toolwire/toolwire/bench/impls/gosdk"
	"github.com/toolwire/toolwire/bench/internal/srvmain"
)

func main() {
	stateless := flag.Bool("stateless", false, "serve the stateless handler (2026-07-28)")
	srvmain.Main(func() (http.Handler, error) {
		if *stateless {
			return gosdk.StatelessHandler()
		}
		return gosdk.Handler()
	}, gosdk.ServeStdio)
}
