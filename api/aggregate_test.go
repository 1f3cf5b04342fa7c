package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

const salesSchema = `table: sales
fields:
  - name: region
    type: string
  - name: qty
    type: number
  - name: price
    type: number
  - name: day
    type: string
`

// TestAggregateAcrossDialects runs aggregate plans through engine.Execute
// on the same rows in PostgreSQL, MariaDB, ClickHouse and a mini-app table
// and asserts that each answer equals what the database itself answers to
// the same aggregate written by hand in SQL (pg, ma, ch), and that the
// four agree. The row scope is ANDed in (a scoped role counts its rows
// only), hidden and unknown columns are refused as unknown (400), a sum of
// text is refused, and the lock and template gates refuse as for any read.
func TestAggregateAcrossDialects(t *testing.T) {
	audit := &auditRecorder{}
	g := newGateway(t, engine.Config{Audit: audit})
	ctx := context.Background()
	name := g.dialectDBs("ag", map[string][]string{
		"pg": {`CREATE TABLE {db}.sales (id bigint PRIMARY KEY, region text NOT NULL, qty int, price numeric(10,2) NOT NULL, day date NOT NULL)`},
		"ma": {`CREATE TABLE {db}.sales (id bigint PRIMARY KEY, region varchar(20) COLLATE utf8mb4_bin NOT NULL, qty int NULL, price decimal(10,2) NOT NULL, day date NOT NULL)`},
		"ch": {`CREATE TABLE {db}.sales (id Int64, region String, qty Nullable(Int32), price Decimal(10,2), day Date) ENGINE = MergeTree ORDER BY id`},
	})
	if err := mi.CreateTable(g.dir+"/mini-app/app", "sales", []byte(salesSchema)); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]string{"pg": name, "ma": name, "ch": name, "mi": "app"}
	types := []string{"pg", "ma", "ch", "mi"}
	rows := []map[string]any{
		{"id": 1, "region": "north", "qty": 3, "price": "1.50", "day": "2024-01-15"},
		{"id": 2, "region": "north", "qty": 5, "price": "20.00", "day": "2024-02-29"},
		{"id": 3, "region": "south", "qty": nil, "price": "5.50", "day": "2024-03-01"},
		{"id": 4, "region": "south", "qty": 1, "price": "99.99", "day": "1999-12-31"},
		{"id": 5, "region": "east", "qty": 2, "price": "0.01", "day": "2024-06-30"},
		{"id": 6, "region": "north", "qty": 7, "price": "3.25", "day": "2024-12-31"},
	}
	for _, typ := range types {
		path := "/" + typ + "/" + schemas[typ] + "/sales"
		g.waitFor(path + "?ps=1&pg=0")
		body := make([]map[string]any, len(rows))
		for i, r := range rows {
			m := map[string]any{}
			for k, v := range r {
				m[k] = v
			}
			if typ == "mi" { // JSON numbers; mi makes the id itself
				delete(m, "id")
				m["price"], _ = strconv.ParseFloat(r["price"].(string), 64)
			}
			body[i] = m
		}
		expect(t, g.do("POST", auto+path, g.admin, body), 201)
	}

	ver := auth.NewVerifier(g.st, g.key)
	principal := func(tok string) *auth.Principal {
		t.Helper()
		p, err := ver.Verify(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	admin := principal(g.admin)
	cond := func(col string, op query.Op, args ...any) *query.Cond {
		return &query.Cond{Column: col, Op: op, Args: args}
	}
	plan := func(typ string) *query.Plan {
		return &query.Plan{Action: query.Read, Org: "demo", Project: "demo", Type: typ, Schema: schemas[typ], Table: "sales"}
	}
	// run executes an aggregate plan and checks its audit entry: a read of
	// the table, as many rows as groups came back (the rows themselves
	// never leave the database), or the refusal's code.
	run := func(p *auth.Principal, pl *query.Plan) ([][]string, error) {
		t.Helper()
		object := pl.Type + "/" + pl.Schema + "/sales"
		before := audit.len()
		out, err := func() ([][]string, error) {
			res, err := g.eng.Execute(ctx, p, pl)
			if err != nil {
				return nil, err
			}
			defer res.Rows.Close()
			var out [][]string
			for res.Rows.Next() {
				vals, err := res.Rows.Values()
				if err != nil {
					return nil, err
				}
				out = append(out, normRow(vals))
			}
			return out, res.Rows.Err()
		}()
		e, ok := audit.last(before)
		switch {
		case !ok:
			t.Errorf("%s: aggregate not audited", object)
		case e.Action != "read" || e.Object != object || e.Identity != p.Identity:
			t.Errorf("%s: audited %s %s by %s", object, e.Action, e.Object, e.Identity)
		case err == nil && (e.Outcome != "ok" || e.Rows != int64(len(out))):
			t.Errorf("%s: audited %s with %d rows, answered %d groups", object, e.Outcome, e.Rows, len(out))
		case err != nil && e.Outcome != fault.As(err).WireCode():
			t.Errorf("%s: audited %s, refused with %v", object, e.Outcome, err)
		}
		return out, err
	}

	cases := []struct {
		name string
		fill func(p *query.Plan)
		sql  string // by hand, {t} the table; nothing of the engine's
		want string
		ch   string // ClickHouse's answer where it differs (documented in docs/dialects.md)
	}{
		{"count", func(p *query.Plan) {
			p.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: "n"}}
		}, `SELECT count(*) FROM {t}`, "[[6]]", ""},
		{"functions", func(p *query.Plan) {
			p.Aggregates = []query.Aggregate{
				{Func: query.AggCount, Column: "qty", Alias: "c"},
				{Func: query.AggSum, Column: "qty", Alias: "s"},
				{Func: query.AggAvg, Column: "qty", Alias: "a"},
				{Func: query.AggMin, Column: "price", Alias: "lo"},
				{Func: query.AggMax, Column: "price", Alias: "hi"},
				{Func: query.AggMin, Column: "day", Alias: "d0"},
				{Func: query.AggMax, Column: "day", Alias: "d1"},
			}
		}, `SELECT count(qty), sum(qty), avg(qty), min(price), max(price), min(day), max(day) FROM {t}`,
			"[[5 18 3.6 0.01 99.99 1999-12-31 2024-12-31]]", ""},
		{"where_group_having_order", func(p *query.Plan) {
			p.Where = cond("price", query.Gt, "1")
			p.GroupBy = []string{"region"}
			p.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: "n"}, {Func: query.AggSum, Column: "price", Alias: "total"}}
			p.Having = cond("n", query.Ge, "2")
			p.Order = []query.Order{{Column: "region"}}
		}, `SELECT region, count(*), sum(price) FROM {t} WHERE price > 1 GROUP BY region HAVING count(*) >= 2 ORDER BY region`,
			"[[north 3 24.75] [south 2 105.49]]", ""},
		{"order_by_aggregate_paged", func(p *query.Plan) {
			p.GroupBy = []string{"region"}
			p.Aggregates = []query.Aggregate{{Func: query.AggCount, Column: "qty", Alias: "c"}, {Func: query.AggMax, Column: "qty", Alias: "top"}}
			p.Order = []query.Order{{Column: "top", Desc: true}}
			p.Limit = 2
		}, `SELECT region, count(qty), max(qty) FROM {t} GROUP BY region ORDER BY max(qty) DESC LIMIT 2`,
			"[[north 3 7] [east 1 2]]", ""},
		{"having_on_group_column", func(p *query.Plan) {
			p.GroupBy = []string{"region"}
			p.Aggregates = []query.Aggregate{{Func: query.AggAvg, Column: "price", Alias: "mean"}}
			p.Having = query.Or{cond("region", query.Eq, "east"), cond("mean", query.Gt, "50")}
			p.Order = []query.Order{{Column: "region", Desc: true}}
		}, `SELECT region, avg(price) FROM {t} GROUP BY region HAVING region = 'east' OR avg(price) > 50 ORDER BY region DESC`,
			"[[south 52.745] [east 0.01]]", "[[south 52.74] [east 0.01]]"},
	}
	direct := directQueriers(t, name)
	for _, c := range cases {
		for _, typ := range types {
			pl := plan(typ)
			c.fill(pl)
			got, err := run(admin, pl)
			if err != nil {
				t.Fatalf("%s on %s: %v", c.name, typ, err)
			}
			want := c.want
			if typ == "ch" && c.ch != "" {
				want = c.ch // avg of a Decimal keeps the column's scale
			}
			if fmt.Sprint(got) != want {
				t.Errorf("%s on %s: engine answered %v, want %s", c.name, typ, got, want)
			}
			if typ == "mi" {
				continue // no SQL client of its own: it must agree with the others
			}
			sqlGot := direct[typ](strings.ReplaceAll(c.sql, "{t}", name+".sales"))
			if fmt.Sprint(sqlGot) != fmt.Sprint(got) {
				t.Errorf("%s on %s: engine answered %v, the database's own SQL %v", c.name, typ, got, sqlGot)
			}
		}
	}

	// Refusals of the plan itself, on every dialect.
	for _, typ := range types {
		for _, c := range []struct {
			fill func(p *query.Plan)
			want string
		}{
			{func(p *query.Plan) {
				p.Aggregates = []query.Aggregate{{Func: query.AggSum, Column: "nope", Alias: "s"}}
			}, `unknown column "nope"`},
			{func(p *query.Plan) {
				p.Aggregates = []query.Aggregate{{Func: query.AggSum, Column: "region", Alias: "s"}}
			}, `sum needs a numeric column, "region" is string`},
			{func(p *query.Plan) {
				p.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: "qty"}}
			}, `aggregate name "qty" is already a column name`},
			{func(p *query.Plan) {
				p.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: "n"}}
				p.Having = cond("qty", query.Gt, "1")
			}, `having "qty": only group columns and aggregate names may be tested`},
			{func(p *query.Plan) {
				p.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: "n"}}
				p.Order = []query.Order{{Column: "region"}}
			}, `order "region": an aggregate read is ordered by its group columns and aggregate names`},
			{func(p *query.Plan) {
				p.Columns = []string{"region"}
				p.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: "n"}}
			}, "an aggregate read has no column list: it answers its group columns and aggregates"},
		} {
			pl := plan(typ)
			c.fill(pl)
			_, err := run(admin, pl)
			if fault.KindOf(err) != fault.Invalid || fault.As(err).Message != c.want {
				t.Errorf("%s: %v, want Invalid %q", typ, err, c.want)
			}
		}
	}

	// The permission gates: a scoped role aggregates its rows only and
	// cannot name a column its template leaves out; a role without read
	// and a create-only key are refused with their roles named.
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, store.Policy{
		Templates: []store.Template{
			{Name: "sales-read", Rules: []store.Rule{{Object: "*/*/sales", Actions: []string{"read"}, Columns: []string{"id", "region", "qty"}}}},
			{Name: "sales-create", Rules: []store.Rule{{Object: "*/*/sales", Actions: []string{"create"}}}},
		},
		Bindings: []store.Binding{{Role: "north-analyst", Templates: []string{"sales-read"}}, {Role: "sales-clerk", Templates: []string{"sales-create"}}},
		Scopes:   []store.Scope{{Role: "north-analyst", Object: "*/*/sales", Filter: "region=eq.north"}},
	}); err != nil {
		t.Fatal(err)
	}
	analyst := principal(g.userToken("nora", "north-analyst"))
	clerk := principal(g.userToken("carl", "sales-clerk"))
	sp, _ := g.st.Space(ctx, g.proj.ID, "main")
	if _, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: sp.ID, Name: "cora", Kind: "user",
		Roles: []string{"north-analyst"}, KeyType: "c---", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	createOnly := principal(g.mint("cora", auth.MintOptions{}))
	for _, typ := range types {
		count := func(p *auth.Principal) ([][]string, error) {
			pl := plan(typ)
			pl.GroupBy = []string{"region"}
			pl.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: "n"}, {Func: query.AggSum, Column: "qty", Alias: "q"}}
			return run(p, pl)
		}
		eventually(t, typ+" scoped aggregate", func() (bool, string) {
			got, err := count(analyst)
			return err == nil && fmt.Sprint(got) == "[[north 3 15]]", fmt.Sprint(got, err)
		})
		pl := plan(typ)
		pl.Aggregates = []query.Aggregate{{Func: query.AggMax, Column: "price", Alias: "hi"}}
		if _, err := run(analyst, pl); fault.KindOf(err) != fault.Invalid || fault.As(err).Message != `unknown column "price"` {
			t.Errorf("%s: max of a hidden column: %v", typ, err)
		}
		if _, err := count(clerk); fault.KindOf(err) != fault.Forbidden || !strings.Contains(err.Error(), "got [sales-clerk]") {
			t.Errorf("%s: aggregate without read: %v", typ, err)
		}
		if _, err := count(createOnly); fault.KindOf(err) != fault.Forbidden || !strings.Contains(err.Error(), "north-analyst") {
			t.Errorf("%s: aggregate with key_type c---: %v", typ, err)
		}
	}
}

