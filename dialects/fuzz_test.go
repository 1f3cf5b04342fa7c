package dialects_test

import (
	"testing"

	"github.com/littlebitlabs/minimal/query"
)

// FuzzRenderKeepsValuesOutOfSQL parses fuzzed filter values and renders them
// with every dialect. The SQL text must depend only on the plan's shape: it
// must equal the SQL rendered when every value is replaced by a harmless
// one, and every value must appear among the bound arguments.
func FuzzRenderKeepsValuesOutOfSQL(f *testing.F) {
	for _, s := range []string{
		"eq.5", "like.Raf*", `in."a,b",c`, "bw.1,2", "is.null", "not.eq.x",
		"eq.'; DROP TABLE employees;--", `eq."\") OR 1=1 --`, "ilike.*%_\\*", "nin.$1,?,@p1",
		"eq.`x`", "eq.]]", "li.\x00", "rli.--",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		e, err := query.ParseFilter("name", raw)
		if err != nil {
			return
		}
		plan := &query.Plan{Action: query.Read, Type: "x", Schema: "s", Table: "t", Columns: []string{"id", "name"}, Where: e, Limit: 10}
		benign := &query.Plan{Action: query.Read, Type: "x", Schema: "s", Table: "t", Columns: []string{"id", "name"}, Where: harmless(e), Limit: 10}
		for name, d := range goldenDialects {
			got, err := d.Render(plan)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want, err := d.Render(benign)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got.SQL != want.SQL {
				t.Fatalf("%s: SQL depends on a request value:\n%s\nvs\n%s", name, got.SQL, want.SQL)
			}
			_ = query.Walk(e, func(c *query.Cond) error {
				if c.Op == query.Like || c.Op == query.ILike {
					return nil // a dialect may rewrite a pattern (mi: GLOB); it stays bound
				}
				for _, a := range c.Args {
					s := a.(string)
					if !containsArg(got.Args, s) {
						t.Fatalf("%s: value %q is not among the bound args %v", name, s, got.Args)
					}
				}
				return nil
			})
		}
	})
}

// harmless copies an expression with every value replaced by "v".
func harmless(e query.Expr) query.Expr {
	switch x := e.(type) {
	case *query.Cond:
		c := &query.Cond{Column: x.Column, Op: x.Op, Args: make([]any, len(x.Args))}
		for i := range x.Args {
			c.Args[i] = "v"
		}
		return c
	case query.Not:
		return query.Not{X: harmless(x.X)}
	case query.And:
		out := make(query.And, len(x))
		for i, it := range x {
			out[i] = harmless(it)
		}
		return out
	case query.Or:
		out := make(query.Or, len(x))
		for i, it := range x {
			out[i] = harmless(it)
		}
		return out
	}
	return e
}

func containsArg(args []any, s string) bool {
	for _, a := range args {
		if v, ok := a.(string); ok && v == s {
			return true
		}
	}
	return false
}

// FuzzRenderLogicKeepsValuesOutOfSQL is FuzzRenderKeepsValuesOutOfSQL for
// an or= tree (nested and/or) holding a fuzzed value twice: whatever the
// value, the SQL is the one of the same tree with harmless values, and the
// value is bound.
func FuzzRenderLogicKeepsValuesOutOfSQL(f *testing.F) {
	for _, s := range []string{"eq.5", `in.("a,b",c)`, "bw.(1,2)", "eq.'; DROP TABLE employees;--", `eq."\") OR 1=1 --"`, "eq.),or(id.eq.1", "not.eq.x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		e, err := query.ParseLogic(query.ParamOr, "(name."+raw+",and(id.eq.1,name."+raw+"))")
		if err != nil {
			return
		}
		plan := &query.Plan{Action: query.Read, Type: "x", Schema: "s", Table: "t", Columns: []string{"id", "name"}, Where: e, Limit: 10}
		benign := &query.Plan{Action: query.Read, Type: "x", Schema: "s", Table: "t", Columns: []string{"id", "name"}, Where: harmless(e), Limit: 10}
		for name, d := range goldenDialects {
			got, err := d.Render(plan)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want, err := d.Render(benign)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got.SQL != want.SQL {
				t.Fatalf("%s: SQL depends on a request value:\n%s\nvs\n%s", name, got.SQL, want.SQL)
			}
		}
	})
}
