package testenv

import (
	"bufio"
	"os"

	"github.com/toolwire/toolwire/jsonrpc"
)

// ServeStdio is the loop of a hand-written stdio MCP server in a test
// binary: it reads newline-delimited JSON-RPC messages from stdin (a line
// up to 1 MiB) until stdin ends, and passes each request to handle with
// send, which writes one line to stdout. Notifications, responses and
// lines that are no JSON-RPC are skipped.
func ServeStdio(handle func(req *jsonrpc.Request, send func(line string))) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) { out.WriteString(s + "\n"); out.Flush() }
	for in.Scan() {
		msg, _, err := jsonrpc.Decode(in.Bytes())
		if req, ok := msg.(*jsonrpc.Request); err == nil && ok {
			handle(req, send)
		}
	}
}
