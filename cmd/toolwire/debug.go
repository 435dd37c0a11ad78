package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/httpguard"
)

// serveDebug serves the Go runtime's profiles (heap, goroutines, CPU) at
// /debug/pprof/ on addr, for soak tests and diagnosis. The profiles expose
// the process's internals, so addr must be a loopback address, and requests
// must name a loopback host (no DNS rebinding). The returned func stops it.
func serveDebug(ctx context.Context, addr string, logger *slog.Logger) (stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageError{fmt.Sprintf("invalid --debug-addr %q: %v", addr, err)}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, usageError{fmt.Sprintf("--debug-addr %q: profiles are served on a loopback address only", addr)}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "Host not allowed", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
	// The auxiliary listeners' bounds, with time to write a CPU profile
	// or trace of up to 90 s (pprof's seconds parameter).
	limits := httpguard.AuxLimits
	limits.WriteTimeout = 2 * time.Minute
	stop = limits.Serve(ln, handler, nil, func(err error) { logger.Error("debug server failed", "error", err) })
	logger.Info("serving runtime profiles at /debug/pprof/", "address", ln.Addr().String())
	return stop, nil
}

// sampleHeap leaves the runtime's heap profile sampling on only where
// --debug-addr serves the profile, or GODEBUG=memprofilerate says how
// to sample. Nothing else reads the profile, and sampling costs twice:
// stacks are unwound on every 512 KiB allocated, and each new stack is kept
// in a table that stays resident. In a gateway after a 64-caller run this is
// 0.7 MiB of RSS and some CPU per call.
func sampleHeap(debugAddr string) {
	if debugAddr != "" || godebugSets("memprofilerate") {
		return
	}
	runtime.MemProfileRate = 0
}

// godebugSets reports whether the GODEBUG environment variable sets key.
func godebugSets(key string) bool {
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if k, _, _ := strings.Cut(strings.TrimSpace(kv), "="); k == key {
			return true
		}
	}
	return false
}

// loopbackHost reports whether a Host header names the loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
