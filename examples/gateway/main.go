// Command gateway embeds the toolwire gateway in a program of its own: an
// MCP server in this process and, with -upstream, further servers over
// Streamable HTTP, all behind one endpoint under namespaced names
// (greeter__greet), the way `toolwire gateway` runs a config file. The
// config is built in code (a config.File, what the YAML file decodes to),
// and daemon.Run serves it until interrupted.
//
//	go run ./examples/gateway -listen 127.0.0.1:8090 -upstream ref=http://127.0.0.1:8080/mcp
//	toolwire tools http://127.0.0.1:8090/mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"strings"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// upstreams collects -upstream NAME=URL flags.
type upstreams []gateway.Upstream

func (u *upstreams) String() string { return fmt.Sprint(len(*u)) }

func (u *upstreams) Set(s string) error {
	name, url, ok := strings.Cut(s, "=")
	if !ok || name == "" || url == "" {
		return fmt.Errorf("want NAME=URL, got %q", s)
	}
	*u = append(*u, gateway.Upstream{Name: name, URL: url})
	return nil
}

// run serves the gateway on listen until ctx ends; onReady, when not nil,
// gets its addresses once it serves.
func run(ctx context.Context, listen string, extra []gateway.Upstream, logger *slog.Logger, onReady func(daemon.Addrs)) error {
	greeter := server.New(mcp.Implementation{Name: "greeter", Version: "1.0.0"})
	err := server.AddTool(greeter, &mcp.Tool{Name: "greet", Description: "Say hello to someone"},
		func(ctx context.Context, req *server.CallRequest, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		return err
	}
	file := &config.File{
		Listen: listen,
		// No admin listener and no data_dir: no state kept, no audit
		// trail. Set DataDir (and Audit) to keep them, as the YAML does.
		Gateway: gateway.Config{
			Upstreams: append([]gateway.Upstream{{Name: "greeter", Server: greeter}}, extra...),
			Naming:    gateway.Naming{Separator: config.DefaultSeparator},
		},
	}
	opts := []daemon.Option{daemon.WithLogger(logger)}
	if onReady != nil {
		opts = append(opts, daemon.WithOnReady(onReady))
	}
	return daemon.Run(ctx, file, opts...)
}

func main() {
	listen := flag.String("listen", config.DefaultListen, "the MCP endpoint's address")
	var extra upstreams
	flag.Var(&extra, "upstream", "NAME=URL: a Streamable HTTP MCP server to put behind the gateway too (repeatable)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, *listen, extra, logger, nil); err != nil {
		log.Fatal(err)
	}
}
