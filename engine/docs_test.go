package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// docRegistry serves one mi database (a real table directory) next to the
// fk one.
type docRegistry struct {
	*registry
	dir string
}

func (r *docRegistry) Databases(context.Context) ([]store.Database, error) {
	return []store.Database{{ID: "d1", ProjectID: "p1", Type: fakeType, Schema: "s"}, {ID: "d3", ProjectID: "p1", Type: "mi", Schema: "app", DSN: r.dir}}, nil
}

// TestDocumentPlans: plans carrying JSON documents (Docs) or asking for
// them (Doc) pass the same gates as any other. A caller without a column
// limit writes and reads whole documents (keys no column names, nulls,
// 5.0) and may order by any key; for a caller whose template lists
// columns, a key naming no column or a hidden one is an unknown column, a
// Doc read answers its columns only, and a replace keeps the others; the
// row scope judges a document's values; a source that stores no documents
// refuses such plans.
func TestDocumentPlans(t *testing.T) {
	registerFake()
	dir := t.TempDir()
	if err := mi.CreateTable(dir, "notes", []byte("table: notes\nfields:\n  - name: title\n    type: string\n    required: true\n  - name: body\n    type: string\n")); err != nil {
		t.Fatal(err)
	}
	reg := &docRegistry{registry: &registry{pol: store.Policy{
		Templates: []store.Template{
			{Name: "all", Rules: []store.Rule{{Object: "*/*/*", Actions: []string{"create", "read", "update", "delete"}}}},
			{Name: "insert-all", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"create"}}}},
			{Name: "titles", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"create", "read", "update"}, Columns: []string{"created_at", "id", "title", "updated_at"}}}},
		},
		Bindings: []store.Binding{{Role: "writer", Templates: []string{"all"}}, {Role: "narrow", Templates: []string{"titles"}}, {Role: "blind", Templates: []string{"insert-all", "titles"}}, {Role: "scoped", Templates: []string{"all"}}},
		Scopes:   []store.Scope{{Role: "scoped", Object: "mi/app/notes", Filter: "title=eq.mine"}},
	}}, dir: dir}
	e, _, _ := newTestEngine(t, reg)
	who := func(roles ...string) *auth.Principal {
		return &auth.Principal{IdentityID: "i1", Identity: "ann", OrgID: "o1", Org: "o", ProjectID: "p1", Project: "p", Roles: roles, KeyType: query.MaskAll}
	}
	writer, narrow, scoped := who("writer"), who("narrow"), who("scoped")
	plan := func(a query.Action, docs ...string) *query.Plan {
		p := &query.Plan{Action: a, Org: "o", Project: "p", Type: "mi", Schema: "app", Table: "notes"}
		for _, d := range docs {
			p.Docs = append(p.Docs, json.RawMessage(d))
		}
		return p
	}
	exec := func(p *auth.Principal, pl *query.Plan) (*query.Plan, error) {
		t.Helper()
		res, err := e.Execute(context.Background(), p, pl)
		if err == nil && res.Rows != nil {
			res.Rows.Close()
		}
		return pl, err
	}
	doc := func(p *auth.Principal, id string, order ...query.Order) string {
		t.Helper()
		pl := plan(query.Read)
		pl.Doc, pl.Columns, pl.Order = true, []string{"id"}, order
		if id != "" {
			pl.Where = &query.Cond{Column: "id", Op: query.Eq, Args: []any{id}}
		}
		res, err := e.Execute(context.Background(), p, pl)
		if err != nil {
			t.Fatalf("doc read: %v", err)
		}
		defer res.Rows.Close()
		cols := res.Rows.Columns()
		out := ""
		for res.Rows.Next() {
			v, err := res.Rows.Values()
			if err != nil || len(cols) != 2 || cols[1].Name != query.DocColumn {
				t.Fatalf("doc read: %v %v", cols, err)
			}
			out += string(v[1].(json.RawMessage))
		}
		return out
	}

	res, err := e.Execute(context.Background(), writer, plan(query.Insert, `{"title":"a","body":"hidden","score":5.0,"extra":null}`))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Returned[0][0].(string)
	const full = `{"body":"hidden","extra":null,"score":5.0,"title":"a"}`
	if got := doc(writer, id); got != full {
		t.Fatalf("writer's doc %s", got)
	}
	if got := doc(narrow, id); got != `{"title":"a"}` {
		t.Fatalf("narrow doc %s", got)
	}
	// A narrow replace keeps what it cannot reach; its merge too.
	up := plan(query.Update, `{"title":"b"}`)
	up.DocReplace, up.Where = true, &query.Cond{Column: "id", Op: query.Eq, Args: []any{id}}
	if _, err := exec(narrow, up); err != nil {
		t.Fatal(err)
	}
	if got := doc(writer, id); got != `{"body":"hidden","extra":null,"score":5.0,"title":"b"}` {
		t.Fatalf("after a narrow replace: %s", got)
	}
	// A writer's document may be ordered by any key.
	if _, err := exec(writer, plan(query.Insert, `{"title":"z","score":1}`)); err != nil {
		t.Fatal(err)
	}
	if got := doc(writer, "", query.Order{Column: "score"}); got != `{"score":1,"title":"z"}`+`{"body":"hidden","extra":null,"score":5.0,"title":"b"}` {
		t.Fatalf("order by score: %s", got)
	}

	// A key named as a row's own column is a document key (the writer's),
	// which the narrow caller does not see.
	res, err = e.Execute(context.Background(), writer, plan(query.Insert, `{"title":"k","id":"y"}`))
	if err != nil {
		t.Fatal(err)
	}
	kid := res.Returned[0][0].(string)
	if got := doc(writer, kid); kid == "y" || got != `{"id":"y","title":"k"}` {
		t.Fatalf("row %s: %s", kid, got)
	}
	if got := doc(narrow, kid); got != `{"title":"k"}` {
		t.Fatalf("narrow sees %s", got)
	}
	del := plan(query.Delete)
	del.Where = &query.Cond{Column: "id", Op: query.Eq, Args: []any{kid}}
	if _, err := exec(writer, del); err != nil {
		t.Fatal(err)
	}

	// An insert returns the stored document to a reader without a column
	// limit only.
	for _, c := range []struct {
		p    *auth.Principal
		want bool
	}{{writer, true}, {who("blind"), false}} {
		res, err := e.Execute(context.Background(), c.p, plan(query.Insert, `{"title":"r","body":"b"}`))
		if err != nil {
			t.Fatal(err)
		}
		last := res.Columns[len(res.Columns)-1]
		if got := last.Name == query.DocColumn; got != c.want || len(res.Returned) != 1 {
			t.Fatalf("%v: returned columns %v", c.p.Roles, res.Columns)
		}
		if c.want && string(res.Returned[0][len(res.Columns)-1].(json.RawMessage)) != `{"body":"b","title":"r"}` {
			t.Fatalf("returned document %v", res.Returned[0])
		}
		del := plan(query.Delete)
		del.Where = &query.Cond{Column: "title", Op: query.Eq, Args: []any{"r"}}
		if _, err := exec(writer, del); err != nil {
			t.Fatal(err)
		}
	}

	all := func(p *query.Plan) *query.Plan { p.All = true; return p }
	for _, c := range []struct {
		name string
		p    *auth.Principal
		plan *query.Plan
		kind fault.Kind
	}{
		{"narrow insert of a key no column names", narrow, plan(query.Insert, `{"title":"x","extra":1}`), fault.Invalid},
		{"narrow insert of a key named as a row's own column", narrow, plan(query.Insert, `{"title":"x","id":"y"}`), fault.Invalid},
		{"narrow insert of a hidden column", narrow, plan(query.Insert, `{"title":"x","body":"b"}`), fault.Invalid},
		{"narrow merge of a key no column names", narrow, all(plan(query.Update, `{"extra":1}`)), fault.Invalid},
		{"narrow merge of a hidden column", narrow, all(plan(query.Update, `{"body":null}`)), fault.Invalid},
		{"narrow order by a key no column names", narrow, func() *query.Plan {
			p := plan(query.Read)
			p.Doc = true
			p.Order = []query.Order{{Column: "score"}}
			return p
		}(), fault.Invalid},
		{"order by a key without Doc", writer, func() *query.Plan { p := plan(query.Read); p.Order = []query.Order{{Column: "score"}}; return p }(), fault.Invalid},
		{"scoped insert outside the scope", scoped, plan(query.Insert, `{"title":"theirs"}`), fault.Forbidden},
		{"scoped merge leaving the scope", scoped, all(plan(query.Update, `{"title":"theirs"}`)), fault.Forbidden},
		{"documents and records together", writer, func() *query.Plan {
			p := plan(query.Insert, `{"title":"x"}`)
			p.Records = []map[string]any{{"title": "y"}}
			return p
		}(), fault.Invalid},
		{"a document that is no object", writer, plan(query.Insert, `[1]`), fault.Invalid},
		{"documents to a source that stores none", writer, func() *query.Plan {
			p := plan(query.Insert, `{"owner":"x"}`)
			p.Type, p.Schema, p.Table = fakeType, "s", "items"
			return p
		}(), fault.Unsupported},
	} {
		if _, err := exec(c.p, c.plan); fault.KindOf(err) != c.kind {
			t.Errorf("%s: %v, want %s", c.name, err, c.kind)
		}
	}
	if _, err := exec(scoped, plan(query.Insert, `{"title":"mine","other":[1.0]}`)); err != nil {
		t.Fatalf("scoped insert inside the scope: %v", err)
	}
	if got := doc(writer, id); got != `{"body":"hidden","extra":null,"score":5.0,"title":"b"}` {
		t.Fatalf("a refused plan wrote: %s", got)
	}
}
