//go:build unix

package reference

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/mcp"
)

// A FIFO in the file root is refused without being opened (opening it
// would block until a writer came).
func TestGzipRefusesFIFO(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Skip(err)
	}
	_, _, url := testServer(t, WithFileRoot(root))
	c := connect(t, url, mcp.EraAuto)
	res := call(t, c, "gzip-file-as-resource", map[string]any{"data": "fifo"})
	if !res.IsError || !strings.Contains(text(t, res), "not a regular file") {
		t.Errorf("fifo: %s", text(t, res))
	}
}
