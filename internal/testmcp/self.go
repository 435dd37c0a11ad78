package testmcp

import (
	"os"
	"testing"

	"github.com/toolwire/toolwire/client"
)

// RunOrServe is the TestMain of a package whose test binary doubles as an
// MCP server on stdio (an example's main, or a small server of the test's
// own): started with env set to "1" (as Self starts it) the binary runs
// serve and exits, else it runs the tests.
func RunOrServe(m *testing.M, env string, serve func()) {
	if os.Getenv(env) == "1" {
		serve()
		return
	}
	os.Exit(m.Run())
}

// Self is the stdio transport that starts this test binary as the server
// of RunOrServe with env.
func Self(env string) *client.Command {
	return &client.Command{Path: os.Args[0], Env: append(os.Environ(), env+"=1")}
}
