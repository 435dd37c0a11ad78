// Package wirecheck finds JSON decoding that bypasses the one strict reader
// (internal/wirejson). Bytes that come off the wire are decoded once, with
// exact member names and no duplicates; a second, lenient decoder reading
// the same bytes (encoding/json matches names case-insensitively and lets
// the last duplicate win) could see a different request than the one that
// was checked, audited or routed. The test in this package runs Find over
// the module and fails on any call it reports that the allow-list does not
// name with a reason.
package wirecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Finding is one decoding call outside the strict reader.
type Finding struct {
	File string // slash-separated, relative to the root
	Line int
	Func string // the enclosing function: "name" or "Type.name"; "" at package level
	Call string // such as "json.Unmarshal"
}

// Key is how the allow-list names a finding: "file:Func".
func (f Finding) Key() string { return f.File + ":" + f.Func }

func (f Finding) String() string {
	fn := f.Func
	if fn == "" {
		fn = "package level"
	}
	return fmt.Sprintf("%s:%d: %s in %s", f.File, f.Line, f.Call, fn)
}

// decoders are the decoding functions of each JSON package, by import path.
var decoders = map[string][]string{
	"encoding/json":                      {"Unmarshal", "NewDecoder"},
	"github.com/go-json-experiment/json": {"Unmarshal", "UnmarshalRead", "UnmarshalDecode"},
}

// Reader is the package allowed to decode: the one strict reader.
const Reader = "internal/wirejson"

// skipDirs are trees that are not the module's non-test code.
var skipDirs = []string{"bench", "testdata", "node_modules", ".git"}

// Find parses every non-test Go file under root (a module's root) outside
// Reader and returns each call of a decoding function, sorted by file and
// line.
func Find(root string) ([]Finding, error) {
	var out []Finding
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (slices.Contains(skipDirs, d.Name()) || rel == Reader) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("wirecheck: %w", err)
		}
		out = append(out, inFile(fset, rel, f)...)
		return nil
	})
	slices.SortFunc(out, func(a, b Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return out, err
}

// inFile reports the decoding calls of one parsed file.
func inFile(fset *token.FileSet, rel string, f *ast.File) []Finding {
	names := map[string][]string{} // local import name -> decoding functions
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		fns, ok := decoders[p]
		if !ok {
			continue
		}
		local := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			local = im.Name.Name
		}
		if local == "_" {
			continue
		}
		names[local] = fns
	}
	if len(names) == 0 {
		return nil
	}
	var out []Finding
	visit := func(fn string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if fns, ok := names[pkg.Name]; ok && slices.Contains(fns, sel.Sel.Name) {
				out = append(out, Finding{File: rel, Line: fset.Position(sel.Pos()).Line, Func: fn, Call: pkg.Name + "." + sel.Sel.Name})
			}
			return true
		})
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			visit("", d)
			continue
		}
		visit(funcName(fd), fd)
	}
	return out
}

// funcName is "name" or "Type.name" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}
