package main

import (
	"errors"
	"fmt"

	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/mcp"
)

type readFlags struct {
	targetFlags
	output string
	force  bool
	asJSON bool
}

func newReadCmd() *cobra.Command {
	var f readFlags
	cmd := &cobra.Command{
		Use:   "read (URL RESOURCE_URI | RESOURCE_URI -- COMMAND [ARG...])",
		Short: "Read a resource of an MCP server",
		Long: "Read a resource (resources/read). Text contents are printed to stdout; binary (blob) contents\n" +
			"are saved to a file: -o PATH, or else a file named after the URI's last path segment in the\n" +
			"current directory. An existing file is never overwritten without --force; -o - writes the\n" +
			"bytes to stdout. Where a blob was saved, and its size, go to stderr. For example:\n\n" +
			"  toolwire read http://127.0.0.1:8080/mcp file:///docs/readme.md\n" +
			"  toolwire read -o logo.png http://127.0.0.1:8080/mcp images://logo\n" +
			"  toolwire read config://app -- node server.js stdio\n\n" +
			"A URI the server does not have exits with status 5.\n\n" + exitHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			return finish(cmd, runRead(cmd, &f, args))
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "save blob contents to PATH (- for stdout)")
	cmd.Flags().BoolVar(&f.force, "force", false, "overwrite an existing file")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the raw result as JSON")
	return cmd
}

func runRead(cmd *cobra.Command, f *readFlags, args []string) error {
	f.enableElicitation()
	c, rest, err := f.open(cmd, args, "read", 1, "the server and one resource URI")
	if err != nil {
		return err
	}
	defer c.Close()
	uri := rest[0]
	res, err := c.ReadResource(cmd.Context(), uri)
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(cmd.OutOrStdout(), res)
	}
	out := cmd.OutOrStdout()
	blobs := 0
	for _, rc := range res.Contents {
		if _, ok := rc.(*mcp.BlobResourceContents); ok {
			blobs++
		}
	}
	n := 0
	for _, rc := range res.Contents {
		switch rc := rc.(type) {
		case *mcp.TextResourceContents:
			fmt.Fprint(out, rc.Text)
			if !strings.HasSuffix(rc.Text, "\n") {
				fmt.Fprintln(out)
			}
		case *mcp.BlobResourceContents:
			n++
			if f.output == "-" {
				if _, err := out.Write(rc.Blob); err != nil {
					return err
				}
				continue
			}
			p := f.output
			if p == "" {
				p = blobFileName(rc.URI, rc.MIMEType)
			}
			if blobs > 1 && n > 1 {
				ext := filepath.Ext(p)
				p = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(p, ext), n, ext)
			}
			if err := writeBlob(p, rc.Blob, f.force); err != nil {
				return err
			}
			fmt.Fprintf(f.errOut(), "saved %s%s, %d bytes, to %s\n", rc.URI, prefixed(" ", rc.MIMEType), len(rc.Blob), p)
		}
	}
	if len(res.Contents) == 0 {
		fmt.Fprintf(f.errOut(), "toolwire: resource %s has no contents\n", uri)
	}
	return nil
}

// blobFileName names a blob's file after the last path segment of its
// URI, or "resource" with an extension for its media type.
func blobFileName(uri, mimeType string) string {
	seg := ""
	if u, err := url.Parse(uri); err == nil {
		p := u.Path
		if p == "" {
			p = u.Opaque
		}
		if p == "" && u.Host != "" {
			p = u.Host
		}
		seg = path.Base(p)
	}
	if seg == "." || seg == "/" || seg == "" {
		seg = ""
	}
	if seg == "" {
		ext := extensions[strings.ToLower(strings.TrimSpace(strings.Split(mimeType, ";")[0]))]
		if ext == "" {
			ext = ".bin"
		}
		return "resource" + ext
	}
	return safeName(seg)
}

// writeBlob writes data to p: a new file, or with force an existing one
// replaced.
func writeBlob(p string, data []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	fh, err := os.OpenFile(p, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists: not overwriting it (use --force, or -o PATH)", p)
	}
	if err != nil {
		return err
	}
	_, werr := fh.Write(data)
	if cerr := fh.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
