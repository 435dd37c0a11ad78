// Command server is the fixture server the official MCP conformance suite
// runs against (scripts/test.d/20-conformance-server.sh): toolwire's server
// and Streamable HTTP transport hosting the test_* tools the suite's server
// scenarios call. It prints its endpoint URL on stdout once listening and
// serves until interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (port 0 picks a free port)")
	verbose := flag.Bool("v", false, "log requests to stderr")
	flag.Parse()

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	srv := server.New(mcp.Implementation{Name: "toolwire-conformance-server", Version: "1.0.0"}, server.WithLogger(logger))
	if err := registerAll(srv); err != nil {
		fmt.Fprintln(os.Stderr, "conformance server:", err)
		os.Exit(1)
	}
	logOpt := streamable.WithLogger(logger)
	var err error
	h := streamable.NewHandler(srv, logOpt)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = streamable.ListenAndServe(ctx, *addr, h, logOpt,
		streamable.WithOnListen(func(url string) { fmt.Println(url) }))
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance server:", err)
		os.Exit(1)
	}
}

// registerAll adds every fixture the scenarios call.
func registerAll(srv *server.Server) error {
	for _, reg := range []func(*server.Server) error{register, registerInput, registerPrompts, registerCatalog, registerTasks} {
		if err := reg(srv); err != nil {
			return err
		}
	}
	return nil
}
