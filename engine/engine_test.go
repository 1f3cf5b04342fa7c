package engine_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/pg"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// The engine alone: a registry in memory and a database type "fk" whose
// source keeps one table in memory and decides conditions in Go. Every
// gate, refusal and audit outcome of Execute is a row of TestExecuteGates.

const fakeType = "fk"

var itemsTable = dialects.Table{Schema: "s", Name: "items", Columns: []dialects.Column{
	{Name: "id", DBType: "bigint", Kind: dialects.KindInt, PrimaryKey: true},
	{Name: "owner", DBType: "text", Kind: dialects.KindString, Nullable: true},
	{Name: "dept", DBType: "text", Kind: dialects.KindString, Nullable: true},
	{Name: "secret", DBType: "text", Kind: dialects.KindString, Nullable: true},
}}

// fakeSource is a table in memory; the last plan it ran is kept.
type fakeSource struct {
	mu   sync.Mutex
	rows [][]any
	last *query.Plan
}

var (
	fakeOnce sync.Once
	fakeSrc  = &fakeSource{}
)

// uncheckedType is a database type whose source cannot decide values
// (no dialects.ValueChecker): scoped writes on it must be refused.
const uncheckedType = "fn"

type unchecked struct{ dialects.Source }

func registerFake() {
	fakeOnce.Do(func() {
		dialects.Register(fakeType, func(context.Context, dialects.Config) (dialects.Source, error) { return fakeSrc, nil })
		dialects.Register(uncheckedType, func(context.Context, dialects.Config) (dialects.Source, error) { return unchecked{fakeSrc}, nil })
	})
}

func (f *fakeSource) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = [][]any{{int64(1), "ann", "6", "a"}, {int64(2), "bob", "7", "b"}, {int64(3), "ann", "7", "c"}}
	f.last = nil
}

func (f *fakeSource) Dialect() dialects.Dialect { return pg.Dialect{} }
func (f *fakeSource) Tables(context.Context) ([]dialects.Table, error) {
	return []dialects.Table{itemsTable}, nil
}
func (f *fakeSource) Ping(context.Context) error { return nil }
func (f *fakeSource) Close() error               { return nil }

// match decides e on one row as a database would, in Go.
func match(e query.Expr, row []any) bool {
	_, t := query.Residual(e, func(c string) (any, bool) {
		for i, col := range itemsTable.Columns {
			if col.Name == c {
				return row[i], true
			}
		}
		return nil, false
	})
	return t == query.True
}

func (f *fakeSource) Read(_ context.Context, p *query.Plan) (dialects.Rows, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = p
	var out [][]any
	for _, r := range f.rows {
		if match(p.Where, r) {
			out = append(out, r)
		}
	}
	if p.IsAggregate() {
		// The fake aggregates only count(*), the one a count plan asks.
		if len(p.Aggregates) != 1 || p.Aggregates[0].Func != query.AggCount || len(p.GroupBy) != 0 {
			return nil, fault.New(fault.Unsupported, "the fake source counts only")
		}
		col := dialects.Column{Name: p.Aggregates[0].Alias, Kind: dialects.KindInt}
		return &memRows{rows: [][]any{{int64(len(out))}}, cols: []dialects.Column{col}, i: -1}, nil
	}
	return &memRows{rows: out, cols: itemsTable.Columns, i: -1}, nil
}

func (f *fakeSource) Write(_ context.Context, p *query.Plan) (dialects.WriteResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = p
	var n int64
	switch p.Action {
	case query.Insert:
		for range p.Rows {
			f.rows = append(f.rows, []any{int64(len(f.rows) + 1), nil, nil, nil})
			n++
		}
	case query.Update, query.Delete:
		for _, r := range f.rows {
			if match(p.Where, r) {
				n++
			}
		}
	}
	return dialects.WriteResult{RowsAffected: n}, nil
}

// CheckValues decides each test in Go: the fake database's comparison.
func (f *fakeSource) CheckValues(_ context.Context, t *dialects.Table, tests []dialects.ValueTest) ([]bool, error) {
	out := make([]bool, len(tests))
	for i, ts := range tests {
		_, tri := query.Residual(ts.Expr, func(c string) (any, bool) {
			k := slices.Index(ts.Columns, c)
			if k < 0 {
				return nil, false
			}
			return ts.Row[k], true
		})
		out[i] = tri == query.True
	}
	return out, nil
}

type memRows struct {
	rows [][]any
	cols []dialects.Column
	i    int
}

func (r *memRows) Columns() []dialects.Column { return r.cols }
func (r *memRows) Next() bool                 { r.i++; return r.i < len(r.rows) }
func (r *memRows) Values() ([]any, error)     { return r.rows[r.i], nil }
func (r *memRows) Err() error                 { return nil }
func (r *memRows) Close() error               { return nil }

