package reference

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// GzipInput is the input of gzip-file-as-resource.
type GzipInput struct {
	Name       string `json:"name,omitempty" jsonschema:"Name of the output file" default:"README.md.gz"`
	Data       string `json:"data" jsonschema:"The content to compress: a data: URI (data:[<mediatype>][;base64],<data>), or, when the server has a file root (serve --files), a file:// URI or a path relative to that root. Network URLs are never fetched."`
	OutputType string `json:"outputType,omitempty" jsonschema:"How the gzipped file is returned: resourceLink (a link to read later) or resource (embedded)" enum:"resourceLink,resource" default:"resourceLink"`
}

// maxGzipName bounds the name of a gzipped resource.
const maxGzipName = 255

// gzipStore holds the gzipped resources, oldest first.
type gzipStore struct {
	mu   sync.Mutex
	uris []string
}

// errInput is a tool error: the caller asked for something refused.
type errInput struct{ msg string }

func (e *errInput) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &errInput{fmt.Sprintf(format, args...)} }

func (c *config) accepted() string {
	if c.fileRoot == "" {
		return "a data: URI (data:[<mediatype>][;base64],<data>); this server has no file root (toolwire serve --files DIR), so files cannot be read"
	}
	return "a data: URI (data:[<mediatype>][;base64],<data>), or a file:// URI or relative path naming a regular file inside the server's file root"
}

// load returns the bytes data names, at most c.gzipMax of them.
func (c *config) load(data string) ([]byte, error) {
	scheme, _, hasScheme := strings.Cut(data, ":")
	if hasScheme && !strings.ContainsAny(scheme, "/\\.") {
		switch strings.ToLower(scheme) {
		case "data":
			return c.loadDataURI(data)
		case "file":
			u, err := url.Parse(data)
			if err != nil || u.Host != "" && u.Host != "localhost" || u.Path == "" {
				return nil, refuse("invalid file URI %q: want file:///absolute/path inside the file root", data)
			}
			return c.loadFile(u.Path, true)
		default:
			return nil, refuse("gzip-file-as-resource never fetches %s: URLs (no network access); it accepts %s", scheme, c.accepted())
		}
	}
	return c.loadFile(data, false)
}

// loadDataURI decodes a data: URI (RFC 2397).
func (c *config) loadDataURI(data string) ([]byte, error) {
	head, payload, ok := strings.Cut(data[len("data:"):], ",")
	if !ok {
		return nil, refuse("invalid data: URI: no comma before the data; want data:[<mediatype>][;base64],<data>")
	}
	if strings.HasSuffix(strings.ToLower(head), ";base64") {
		if int64(base64.StdEncoding.DecodedLen(len(payload))) > c.gzipMax+3 {
			return nil, refuse("data is larger than the %d bytes this server gzips", c.gzipMax)
		}
		b, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			if b, err = base64.RawStdEncoding.DecodeString(payload); err != nil {
				return nil, refuse("invalid base64 in data: URI: %v", err)
			}
		}
		if int64(len(b)) > c.gzipMax {
			return nil, refuse("data is %d bytes, larger than the %d this server gzips", len(b), c.gzipMax)
		}
		return b, nil
	}
	if int64(len(payload))/3 > c.gzipMax {
		return nil, refuse("data is larger than the %d bytes this server gzips", c.gzipMax)
	}
	b, err := url.PathUnescape(payload)
	if err != nil {
		return nil, refuse("invalid percent-encoding in data: URI: %v", err)
	}
	if int64(len(b)) > c.gzipMax {
		return nil, refuse("data is %d bytes, larger than the %d this server gzips", len(b), c.gzipMax)
	}
	return []byte(b), nil
}

