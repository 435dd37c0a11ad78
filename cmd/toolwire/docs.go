package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/toolwire/toolwire/internal/clidoc"
)

// newDocsCmd is the hidden command that writes the CLI reference (a
// Markdown page and a man page per command) from this command tree, and the
// gateway config reference from gateway/config's package documentation, so
// the references in docs/ are generated, never written by hand.
func newDocsCmd() *cobra.Command {
	var mdDir, manDir, configRef string
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
			if configRef != "" {
				ref, err := clidoc.ConfigMarkdown(filepath.Join("gateway", "config"))
				if err != nil {
					return err
				}
				if err := os.WriteFile(configRef, ref, 0o644); err != nil {
					return err
				}
				files = append(files, configRef)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d files: %s, %s, %s\n", len(files), mdDir, manDir, configRef)
			return nil
		},
	}
	cmd.Flags().StringVar(&mdDir, "markdown", "docs/cli", "directory of the Markdown pages")
	cmd.Flags().StringVar(&manDir, "man", "docs/man", "directory of the man pages")
	cmd.Flags().StringVar(&configRef, "config-reference", "docs/gateway/config.md",
		"file of the gateway config reference, from gateway/config's package documentation (run from the repository root)")
	return cmd
}