// registry is an engine.Registry in memory: one org "o", one project "p"
// with one fk database and a policy.
type registry struct{ pol store.Policy }

func (r *registry) ChangeSeq(context.Context) (int64, error) { return 1, nil }
func (r *registry) Changes(context.Context) <-chan struct{}  { return nil }
func (r *registry) Orgs(context.Context) ([]store.Org, error) {
	return []store.Org{{ID: "o1", Abbr: "o"}}, nil
}
func (r *registry) Policy(context.Context, string) (store.Policy, error) { return r.pol, nil }
func (r *registry) Projects(context.Context, string) ([]store.Project, error) {
	return []store.Project{{ID: "p1", OrgID: "o1", Abbr: "p"}}, nil
}
func (r *registry) Databases(context.Context) ([]store.Database, error) {
	return []store.Database{{ID: "d1", ProjectID: "p1", Type: fakeType, Schema: "s"}, {ID: "d2", ProjectID: "p1", Type: uncheckedType, Schema: "s"}}, nil
}
func (r *registry) CustomAPIs(context.Context, string) ([]store.CustomAPI, error) { return nil, nil }
func (r *registry) CustomAPIsAt(context.Context, string, string) ([]store.CustomAPI, error) {
	return nil, nil
}

// refusals keeps the gates the engine reports refusals of.
type refusals struct {
	mu    sync.Mutex
	gates []engine.RefusalGate
}

func (r *refusals) add(_ context.Context, g engine.RefusalGate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gates = append(r.gates, g)
}

// take returns the gates reported since the last take.
func (r *refusals) take() []engine.RefusalGate {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.gates
	r.gates = nil
	return out
}

// newTestEngine builds an engine over reg that records its audit entries
// and refusals; it is closed when the test ends.
func newTestEngine(t *testing.T, reg engine.Registry) (*engine.Engine, *auditLog, *refusals) {
	t.Helper()
	audit, gates := &auditLog{}, &refusals{}
	e, err := engine.New(t.Context(), reg, engine.Config{
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Audit:   audit,
		Refused: gates.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, audit, gates
}

// auditLog keeps audit entries.
type auditLog struct {
	mu      sync.Mutex
	entries []store.AuditEntry
}

func (a *auditLog) Record(e store.AuditEntry) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return true
}

func (a *auditLog) take() []store.AuditEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.entries
	a.entries = nil
	return out
}

