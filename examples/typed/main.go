// Command typed is an MCP server whose tools are Go functions over Go
// types: each tool's inputSchema is inferred from its argument struct and
// its outputSchema from its result struct, and a result is sent as
// structuredContent (with a JSON text block for older clients). It serves
// on stdin and stdout:
//
//	go run ./examples/typed
//	toolwire call stats numbers:='[3, 1, 2]' -- go run ./examples/typed
package main

import (
	"context"
	"errors"
	"log"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/stdio"
)

// statsIn is the stats tool's input: the jsonschema tag is the property's
// description in the inferred inputSchema.
type statsIn struct {
	Numbers []float64 `json:"numbers" jsonschema:"the numbers to summarize, at least one"`
}

// statsOut is its structured output; its outputSchema is inferred too.
type statsOut struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

// wordsIn is the words tool's input; an omitempty field is optional.
type wordsIn struct {
	Text string `json:"text" jsonschema:"the text to split"`
	Max  int    `json:"max,omitempty" jsonschema:"keep at most this many words (0: all)"`
}

type wordsOut struct {
	Words []string `json:"words"`
	Total int      `json:"total"`
}

// newServer is the server with its two typed tools.
func newServer() (*server.Server, error) {
	s := server.New(mcp.Implementation{Name: "typed", Version: "1.0.0"})
	err := server.AddTool(s, &mcp.Tool{Name: "stats", Description: "Count, mean, min and max of numbers"},
		func(ctx context.Context, req *server.CallRequest, in statsIn) (statsOut, error) {
			if len(in.Numbers) == 0 {
				// An error from the handler is a tool error (isError) the
				// caller sees, not a protocol error.
				return statsOut{}, errors.New("give at least one number")
			}
			out := statsOut{Count: len(in.Numbers), Min: slices.Min(in.Numbers), Max: slices.Max(in.Numbers)}
			for _, n := range in.Numbers {
				out.Mean += n / float64(len(in.Numbers))
			}
			return out, nil
		})
	if err != nil {
		return nil, err
	}
	err = server.AddTool(s, &mcp.Tool{Name: "words", Description: "Split text into words"},
		func(ctx context.Context, req *server.CallRequest, in wordsIn) (wordsOut, error) {
			words := strings.Fields(in.Text)
			out := wordsOut{Words: words, Total: len(words)}
			if in.Max > 0 && len(words) > in.Max {
				out.Words = words[:in.Max]
			}
			return out, nil
		})
	return s, err
}

func main() {
	s, err := newServer()
	if err != nil {
		log.Fatal(err)
	}
	if err := stdio.ServeStdio(context.Background(), s); err != nil {
		log.Fatal(err)
	}
}
