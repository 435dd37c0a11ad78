package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestTopLevelHelpNamesTheGateway: toolwire --help says what the gateway
// is, beside the client commands.
func TestTopLevelHelpNamesTheGateway(t *testing.T) {
	out, _, err := runInProcess(t, nil, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"toolwire gateway", "many MCP servers behind one endpoint", "audit trail", "toolwire serve"} {
		if !strings.Contains(out, want) {
			t.Errorf("toolwire --help lacks %q:\n%s", want, out)
		}
	}
}

// TestFlagHelpHasNoBackquotes: pflag takes a back-quoted word of a flag's
// usage as its value name (--token-dir toolwire login), so no usage of any
// command holds one.
func TestFlagHelpHasNoBackquotes(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				name, _ := pflag.UnquoteUsage(f)
				t.Errorf("%s --%s: the usage has a back-quoted word, shown as the value name %q", c.CommandPath(), f.Name, name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	out, _, err := runInProcess(t, nil, "tools", "--help")
	if err != nil || !strings.Contains(out, "--token-dir string ") {
		t.Errorf("tools --help: %v\n%s", err, out)
	}
}
