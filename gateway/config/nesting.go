package config

import (
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
)

// MaxNesting is the deepest nesting of flow collections ([...] and
// {...}) a file may have. The YAML parser takes time quadratic in it
// (100000 levels, in a file well under DefaultMaxSize, take minutes),
// while a config file needs a handful; the lexer, linear, finds it first.
const MaxNesting = 64

// checkNesting refuses tokens nesting flow collections deeper than
// MaxNesting, at the token that goes too deep.
func checkNesting(tokens token.Tokens) error {
	depth := 0
	for _, tk := range tokens {
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			if depth++; depth > MaxNesting {
				return &yaml.SyntaxError{Message: fmt.Sprintf("nested deeper than %d levels", MaxNesting), Token: tk}
			}
		case token.SequenceEndType, token.MappingEndType:
			depth = max(0, depth-1)
		}
	}
	return nil
}
