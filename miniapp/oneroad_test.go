package miniapp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// miPure are the only names of dialects/mi the package's own code may
// use: types, and helpers that compute without touching a file or a
// database (CompactJSON encodes, ParseTable parses bytes the engine
// answered, SchemaPath and DBPath name the paths mini-app-mcp's answers
// and the drop-in mount's links show). Every file or database touch goes
// through the engine (Definition, Defined, AggregateTables, Snapshot, …).
var miPure = map[string]bool{
	"TableInfo": true, "FieldInfo": true, "DumpInfo": true,
	"CompactJSON": true, "ParseTable": true, "SchemaPath": true, "DBPath": true,
}

// TestOneRoadToTableFiles parses the package's non-test files and refuses
// any use of dialects/mi outside miPure, so that the mini-app tools never
// again reach a table file or a schema.yaml around the engine's gates and
// audit.
func TestOneRoadToTableFiles(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var bad []string
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		names := map[string]bool{}
		for _, im := range af.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if path != "github.com/littlebitlabs/minimal/dialects/mi" {
				continue
			}
			name := "mi"
			if im.Name != nil {
				name = im.Name.Name
			}
			if name == "." || name == "_" {
				bad = append(bad, fset.Position(im.Pos()).String()+": dialects/mi imported as "+name)
				continue
			}
			names[name] = true
		}
		if len(names) == 0 {
			continue
		}
		ast.Inspect(af, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] && !miPure[sel.Sel.Name] {
				bad = append(bad, fset.Position(sel.Pos()).String()+": "+id.Name+"."+sel.Sel.Name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source file of package miniapp was checked")
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: package miniapp reaches dialects/mi outside the engine; call an engine entry point (engine/files.go, engine/tablefiles.go) instead", b)
	}
}
