package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// renderer prints a tool result for a person: text as text, media and blobs
// saved to files (their paths printed), links and embedded resources
// described, annotations shown, structured content pretty-printed.
type renderer struct {
	tool    string
	saveDir string // "" means a fresh temporary directory, made on first use
	made    bool
}

func (r *renderer) render(w io.Writer, res *mcp.CallToolResult) error {
	for i, c := range res.Content {
		if err := r.block(w, i, c); err != nil {
			return err
		}
	}
	if len(res.StructuredContent) > 0 {
		var buf bytes.Buffer
		if err := json.Indent(&buf, res.StructuredContent, "", "  "); err != nil {
			buf.Reset()
			buf.Write(res.StructuredContent)
		}
		fmt.Fprintf(w, "structured content:\n%s\n", buf.String())
	}
	return nil
}

func (r *renderer) block(w io.Writer, i int, c mcp.Content) error {
	var ann *mcp.Annotations
	switch b := c.(type) {
	case *mcp.TextContent:
		fmt.Fprintln(w, b.Text)
		ann = b.Annotations
	case *mcp.ImageContent:
		if err := r.saveBlock(w, i, "image "+b.MIMEType, b.MIMEType, b.Data); err != nil {
			return err
		}
		ann = b.Annotations
	case *mcp.AudioContent:
		if err := r.saveBlock(w, i, "audio "+b.MIMEType, b.MIMEType, b.Data); err != nil {
			return err
		}
		ann = b.Annotations
	case *mcp.ResourceLink:
		line := "[resource link] "
		if b.Title != "" {
			line += b.Title + " (" + b.Name + ")"
		} else {
			line += b.Name
		}
		line += " <" + b.URI + ">"
		if b.MIMEType != "" {
			line += " " + b.MIMEType
		}
		if b.Size != nil {
			line += fmt.Sprintf(", %d bytes", *b.Size)
		}
		if b.Description != "" {
			line += " - " + b.Description
		}
		fmt.Fprintln(w, line)
		ann = b.Annotations
	case *mcp.EmbeddedResource:
		switch rc := b.Resource.(type) {
		case *mcp.TextResourceContents:
			fmt.Fprintf(w, "[resource %s%s]\n%s\n", rc.URI, prefixed(" ", rc.MIMEType), rc.Text)
		case *mcp.BlobResourceContents:
			if err := r.saveBlock(w, i, "resource "+rc.URI+prefixed(" ", rc.MIMEType), rc.MIMEType, rc.Blob); err != nil {
				return err
			}
		}
		ann = b.Annotations
	default:
		fmt.Fprintf(w, "[%s block]\n", c.ContentType())
	}
	if s := annotations(ann); s != "" {
		fmt.Fprintf(w, "  (%s)\n", s)
	}
	return nil
}

// saveBlock saves the data of block i (an image, audio or a blob) to a file
// and prints what it was (label), its size and the file's path.
func (r *renderer) saveBlock(w io.Writer, i int, label, mimeType string, data []byte) error {
	path, err := r.save(i, mimeType, data)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "[%s, %d bytes] saved to %s\n", label, len(data), path)
	return nil
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func annotations(a *mcp.Annotations) string {
	if a == nil {
		return ""
	}
	var parts []string
	if len(a.Audience) > 0 {
		roles := make([]string, len(a.Audience))
		for i, r := range a.Audience {
			roles[i] = string(r)
		}
		parts = append(parts, "audience: "+strings.Join(roles, ", "))
	}
	if a.Priority != nil {
		parts = append(parts, "priority: "+strconv.FormatFloat(*a.Priority, 'g', -1, 64))
	}
	if a.LastModified != "" {
		parts = append(parts, "last modified: "+a.LastModified)
	}
	return strings.Join(parts, "; ")
}

// extensions maps the media types tools commonly return to file extensions.
var extensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/svg+xml": ".svg",
	"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/mpeg": ".mp3", "audio/ogg": ".ogg",
	"audio/webm": ".webm", "audio/flac": ".flac", "application/pdf": ".pdf", "application/json": ".json",
	"text/plain": ".txt", "application/gzip": ".gz", "application/octet-stream": ".bin",
}

// save writes data to a new file named after the tool and block; it never
// overwrites an existing file.
func (r *renderer) save(i int, mimeType string, data []byte) (string, error) {
	if !r.made {
		if r.saveDir == "" {
			d, err := os.MkdirTemp("", "toolwire-call-")
			if err != nil {
				return "", err
			}
			r.saveDir = d
		} else if err := os.MkdirAll(r.saveDir, 0o755); err != nil {
			return "", err
		}
		r.made = true
	}
	ext := extensions[strings.ToLower(strings.TrimSpace(strings.Split(mimeType, ";")[0]))]
	if ext == "" {
		ext = ".bin"
	}
	base := fmt.Sprintf("%s-%d", safeName(r.tool), i+1)
	for n := 0; ; n++ {
		name := base + ext
		if n > 0 {
			name = fmt.Sprintf("%s-%d%s", base, n, ext)
		}
		path := filepath.Join(r.saveDir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		return path, werr
	}
}

func safeName(s string) string {
	out := []rune(s)
	for i, c := range out {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			out[i] = '_'
		}
	}
	if len(out) == 0 {
		return "tool"
	}
	return string(out)
}

// renderTools prints the readable tool table: name, title, description and
// parameters (a trailing * marks a required one).
func renderTools(w io.Writer, tools []*mcp.Tool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTITLE\tDESCRIPTION\tPARAMETERS")
	for _, t := range tools {
		title := t.Title
		if title == "" && t.Annotations != nil {
			title = t.Annotations.Title
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, dash(title), dash(oneLine(t.Description, 60)), dash(params(t.InputSchema)))
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// params summarises an inputSchema as "name: type" pairs.
func params(inputSchema json.RawMessage) string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = wirejson.Unmarshal(inputSchema, &s)
	props, _ := schemaProps(inputSchema)
	var parts []string
	for _, name := range sortedKeys(props) {
		p := name
		for _, r := range s.Required {
			if r == name {
				p += "*"
			}
		}
		if types := props[name]; len(types) > 0 {
			p += ": " + strings.Join(types, "|")
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}
