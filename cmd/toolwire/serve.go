package main

import (
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/reference"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/stdio"
)

type serveFlags struct {
	stdio          bool
	pageSize       int
	toolTimeout    time.Duration
	maxMessageSize int
	maxConcurrency int
	logLevel       string
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the reference tools",
		Long: "Serve the reference tools (echo, get-sum, get-structured-content, weather, get-tiny-image,\n" +
			"get-annotated-message, get-resource-links, get-resource-reference, gallery, safe_divide,\n" +
			"trigger-long-running-operation, get-version). With --stdio the server speaks newline-delimited\n" +
			"JSON-RPC on stdin and stdout and logs to stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !f.stdio {
				return usageError{"serve needs --stdio: Streamable HTTP serving is not part of this build yet"}
			}
			logger, err := newLogger(f.logLevel)
			if err != nil {
				return err
			}
			srv, err := reference.NewServer(server.WithPageSize(f.pageSize), server.WithTimeout(f.toolTimeout), server.WithLogger(logger))
			if err != nil {
				return err
			}
			logger.Info("serving reference tools on stdio", "tools", len(srv.Tools()))
			return stdio.ServeStdio(cmd.Context(), srv, &stdio.Options{
				MaxMessageSize: f.maxMessageSize,
				ServeOptions:   transport.ServeOptions{MaxConcurrency: f.maxConcurrency, Logger: logger},
			})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.stdio, "stdio", false, "serve on stdin/stdout")
	fl.IntVar(&f.pageSize, "page-size", server.DefaultPageSize, "tools per tools/list page")
	fl.DurationVar(&f.toolTimeout, "tool-timeout", server.DefaultToolTimeout, "longest a tool call may run (0: no limit)")
	fl.IntVar(&f.maxMessageSize, "max-message-size", stdio.DefaultMaxMessageSize, "largest incoming message in bytes")
	fl.IntVar(&f.maxConcurrency, "max-concurrency", transport.DefaultMaxConcurrency, "requests served at once")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	return cmd
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{"invalid --log-level " + level + ": want debug, info, warn or error"}
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