func TestExecuteGates(t *testing.T) {
	registerFake()
	obj := fakeType + "/s/items"
	reg := &registry{pol: store.Policy{
		Templates: []store.Template{
			{Name: "read", Rules: []store.Rule{{Object: obj, Actions: []string{"read"}, Columns: []string{"dept", "id", "owner"}}}},
			{Name: "write", Rules: []store.Rule{{Object: "*/s/items", Actions: []string{"create", "read", "update", "delete"}}}},
			{Name: "other", Rules: []store.Rule{{Object: fakeType + "/s/elsewhere", Actions: []string{"read"}}}},
		},
		Bindings: []store.Binding{
			{Role: "reader", Templates: []string{"read"}},
			{Role: "writer", Templates: []string{"write"}},
			{Role: "dept", Templates: []string{"write"}},
			{Role: "stranger", Templates: []string{"other"}},
		},
		Scopes: []store.Scope{{Role: "dept", Object: "*/s/items", Filter: "dept=eq.{claims.dept}"}},
		Locks:  []store.Lock{{Pattern: fakeType + "/s/ite*", Mask: "cru-"}},
	}}
	e, audit, gates := newTestEngine(t, reg)

	ro, _ := query.ParseMask("-r--")
	who := func(keyType query.Mask, claims map[string]any, roles ...string) *auth.Principal {
		return &auth.Principal{IdentityID: "i1", Identity: "ann", OrgID: "o1", Org: "o", ProjectID: "p1", Project: "p",
			Roles: roles, KeyType: keyType, Claims: claims}
	}
	plan := func(a query.Action, mod func(*query.Plan)) *query.Plan {
		p := &query.Plan{Action: a, Org: "o", Project: "p", Type: fakeType, Schema: "s", Table: "items", Limit: 10}
		if mod != nil {
			mod(p)
		}
		return p
	}
	where := func(col, v string) func(*query.Plan) {
		return func(p *query.Plan) { p.Where = &query.Cond{Column: col, Op: query.Eq, Args: []any{v}} }
	}
	insert := func(rec map[string]any) func(*query.Plan) {
		return func(p *query.Plan) { p.Records = []map[string]any{rec} }
	}
	dept6 := map[string]any{"dept": "6"}
	cases := []struct {
		name    string
		p       *auth.Principal
		plan    *query.Plan
		kind    fault.Kind // 0: success
		gate    engine.RefusalGate
		rows    int64 // rows read or written on success
		audited string
	}{
		{"writer reads everything", who(query.MaskAll, nil, "writer"), plan(query.Read, nil), 0, "", 3, "ok"},
		{"reader reads its columns", who(query.MaskAll, nil, "reader"), plan(query.Read, nil), 0, "", 3, "ok"},
		{"a hidden column is unknown", who(query.MaskAll, nil, "reader"), plan(query.Read, where("secret", "a")), fault.Invalid, "", 0, "INVALID"},
		{"reader may not insert", who(query.MaskAll, nil, "reader"), plan(query.Insert, insert(map[string]any{"owner": "x"})), fault.Forbidden, engine.GateTemplate, 0, "FORBIDDEN"},
		{"a read-only key_type may not insert", who(ro, nil, "writer"), plan(query.Insert, insert(map[string]any{"owner": "x"})), fault.Forbidden, engine.GateLock, 0, "FORBIDDEN"},
		{"the lock forbids deletes", who(query.MaskAll, nil, "writer"), plan(query.Delete, where("owner", "ann")), fault.Forbidden, engine.GateLock, 0, "FORBIDDEN"},
		{"a stranger finds no table", who(query.MaskAll, nil, "stranger"), plan(query.Read, nil), fault.NotFound, engine.GateHidden, 0, "NOT_FOUND"},
		{"no roles, no table", who(query.MaskAll, nil), plan(query.Read, nil), fault.NotFound, engine.GateHidden, 0, "NOT_FOUND"},
		{"a missing claim fails closed", who(query.MaskAll, nil, "dept"), plan(query.Read, nil), fault.Forbidden, engine.GateScope, 0, "FORBIDDEN"},
		{"the scope limits reads", who(query.MaskAll, dept6, "dept"), plan(query.Read, nil), 0, "", 1, "ok"},
		{"the scope limits updates", who(query.MaskAll, dept6, "dept"), plan(query.Update, func(p *query.Plan) { p.All = true; p.Set = []query.Assign{{Column: "owner", Value: "zed"}} }), 0, "", 1, "ok"},
		{"an insert inside the scope", who(query.MaskAll, dept6, "dept"), plan(query.Insert, insert(map[string]any{"dept": "6"})), 0, "", 1, "ok"},
		{"an insert outside the scope", who(query.MaskAll, dept6, "dept"), plan(query.Insert, insert(map[string]any{"dept": "8"})), fault.Forbidden, engine.GateScope, 0, "FORBIDDEN"},
		{"an update leaving the scope", who(query.MaskAll, dept6, "dept"), plan(query.Update, func(p *query.Plan) { p.All = true; p.Set = []query.Assign{{Column: "dept", Value: "7"}} }), fault.Forbidden, engine.GateScope, 0, "FORBIDDEN"},
		{"an unknown table", who(query.MaskAll, nil, "writer"), plan(query.Read, func(p *query.Plan) { p.Table = "itemz" }), fault.NotFound, engine.GateHidden, 0, "NOT_FOUND"},
		{"another project's path", who(query.MaskAll, nil, "writer"), plan(query.Read, func(p *query.Plan) { p.Project = "q" }), fault.Invalid, "", 0, "INVALID"},
		{"an unknown column", who(query.MaskAll, nil, "writer"), plan(query.Read, where("nope", "x")), fault.Invalid, "", 0, "INVALID"},
		{"a scoped insert where values cannot be checked", who(query.MaskAll, dept6, "dept"), plan(query.Insert, func(p *query.Plan) {
			p.Type = uncheckedType
			p.Records = []map[string]any{{"dept": "6"}}
		}), fault.Forbidden, engine.GateScope, 0, "FORBIDDEN"},
		{"an unscoped insert there", who(query.MaskAll, nil, "writer"), plan(query.Insert, func(p *query.Plan) {
			p.Type = uncheckedType
			p.Records = []map[string]any{{"dept": "6"}}
		}), 0, "", 1, "ok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fakeSrc.reset()
			audit.take()
			gates.take()
			res, err := e.Execute(t.Context(), c.p, c.plan)
			if c.kind != 0 {
				if fault.KindOf(err) != c.kind {
					t.Fatalf("got %v (%s), want %s", err, fault.KindOf(err), c.kind)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				n := res.RowsAffected
				if res.Rows != nil {
					n = 0
					for res.Rows.Next() {
						n++
					}
					res.Rows.Close()
				}
				if n != c.rows {
					t.Fatalf("%d rows, want %d", n, c.rows)
				}
			}
			got := gates.take()
			if c.gate == "" && len(got) != 0 || c.gate != "" && (len(got) != 1 || got[0] != c.gate) {
				t.Fatalf("refusals counted %v, want %q", got, c.gate)
			}
			entries := audit.take()
			if len(entries) != 1 || entries[0].Outcome != c.audited || entries[0].Object != c.plan.Type+"/s/"+c.plan.Table {
				t.Fatalf("audit %+v, want one entry with outcome %s", entries, c.audited)
			}
		})
	}

	// The scope reached the source's WHERE, ANDed with the caller's filter.
	fakeSrc.reset()
	res, err := e.Execute(t.Context(), who(query.MaskAll, dept6, "dept"), plan(query.Read, where("owner", "ann")))
	if err != nil {
		t.Fatal(err)
	}
	res.Rows.Close()
	if got := query.Format(fakeSrc.last.Where); got != `owner eq "ann" AND dept eq "6"` && got != `(owner eq "ann") AND (dept eq "6")` {
		t.Logf("where sent: %s", got)
		if !match(fakeSrc.last.Where, []any{int64(1), "ann", "6", "a"}) || match(fakeSrc.last.Where, []any{int64(3), "ann", "7", "c"}) {
			t.Fatalf("the scope was not applied: %s", got)
		}
	}
	// Explain names each gate and the refusing one.
	x := e.Explain(t.Context(), who(query.MaskAll, nil, "writer"), plan(query.Delete, where("owner", "ann")))
	if fault.KindOf(x.Outcome) != fault.Forbidden || len(x.Gates) == 0 || x.Gates[len(x.Gates)-1].Decision != "refuse" || x.Gates[len(x.Gates)-1].Name != "1 lock mask" {
		t.Fatalf("explain: %+v", x)
	}
}

