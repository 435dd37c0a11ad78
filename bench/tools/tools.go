// Package tools holds what every benchmarked server exposes, so the servers
// and the load generator agree on names, shapes and the expected replies.
package tools

import "strings"

// Tool names.
const (
	Echo = "echo"
	Add  = "add"
	Big  = "big"
)

// BigSize is the length of the text block the big tool returns (1 MiB).
const BigSize = 1 << 20

// BigText is the big tool's reply: printable ASCII that needs no JSON
// escaping, built once so no server pays for making it per call.
var BigText = func() string {
	const pattern = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var b strings.Builder
	b.Grow(BigSize)
	for b.Len() < BigSize {
		n := min(len(pattern), BigSize-b.Len())
		b.WriteString(pattern[:n])
	}
	return b.String()
}()

// EchoIn is the echo tool's input.
type EchoIn struct {
	Message string `json:"message" jsonschema:"the text to send back"`
}

// AddIn is the add tool's input.
type AddIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

// AddOut is the add tool's structured output.
type AddOut struct {
	Sum float64 `json:"sum" jsonschema:"a plus b"`
}

// BigIn is the big tool's (empty) input.
type BigIn struct{}

// Descriptions shared by every server.
const (
	EchoDesc = "Echoes the message back as one text block"
	AddDesc  = "Adds two numbers; structured result with a text fallback"
	BigDesc  = "Returns one 1 MiB text block"
)
