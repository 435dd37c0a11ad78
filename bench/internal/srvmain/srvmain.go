// Package srvmain is the main function every benchmark server process
// shares: serve one library's handler over HTTP (with a stats endpoint
// beside it) or over stdio, and write pprof profiles on the way out.
package srvmain

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/bench/internal/procs"
)

// Paths on the HTTP server.
const (
	MCPPath   = "/mcp"
	StatsPath = "/debug/stats"
)

// Stats is what StatsPath reports, measured after two forced GCs.
type Stats struct {
	HeapAlloc  uint64 `json:"heapAlloc"`  // live heap bytes
	HeapInuse  uint64 `json:"heapInuse"`  // bytes in in-use spans
	Goroutines int    `json:"goroutines"` // runtime.NumGoroutine
	RSS        uint64 `json:"rss"`        // VmRSS from /proc/self/status
}

// ReadStats measures the process now.
func ReadStats() Stats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Stats{HeapAlloc: ms.HeapAlloc, HeapInuse: ms.HeapInuse, Goroutines: runtime.NumGoroutine(), RSS: rss()}
}

func rss() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// Main runs a server process. handler builds the Streamable HTTP handler;
// stdio serves on stdin/stdout until stdin ends.
//
// Flags: -stdio (else HTTP on -addr, printing "LISTEN <url>" once ready and
// exiting on SIGTERM or when stdin closes), -cpuprofile and -memprofile
// (an alloc profile) written at exit.
func Main(handler func() (http.Handler, error), stdio func(context.Context) error) {
	useStdio := flag.Bool("stdio", false, "serve MCP over stdin/stdout")
	addr := flag.String("addr", "127.0.0.1:0", "HTTP listen address")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile here")
	memProfile := flag.String("memprofile", "", "write an alloc profile here at exit")
	memRate := flag.Int("memprofilerate", 0, "runtime.MemProfileRate when -memprofile is set (0: default)")
	flag.Parse()
	if *memProfile != "" && *memRate > 0 {
		runtime.MemProfileRate = *memRate
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
	}
	var err error
	if *useStdio {
		err = stdio(context.Background())
	} else {
		err = serveHTTP(*addr, handler)
	}
	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		if werr := procs.WriteAllocs(*memProfile); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		fatal(err)
	}
}

func serveHTTP(addr string, handler func() (http.Handler, error)) error {
	h, err := handler()
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(MCPPath, h)
	mux.HandleFunc(StatsPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ReadStats())
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Printf("LISTEN http://%s%s\n", ln.Addr(), MCPPath)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	eof := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(eof) }()
	select {
	case <-stop:
	case <-eof:
	case err := <-done:
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx) // streams left open by a library are cut, that's fine
	return nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchserver:", err)
	os.Exit(1)
}