// directQueriers opens each SQL database of the test directly and returns,
// per type, a function that runs a statement and answers its rows
// normalized as the engine's are.
func directQueriers(t *testing.T, db string) map[string]func(string) [][]string {
	ctx := context.Background()
	pc, err := pgx.Connect(ctx, dialecttest.DSN(t, "MINIMAL_TEST_PG_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(context.Background()) })
	mc, err := sql.Open("mysql", dialecttest.DSN(t, "MINIMAL_TEST_MA_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mc.Close() })
	opts, err := clickhouse.ParseDSN(dialecttest.DSN(t, "MINIMAL_TEST_CH_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := clickhouse.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	return map[string]func(string) [][]string{
		"pg": func(q string) (out [][]string) {
			rs, err := pc.Query(ctx, q)
			must(err)
			defer rs.Close()
			for rs.Next() {
				vals, err := rs.Values()
				must(err)
				out = append(out, normRow(vals))
			}
			must(rs.Err())
			return out
		},
		"ma": func(q string) (out [][]string) {
			rs, err := mc.QueryContext(ctx, q)
			must(err)
			defer rs.Close()
			cols, _ := rs.Columns()
			for rs.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				must(rs.Scan(ptrs...))
				out = append(out, normRow(vals))
			}
			must(rs.Err())
			return out
		},
		"ch": func(q string) (out [][]string) {
			rs, err := cc.Query(ctx, q)
			must(err)
			defer rs.Close()
			cts := rs.ColumnTypes()
			for rs.Next() {
				ptrs := make([]any, len(cts))
				for i, ct := range cts {
					ptrs[i] = reflect.New(ct.ScanType()).Interface()
				}
				must(rs.Scan(ptrs...))
				vals := make([]any, len(ptrs))
				for i, p := range ptrs {
					vals[i] = reflect.ValueOf(p).Elem().Interface()
				}
				out = append(out, normRow(vals))
			}
			must(rs.Err())
			return out
		},
	}
}

// normRow writes each cell as text comparable across databases: numbers
// rounded to 6 decimals without trailing zeros (so 3.6, 3.6000 and
// 3.6000000000000001 agree), dates as YYYY-MM-DD, NULL as NULL.
func normRow(vals []any) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = normCell(v)
	}
	return out
}

func normCell(v any) string {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "NULL"
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return "NULL"
	}
	var s string
	switch x := rv.Interface().(type) {
	case time.Time:
		return x.Format("2006-01-02")
	case pgtype.Numeric:
		f, err := x.Float64Value()
		if err != nil || !f.Valid {
			return "NULL"
		}
		s = strconv.FormatFloat(f.Float64, 'f', -1, 64)
	case []byte:
		s = string(x)
	case json.Number:
		s = string(x)
	case fmt.Stringer:
		s = x.String()
	default:
		s = fmt.Sprint(x)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		s = strconv.FormatFloat(math.Round(f*1e6)/1e6, 'f', -1, 64)
	}
	return s
}

// auditRecorder keeps the engine's audit entries, as store.AuditWriter
// would queue them.
type auditRecorder struct {
	mu      sync.Mutex
	entries []store.AuditEntry
}

func (a *auditRecorder) Record(e store.AuditEntry) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return true
}

func (a *auditRecorder) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.entries)
}

// last is the one entry recorded after the first n, if exactly one was.
func (a *auditRecorder) last(n int) (store.AuditEntry, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.entries) != n+1 {
		return store.AuditEntry{}, false
	}
	return a.entries[n], true
}
