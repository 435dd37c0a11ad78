package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/internal/clidoc"
)

// newDocsCmd is the hidden command that writes the CLI reference (a
// Markdown page and a man page per command) from this command tree, so the
// reference in docs/ is generated, never written by hand.
func newDocsCmd() *cobra.Command {
	var mdDir, manDir string
	cmd := &cobra.Command{
		Use:    "docs",
		Short:  "Write the command line reference: Markdown pages and man pages",
		Args:   cobra.NoArgs,
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			files, err := clidoc.Generate(cmd.Root(), mdDir, manDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d files to %s and %s\n", len(files), mdDir, manDir)
			return nil
		},
	}
	cmd.Flags().StringVar(&mdDir, "markdown", "docs/cli", "directory of the Markdown pages")
	cmd.Flags().StringVar(&manDir, "man", "docs/man", "directory of the man pages")
	return cmd
}