// TestListingsAndChecks: what a caller is shown and told without running
// anything follows the same decision as Execute.
func TestListingsAndChecks(t *testing.T) {
	registerFake()
	obj := fakeType + "/s/items"
	reg := &registry{pol: store.Policy{
		Templates: []store.Template{
			{Name: "read", Rules: []store.Rule{{Object: obj, Actions: []string{"read"}, Columns: []string{"dept", "id", "owner"}}}},
			{Name: "other", Rules: []store.Rule{{Object: fakeType + "/s/elsewhere", Actions: []string{"read"}}}},
		},
		Bindings: []store.Binding{{Role: "reader", Templates: []string{"read"}}, {Role: "stranger", Templates: []string{"other"}}},
	}}
	e, _, _ := newTestEngine(t, reg)
	ro, _ := query.ParseMask("-r--")
	who := func(keyType query.Mask, roles ...string) *auth.Principal {
		return &auth.Principal{IdentityID: "i1", Identity: "ann", OrgID: "o1", Org: "o", ProjectID: "p1", Project: "p", Roles: roles, KeyType: keyType}
	}
	reader, stranger := who(query.MaskAll, "reader"), who(query.MaskAll, "stranger")

	ts, err := e.Tables(t.Context(), reader, fakeType, "s")
	if err != nil || len(ts) != 1 || ts[0].Name != "items" || len(ts[0].Columns) != 3 {
		t.Fatalf("reader's tables: %v %+v", err, ts)
	}
	if ts, err := e.Tables(t.Context(), stranger, fakeType, "s"); err != nil || len(ts) != 0 {
		t.Fatalf("a stranger lists %+v (%v)", ts, err)
	}
	if err := e.Check(reader, obj, query.Read); err != nil {
		t.Fatal(err)
	}
	if err := e.Check(reader, obj, query.Insert); fault.KindOf(err) != fault.Forbidden {
		t.Fatalf("reader's insert checked: %v", err)
	}
	if err := e.Check(stranger, obj, query.Read); err != nil {
		t.Fatalf("a hidden table is left to the call's 404: %v", err)
	}
	if !e.Could(reader, engine.Need{Action: query.Read}) || e.Could(reader, engine.Need{Action: query.Insert}) {
		t.Fatal("Could: the reader reads and does not insert")
	}
	if e.Could(who(ro, "reader"), engine.Need{Action: query.Update}) || e.Could(reader, engine.Need{Admin: true}) {
		t.Fatal("Could: a read-only token updates, or a reader passes for an admin")
	}
	fakeSrc.reset()
	n, err := e.Count(t.Context(), reader, &query.Plan{Action: query.Read, Org: "o", Project: "p", Type: fakeType, Schema: "s", Table: "items", Count: query.CountExact})
	if err != nil || n != 3 {
		t.Fatalf("count: %d %v", n, err)
	}
	if _, err := e.Count(t.Context(), stranger, &query.Plan{Action: query.Read, Org: "o", Project: "p", Type: fakeType, Schema: "s", Table: "items", Count: query.CountExact}); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("a stranger counts: %v", err)
	}
}
