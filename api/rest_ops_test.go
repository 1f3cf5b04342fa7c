package api_test

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

const itemSchema = `table: item
fields:
  - name: dept
    type: string
  - name: name
    type: string
  - name: qty
    type: number
  - name: secret
    type: string
`

// TestRESTCountsLogicAggregatesUpsertsReturn runs the PostgREST-style
// additions over REST on PostgreSQL, MariaDB, ClickHouse and a mini-app
// table: count=exact|planned|estimated (page.total and Content-Range),
// or= trees with a nested and, agg= with group=, upserts (merge and
// ignore where the dialect can, a clear 400 UNSUPPORTED where it cannot),
// return=rows on PATCH and DELETE. Refusals: a scoped writer's upsert
// neither creates nor changes rows outside its scope; a column-limited role
// cannot count, filter or aggregate by a hidden column (400 unknown
// column) and gets only its readable columns back from return=rows.
func TestRESTCountsLogicAggregatesUpsertsReturn(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	name := g.dialectDBs("ro", map[string][]string{
		"pg": {`CREATE TABLE {db}.item (id bigint PRIMARY KEY, dept text NOT NULL, name text, qty int, secret text)`},
		"ma": {`CREATE TABLE {db}.item (id bigint PRIMARY KEY, dept varchar(10) NOT NULL, name varchar(20), qty int, secret varchar(20))`},
		"ch": {`CREATE TABLE {db}.item (id Int64, dept String, name Nullable(String), qty Nullable(Int32), secret Nullable(String)) ENGINE = MergeTree ORDER BY id`},
	})
	if err := mi.CreateTable(g.dir+"/mini-app/app", "item", []byte(itemSchema)); err != nil {
		t.Fatal(err)
	}
	pol := store.Policy{
		Templates: []store.Template{
			{Name: "all", Rules: []store.Rule{{Object: "*/*/item", Actions: []string{"create", "read", "update", "delete"}}}},
			{Name: "open", Rules: []store.Rule{{Object: "*/*/item", Actions: []string{"create", "read", "update", "delete"}, Columns: []string{"dept", "id", "name", "qty"}}}},
		},
		Bindings: []store.Binding{{Role: "dept-a", Templates: []string{"all"}}, {Role: "limited", Templates: []string{"open"}}},
		Scopes:   []store.Scope{{Role: "dept-a", Object: "*/*/item", Filter: "dept=eq.a"}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	for _, id := range []store.Identity{{Name: "ada", Roles: []string{"dept-a"}}, {Name: "lim", Roles: []string{"limited"}}} {
		id.ProjectID, id.SpaceID, id.Kind, id.KeyType, id.Enabled = g.proj.ID, space.ID, "user", "crud", true
		if _, err := g.st.CreateIdentity(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	ada, lim := g.mint("ada", auth.MintOptions{}), g.mint("lim", auth.MintOptions{})

	seed := []map[string]any{
		{"id": 1, "dept": "a", "name": "one", "qty": 1, "secret": "s1"},
		{"id": 2, "dept": "a", "name": "two", "qty": 2, "secret": "s2"},
		{"id": 3, "dept": "b", "name": "three", "qty": 3, "secret": "s3"},
		{"id": 4, "dept": "b", "name": "four", "qty": 4, "secret": "s4"},
		{"id": 5, "dept": "c", "name": "five", "qty": 5, "secret": "s5"},
	}
	for _, typ := range []string{"pg", "ma", "ch", "mi"} {
		t.Run(typ, func(t *testing.T) {
			schema := name
			if typ == "mi" {
				schema = "app"
			}
			path := auto + "/" + typ + "/" + schema + "/item"
			g.waitFor("/" + typ + "/" + schema + "/item?ps=1&pg=0")
			body := make([]map[string]any, len(seed))
			for i, r := range seed {
				m := map[string]any{}
				for k, v := range r {
					if k != "id" || typ != "mi" {
						m[k] = v
					}
				}
				body[i] = m
			}
			expect(t, g.do("POST", path, g.admin, body), 201)
			// The rows' names, sorted, answer each read (mi has ids of its own).
			namesOf := func(r reply) string {
				t.Helper()
				expect(t, r, 200)
				var n []string
				for _, row := range r.data(t) {
					n = append(n, fmt.Sprint(row["name"]))
				}
				sort.Strings(n)
				return strings.Join(n, ",")
			}

			// Counts.
			r := g.do("GET", path+"?ps=2&pg=0&qty=gt.1&count=exact", g.admin, nil)
			expect(t, r, 200)
			page := r.json(t)["page"].(map[string]any)
			if fmt.Sprint(page["total"]) != "4" || r.header.Get("Content-Range") != "0-1/4" {
				t.Errorf("count=exact: page %v, Content-Range %q", page, r.header.Get("Content-Range"))
			}
			r = g.do("GET", path+"?ps=2&pg=5&count=estimated&format=csv", g.admin, nil)
			if expect(t, r, 200); r.header.Get("Content-Range") != "*/5" {
				t.Errorf("count=estimated past the end: Content-Range %q", r.header.Get("Content-Range"))
			}
			// pg and ma estimate from their statistics; ch and mi count.
			r = g.do("GET", path+"?ps=2&pg=0&count=planned", g.admin, nil)
			expect(t, r, 200)
			if total := fmt.Sprint(r.json(t)["page"].(map[string]any)["total"]); total == "<nil>" || (typ != "pg" && typ != "ma" && total != "5") {
				t.Errorf("count=planned: total %s", total)
			}
			r = g.do("GET", path+"?ps=10&pg=0&count=exact", ada, nil)
			if expect(t, r, 200); fmt.Sprint(r.json(t)["page"].(map[string]any)["total"]) != "2" {
				t.Errorf("scoped count: %s", r.body)
			}

			// or= with a nested and; the scope stays ANDed outside.
			q := "?ps=10&pg=0&or=" + url.QueryEscape("(qty.eq.1,and(dept.eq.b,qty.ge.4),name.in.(five,none))")
			if got := namesOf(g.do("GET", path+q, g.admin, nil)); got != "five,four,one" {
				t.Errorf("or: %s", got)
			}
			if got := namesOf(g.do("GET", path+q, ada, nil)); got != "one" {
				t.Errorf("scoped or: %s", got)
			}

			// Aggregates with a group, ordered by it.
			r = g.do("GET", path+"?ps=10&pg=0&agg=count(),sum(qty),top:max(qty)&group=dept&oy=dept", g.admin, nil)
			expect(t, r, 200)
			var groups []string
			for _, row := range r.data(t) {
				groups = append(groups, fmt.Sprintf("%v:%v:%v:%v", row["dept"], row["count"], row["sum_qty"], row["top"]))
			}
			if got := strings.Join(groups, " "); got != "a:2:3:2 b:2:7:4 c:1:5:5" {
				t.Errorf("agg: %s", got)
			}
			r = g.do("GET", path+"?ps=10&pg=0&agg=count()&or="+url.QueryEscape("(qty.eq.3,qty.eq.1)"), ada, nil)
			if expect(t, r, 200); fmt.Sprint(r.data(t)) != "[map[count:1]]" {
				t.Errorf("scoped agg: %s", r.body)
			}

			// A column-limited role: hidden columns are unknown everywhere.
			for _, q := range []string{
				"?ps=1&pg=0&count=exact&secret=eq.s1",
				"?ps=1&pg=0&or=" + url.QueryEscape("(qty.eq.1,secret.eq.s1)"),
				"?ps=1&pg=0&agg=count(secret)",
				"?ps=1&pg=0&agg=count()&group=secret",
			} {
				r := g.do("GET", path+q, lim, nil)
				if expect(t, r, 400); !strings.Contains(r.errorMessage(t), `unknown column "secret"`) {
					t.Errorf("%s: %s", q, r.body)
				}
			}

			switch typ {
			case "pg", "ma":
				// Merge updates the duplicate, ignore keeps it.
				expect(t, g.do("POST", path+"?on_conflict=id", g.admin, []map[string]any{{"id": 1, "dept": "a", "name": "uno"}, {"id": 6, "dept": "c", "name": "six"}}), 201)
				expect(t, g.do("POST", path+"?on_conflict=id&resolution=ignore", g.admin, map[string]any{"id": 2, "dept": "a", "name": "dos"}), 201)
				if got := namesOf(g.do("GET", path+"?ps=10&pg=0&id=in.1,2,6", g.admin, nil)); got != "six,two,uno" {
					t.Errorf("upsert: %s", got)
				}
				// The scoped writer: a row it may not see is never changed,
				// and a row outside its scope is never created.
				expect(t, g.do("POST", path+"?on_conflict=id", ada, map[string]any{"id": 3, "dept": "a", "name": "stolen"}), 201)
				expect(t, g.do("POST", path+"?on_conflict=id&resolution=ignore", ada, map[string]any{"id": 3, "dept": "a", "name": "stolen"}), 201)
				if got := namesOf(g.do("GET", path+"?ps=10&pg=0&id=eq.3", g.admin, nil)); got != "three" {
					t.Errorf("scoped upsert changed a row outside the scope: %s", got)
				}
				expect(t, g.do("POST", path+"?on_conflict=id", ada, map[string]any{"id": 7, "dept": "b", "name": "out"}), 403)
				if got := namesOf(g.do("GET", path+"?ps=10&pg=0&id=eq.7", g.admin, nil)); got != "" {
					t.Errorf("scoped upsert created a row outside the scope: %s", got)
				}
				expect(t, g.do("POST", path+"?on_conflict=id", ada, map[string]any{"id": 2, "dept": "a", "name": "deux"}), 201)
				if got := namesOf(g.do("GET", path+"?ps=10&pg=0&id=eq.2", g.admin, nil)); got != "deux" {
					t.Errorf("scoped upsert inside the scope: %s", got)
				}
			default:
				r := g.do("POST", path+"?on_conflict=dept", g.admin, map[string]any{"dept": "a", "name": "x"})
				if expect(t, r, 400); !strings.Contains(string(r.body), "UNSUPPORTED") {
					t.Errorf("upsert on %s: %s", typ, r.body)
				}
			}

			// return=rows on PATCH and DELETE (pg, ma), with only the
			// columns the caller may read; refused clearly elsewhere.
			unsupported := func(r reply) {
				t.Helper()
				if expect(t, r, 400); !strings.Contains(string(r.body), "UNSUPPORTED") {
					t.Errorf("return=rows on %s: %s", typ, r.body)
				}
			}
			r = g.do("PATCH", path+"?return=rows&name=eq.five", lim, map[string]any{"qty": 50})
			if typ == "pg" || typ == "ma" { // ma reads the rows back by primary key
				expect(t, r, 200)
				ret := r.json(t)
				if s := fmt.Sprint(ret["data"]); !strings.Contains(s, "five") || strings.Contains(s, "s5") || fmt.Sprint(ret["rows_affected"]) != "1" {
					t.Errorf("return=rows: %s", r.body)
				}
			} else {
				unsupported(r)
			}
			r = g.do("DELETE", path+"?return=rows&name=eq.five", lim, nil)
			if typ != "pg" && typ != "ma" {
				unsupported(r)
				return
			}
			expect(t, r, 200)
			if ret := r.json(t); fmt.Sprint(ret["rows_affected"]) != "1" || !strings.Contains(fmt.Sprint(ret["data"]), "five") || strings.Contains(string(r.body), "s5") || strings.Contains(string(r.body), "secret") {
				t.Errorf("delete return=rows: %s", r.body)
			}
			r = g.do("DELETE", path+"?return=rows&name=eq.four", g.admin, nil)
			if expect(t, r, 200); !strings.Contains(string(r.body), "s4") {
				t.Errorf("delete return=rows as admin: %s", r.body)
			}
		})
	}
}
