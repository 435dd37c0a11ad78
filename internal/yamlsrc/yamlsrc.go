// Package yamlsrc reads the YAML files toolwire takes from people (the
// gateway's config, flow manifests) into syntax trees whose nodes keep
// their line and column, and refuses what those files never need: deep
// nesting (the parser's time grows quickly with it), anchors and aliases
// (no alias bombs), tags, merge keys and complex keys.
package yamlsrc

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Parse parses data into a syntax tree, refusing collections nested deeper
// than maxDepth before the parser sees them: flow collections ([...],
// {...}) are counted by their brackets, block ones by indentation. A panic
// of the YAML library on malformed input becomes an error.
func Parse(data []byte, maxDepth int) (tree *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			tree, err = nil, fmt.Errorf("the YAML parser failed on this file: %v", r)
		}
	}()
	tokens := lexer.Tokenize(string(data))
	if err := checkNesting(tokens, maxDepth); err != nil {
		return nil, err
	}
	return parser.Parse(tokens, 0)
}

// checkNesting returns a *yaml.SyntaxError at the first token nested
// deeper than limit.
func checkNesting(tokens token.Tokens, limit int) error {
	depth := 0
	for _, tk := range tokens {
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			if depth++; depth > limit {
				return tooDeep(tk, limit)
			}
		case token.SequenceEndType, token.MappingEndType:
			depth = max(0, depth-1)
		}
		if tk.Position != nil && tk.Position.IndentLevel > limit*2 {
			return tooDeep(tk, limit)
		}
	}
	return nil
}

func tooDeep(tk *token.Token, limit int) error {
	return &yaml.SyntaxError{Message: fmt.Sprintf("nested deeper than %d levels", limit), Token: tk}
}

// dupKey is the YAML library's message for a repeated key.
var dupKey = regexp.MustCompile(`^mapping key "(.*)" already defined at \[(\d+):(\d+)\]$`)

// SyntaxError returns where an error of Parse is (line and column, 0 when
// unknown) and its message in the file's terms: a repeated key is
// `duplicate key "k" (first at L:C)`.
func SyntaxError(err error) (line, col int, msg string) {
	var se *yaml.SyntaxError
	if !errors.As(err, &se) {
		return 0, 0, err.Error()
	}
	if se.Token != nil && se.Token.Position != nil {
		line, col = se.Token.Position.Line, se.Token.Position.Column
	}
	msg = se.Message
	if m := dupKey.FindStringSubmatch(se.Message); m != nil {
		msg = fmt.Sprintf("duplicate key %q (first at %s:%s)", m[1], m[2], m[3])
	}
	return line, col, msg
}

// Unsupported says why n is a YAML feature these files do not take, or ""
// when it is an ordinary node.
func Unsupported(n ast.Node) string {
	switch n.(type) {
	case *ast.AnchorNode, *ast.AliasNode:
		return "anchors and aliases are not supported"
	case *ast.TagNode:
		return "tags are not supported"
	case *ast.MergeKeyNode:
		return "merge keys (<<) are not supported"
	case *ast.MappingKeyNode:
		return "complex keys (?) are not supported"
	}
	return ""
}