// loadFile reads a regular file inside the file root: name is absolute (a
// file:// URI's path) or relative to the root. Symlinks are resolved and
// the result must still be inside the root; the file is then opened through
// an os.Root, which refuses an escape made after the check.
func (c *config) loadFile(name string, absolute bool) ([]byte, error) {
	if c.fileRoot == "" {
		return nil, refuse("this server has no file root (toolwire serve --files DIR), so it reads no files; it accepts %s", c.accepted())
	}
	root, err := filepath.Abs(c.fileRoot)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("file root %s: %w", c.fileRoot, err)
	}
	p := filepath.FromSlash(name)
	if !absolute {
		if filepath.IsAbs(p) {
			return nil, refuse("%q is an absolute path: pass a path relative to the file root, or a file:// URI", name)
		}
		p = filepath.Join(root, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, refuse("no such file in the file root: %s", name)
		}
		return nil, refuse("cannot resolve %s: %v", name, err)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, refuse("%s is outside the server's file root; only files inside it can be gzipped", name)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("file root %s: %w", c.fileRoot, err)
	}
	defer r.Close()
	// Stat before opening: opening a FIFO or device could block or never end.
	if st, err := r.Stat(rel); err != nil {
		return nil, refuse("cannot stat %s inside the file root: %v", name, err)
	} else if !st.Mode().IsRegular() {
		return nil, refuse("%s is not a regular file", name)
	}
	f, err := r.Open(rel)
	if err != nil {
		return nil, refuse("cannot open %s inside the file root: %v", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, refuse("cannot stat %s: %v", name, err)
	}
	if !st.Mode().IsRegular() {
		return nil, refuse("%s is not a regular file", name)
	}
	if st.Size() > c.gzipMax {
		return nil, refuse("%s is %d bytes, larger than the %d this server gzips", name, st.Size(), c.gzipMax)
	}
	b, err := io.ReadAll(io.LimitReader(f, c.gzipMax+1))
	if err != nil {
		return nil, refuse("cannot read %s: %v", name, err)
	}
	if int64(len(b)) > c.gzipMax {
		return nil, refuse("%s is larger than the %d bytes this server gzips", name, c.gzipMax)
	}
	return b, nil
}

// store registers a gzipped resource, replacing one of the same URI and
// removing the oldest past c.gzipStore.
func (c *config) store(s *server.Server, st *gzipStore, name string, blob []byte) (string, error) {
	uri := "demo://gzip/" + url.PathEscape(name)
	size := int64(len(blob))
	st.mu.Lock()
	defer st.mu.Unlock()
	if s.RemoveResource(uri) {
		for i, u := range st.uris {
			if u == uri {
				st.uris = append(st.uris[:i], st.uris[i+1:]...)
				break
			}
		}
	}
	for len(st.uris) >= c.gzipStore {
		s.RemoveResource(st.uris[0])
		st.uris = st.uris[1:]
	}
	err := server.AddResource(s, &mcp.Resource{URI: uri, Name: name, Title: name, Description: "A file gzip-file-as-resource compressed",
		MIMEType: "application/gzip", Size: &size},
		func(context.Context, *server.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return read(&mcp.BlobResourceContents{URI: uri, MIMEType: "application/gzip", Blob: blob}), nil
		})
	if err != nil {
		return "", err
	}
	st.uris = append(st.uris, uri)
	return uri, nil
}

func (c *config) addGzip(s *server.Server) error {
	st := &gzipStore{}
	return server.AddTool(s, &mcp.Tool{
		Name: "gzip-file-as-resource", Title: "GZip File as Resource Tool",
		Description: fmt.Sprintf("Compresses a file with gzip and registers it as a resource (demo://gzip/{name}, application/gzip); "+
			"returns a resource link to read it later, or the resource embedded. The input is a data: URI, or, when the server "+
			"was given a file root, a file inside it; network URLs are never fetched. At most %d bytes of input; "+
			"the %d most recent files are kept.", c.gzipMax, c.gzipStore),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(false), IdempotentHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)},
	}, func(ctx context.Context, req *server.CallRequest, in GzipInput) (*mcp.CallToolResult, error) {
		name := in.Name
		if name == "" {
			name = "README.md.gz"
		}
		if len(name) > maxGzipName || strings.ContainsAny(name, "/\\") || strings.TrimSpace(name) != name {
			return mcp.ErrorResult("name must be a file name of at most %d bytes, without slashes or surrounding spaces", maxGzipName), nil
		}
		out := in.OutputType
		if out == "" {
			out = "resourceLink"
		}
		if out != "resourceLink" && out != "resource" {
			return mcp.ErrorResult(`outputType must be "resourceLink" or "resource", got %q`, out), nil
		}
		if in.Data == "" {
			return mcp.ErrorResult("data is required: %s", c.accepted()), nil
		}
		raw, err := c.load(in.Data)
		var bad *errInput
		if errors.As(err, &bad) {
			return mcp.ErrorResult("%s", bad.msg), nil
		} else if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(raw); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		blob := buf.Bytes()
		uri, err := c.store(s, st, name, blob)
		if err != nil {
			return nil, err
		}
		if out == "resource" {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.EmbeddedResource{Resource: &mcp.BlobResourceContents{URI: uri, MIMEType: "application/gzip", Blob: blob}},
			}}, nil
		}
		size := int64(len(blob))
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ResourceLink{URI: uri, Name: name, MIMEType: "application/gzip", Size: &size,
				Description: fmt.Sprintf("%s gzipped: %d bytes from %d", name, len(blob), len(raw))},
		}}, nil
	})
}
