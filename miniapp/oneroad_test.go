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
// any use of dialects/mi outside miPure, and any direct file call outside
// fileTouchers (noFileCalls), so that the mini-app tools never
// again reach a table file or a schema.yaml around the engine's gates and
// audit.
func TestOneRoadToTableFiles(t *testing.T) {
	t.Run("no file calls outside the engine", noFileCalls)
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

// fileCalls are the functions of the standard library that touch the file
// system; package miniapp may call them only where fileTouchers allows.
var fileCalls = map[string]map[string]bool{
	"os": {"Stat": true, "Lstat": true, "ReadFile": true, "WriteFile": true, "Open": true, "OpenFile": true, "Create": true,
		"CreateTemp": true, "ReadDir": true, "Mkdir": true, "MkdirAll": true, "MkdirTemp": true, "Remove": true, "RemoveAll": true,
		"Rename": true, "Symlink": true, "Link": true, "Readlink": true, "Chmod": true, "Chtimes": true, "Truncate": true, "DirFS": true},
	"io/ioutil":     {"*": true},
	"path/filepath": {"Glob": true, "Walk": true, "WalkDir": true, "EvalSymlinks": true, "Abs": false},
	"io/fs":         {"ReadFile": true, "ReadDir": true, "Stat": true, "Glob": true, "WalkDir": true, "Sub": true},
}

// fileTouchers are the functions of package miniapp (file: function) that
// may touch files directly, each for a file that is not a table's: none
// reads or writes a table's schema.yaml or database, which only the
// engine reaches (Definition, Defined, CreateTable, Snapshot, …).
var fileTouchers = map[string]string{
	"dropin.go:DropInFromEnv":    "the drop-in mode's configuration: .mini-app-mcp.env",
	"dropin.go:DropIn":           "mount time, before any database is registered: the scope directories and the legacy pair's link directory",
	"dropin.go:legacyDir":        "mount time, before any database is registered: the legacy pair's name and links",
	"dropin.go:Close":            "removes the legacy pair's link directory",
	"dump.go:writeDump":          "a dump file (<id>.md), an export of a row, not a table file",
	"export.go:outDir":           "export roots: the destinations of row_materialize and data_snapshot",
	"export.go:walk":             "export roots: a destination's directories, made without following links",
	"export.go:outFile":          "export roots: a destination file's checks",
	"materialize.go:materialize": "row_materialize's destination under an export root",
	"materialize.go:writeAtomic": "row_materialize's destination under an export root",
	"s3.go:upload":               "a snapshot file already written, uploaded to S3",
	"s3.go:envOf":                "the drop-in mode's configuration: .mini-app-mcp.env",
	"snapshot.go:scopeOf":        "resolves the legacy pair's link (made at mount) to name its scope root; reads nothing",
	"snapshot.go:writeSnapshot":  "a snapshot's destination file, which the engine's Snapshot fills",
	"snapshot.go:generations":    "snapshot retention: lists a scope's _snapshots directory",
	"snapshot.go:purgeSnapshots": "snapshot retention: removes old snapshot files, never a live table's",
}

// noFileCalls (part of TestOneRoadToTableFiles) parses the package's
// non-test files and refuses a direct file-system call (os.Stat, os.ReadFile, os.Open, …)
// outside fileTouchers: a tool reaches a table's files only through the
// engine, whose gates and audit apply.
func noFileCalls(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var bad []string
	used := map[string]bool{}
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
		pkgs := map[string]string{} // local name → import path
		for _, im := range af.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if fileCalls[path] == nil {
				continue
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			if name == "." || name == "_" {
				bad = append(bad, fset.Position(im.Pos()).String()+": "+path+" imported as "+name)
				continue
			}
			pkgs[name] = path
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				// A package-level value calling a file function.
				ast.Inspect(d, func(n ast.Node) bool {
					if at := fileCall(n, pkgs); at != "" {
						bad = append(bad, fset.Position(n.Pos()).String()+": "+at+" at package level")
					}
					return true
				})
				continue
			}
			key := f + ":" + fd.Name.Name
			ast.Inspect(fd, func(n ast.Node) bool {
				at := fileCall(n, pkgs)
				if at == "" {
					return true
				}
				if _, ok := fileTouchers[key]; ok {
					used[key] = true
					return true
				}
				bad = append(bad, fset.Position(n.Pos()).String()+": "+at+" in "+fd.Name.Name)
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatal("no source file of package miniapp was checked")
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: package miniapp touches a file directly; reach a table's files through the engine (engine.Defined, Definition, CreateTable, …)", b)
	}
	// An allowance nothing uses any more goes, so that it cannot cover a
	// new call later.
	for k := range fileTouchers {
		if !used[k] {
			t.Errorf("fileTouchers allows %s, which makes no file call: remove it", k)
		}
	}
}

// fileCall names the file-system function n refers to, or "".
func fileCall(n ast.Node, pkgs map[string]string) string {
	sel, ok := n.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	path, ok := pkgs[id.Name]
	if !ok {
		return ""
	}
	if fns := fileCalls[path]; fns["*"] || fns[sel.Sel.Name] {
		return id.Name + "." + sel.Sel.Name
	}
	return ""
}
