package dialects_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/ch"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/dialects/ma"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/dialects/ms"
	"github.com/littlebitlabs/minimal/dialects/pg"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// update rewrites the golden files: go test ./dialects -run TestGolden -update
var update = flag.Bool("update", false, "rewrite dialects/testdata/*.golden")

// goldenDialects are rendered for every case, one section each, in sorted
// order. Add a dialect with one line.
var goldenDialects = map[string]dialects.Dialect{
	"ch": ch.Dialect{},
	"ma": ma.Dialect{},
	"mi": mi.Dialect{},
	"ms": ms.Dialect{},
	"pg": pg.Dialect{},
}

var caseName = regexp.MustCompile(`^[a-z0-9_]+$`)

// TestGolden renders every dialecttest case with every dialect and compares
// the SQL and arguments with testdata/<case>.golden.
func TestGolden(t *testing.T) {
	names := make([]string, 0, len(goldenDialects))
	for n := range goldenDialects {
		names = append(names, n)
	}
	slices.Sort(names)
	seen := map[string]bool{}
	for _, c := range dialecttest.Cases {
		if !caseName.MatchString(c.Name) || seen[c.Name] {
			t.Fatalf("case name %q is not unique lower_snake_case", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			var sb strings.Builder
			for _, n := range names {
				d := goldenDialects[n]
				if d.Name() != n {
					t.Fatalf("dialect registered as %q calls itself %q", n, d.Name())
				}
				sb.WriteString("-- " + n + "\n")
				st, err := d.Render(c.Plan)
				if err != nil {
					if fault.KindOf(err) != fault.Unsupported {
						t.Fatalf("%s: Render: %v", n, err)
					}
					sb.WriteString("UNSUPPORTED: " + fault.As(err).Message + "\n")
					continue
				}
				again, err := d.Render(c.Plan)
				if err != nil || again.SQL != st.SQL {
					t.Fatalf("%s: Render is not deterministic", n)
				}
				args := st.Args
				if args == nil {
					args = []any{}
				}
				js, err := json.Marshal(args)
				if err != nil {
					t.Fatalf("%s: args %v: %v", n, st.Args, err)
				}
				sb.WriteString(st.SQL + "\n-- args: " + string(js) + "\n")
			}
			got := sb.String()
			path := filepath.Join("testdata", c.Name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs (run with -update to accept)\n--- got\n%s--- want\n%s", path, got, want)
			}
		})
	}
	if !*update {
		// A golden file without a case is a case someone lost.
		files, _ := filepath.Glob(filepath.Join("testdata", "*.golden"))
		for _, f := range files {
			if name := strings.TrimSuffix(filepath.Base(f), ".golden"); !seen[name] {
				t.Errorf("%s has no case in dialecttest.Cases", f)
			}
		}
	}
}

// TestGoldenCoverage keeps the cases honest: every operator, every action
// and every aggregate function appears at least once.
func TestGoldenCoverage(t *testing.T) {
	ops := map[query.Op]bool{}
	actions := map[query.Action]bool{}
	var walk func(e query.Expr)
	walk = func(e query.Expr) {
		switch x := e.(type) {
		case *query.Cond:
			ops[x.Op] = true
		case query.And:
			for _, it := range x {
				walk(it)
			}
		case query.Or:
			for _, it := range x {
				walk(it)
			}
		case query.Not:
			walk(x.X)
		}
	}
	funcs := map[query.AggFunc]bool{}
	for _, c := range dialecttest.Cases {
		actions[c.Plan.Action] = true
		walk(c.Plan.Where)
		walk(c.Plan.Having)
		for _, a := range c.Plan.Aggregates {
			funcs[a.Func] = true
		}
	}
	for _, f := range []query.AggFunc{query.AggCount, query.AggSum, query.AggAvg, query.AggMin, query.AggMax} {
		if !funcs[f] {
			t.Errorf("no golden case uses aggregate %s", f)
		}
	}
	for _, op := range []query.Op{query.Eq, query.Ne, query.Gt, query.Ge, query.Lt, query.Le, query.Like, query.ILike,
		query.In, query.NotIn, query.Between, query.IsNull, query.IsNotNull, query.IsTrue, query.IsFalse} {
		if !ops[op] {
			t.Errorf("no golden case uses operator %s", op)
		}
	}
	for _, a := range []query.Action{query.Read, query.Insert, query.Update, query.Delete} {
		if !actions[a] {
			t.Errorf("no golden case for action %s", a)
		}
	}
}
