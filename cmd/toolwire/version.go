package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire"
)

// newVersionCmd is `toolwire version`: the module version, the commit and
// its time when known, and the Go toolchain.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print toolwire's version, commit, build time and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printVersion(cmd.OutOrStdout())
			return nil
		},
	}
}

func printVersion(w io.Writer) {
	b := toolwire.BuildInfo()
	fmt.Fprintf(w, "toolwire %s\n", b.Version)
	if b.Commit != "" {
		dirty := ""
		if b.Modified {
			dirty = " (with uncommitted changes)"
		}
		fmt.Fprintf(w, "commit:  %s%s\n", b.Commit, dirty)
	}
	if !b.Time.IsZero() {
		fmt.Fprintf(w, "built:   %s\n", b.Time.UTC().Format(time.RFC3339))
	}
	if b.GoVersion != "" {
		fmt.Fprintf(w, "go:      %s\n", b.GoVersion)
	}
}
