package clidoc

import (
	"bytes"
	"fmt"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"path/filepath"
)

// ConfigMarkdown returns the gateway's config reference as Markdown: the
// package documentation of gateway/config (doc.go in dir), which is the one
// place the config file's keys are described. docs/gateway/config.md is
// this page, so the reference is written once and read in either place.
func ConfigMarkdown(dir string) ([]byte, error) {
	path := filepath.Join(dir, "doc.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, err
	}
	if f.Doc == nil {
		return nil, fmt.Errorf("%s has no package documentation", path)
	}
	var p comment.Parser
	d := p.Parse(f.Doc.Text())
	pr := comment.Printer{HeadingLevel: 2, DocLinkBaseURL: "https://pkg.go.dev"}
	var b bytes.Buffer
	b.WriteString("# Gateway config reference\n\n")
	b.WriteString("Every key of the file `toolwire gateway --config FILE` reads. This page is generated from the\n")
	b.WriteString("documentation of package `gateway/config` (`go doc github.com/toolwire/toolwire/gateway/config`)\n")
	b.WriteString("by `go run ./cmd/toolwire docs`; edit `gateway/config/doc.go`, not the page. The\n")
	b.WriteString("[gateway guide](README.md) explains the gateway with examples.\n\n")
	b.Write(pr.Markdown(d))
	return b.Bytes(), nil
}
