package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// TestRESTDialectGaps covers over real HTTP what each dialect declares for
// the REST additions, successes and refusals alike:
//   - ma: PATCH …?return=rows answers the updated rows (read back by primary
//     key in the update's transaction), only the columns the caller may
//     read; on a table without a primary key it is a 400 UNSUPPORTED that
//     changes nothing.
//   - ch: count=planned answers the rows of the table's active parts
//     (system.parts) for an unfiltered, unscoped read, and counts a
//     filtered or scoped one exactly, as count=exact and count=estimated
//     (exact below the threshold) do.
//   - pg and ma: on_conflict naming a column that is no unique key is a 400
//     and writes nothing.
func TestRESTDialectGaps(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	name := g.dialectDBs("gaps", map[string][]string{
		"pg": {`CREATE TABLE {db}.item (id bigint PRIMARY KEY, name text, qty int, secret text)`},
		"ma": {
			`CREATE TABLE {db}.item (id bigint PRIMARY KEY, name varchar(20), qty int, secret varchar(20))`,
			`CREATE TABLE {db}.nokey (name varchar(20), qty int)`,
		},
		"ch": {`CREATE TABLE {db}.item (id Int64, name Nullable(String), qty Nullable(Int32), secret Nullable(String)) ENGINE = MergeTree ORDER BY id`},
	})
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, store.Policy{
		Templates: []store.Template{{Name: "open", Rules: []store.Rule{
			{Object: "*/*/item", Actions: []string{"create", "read", "update", "delete"}, Columns: []string{"id", "name", "qty"}},
			{Object: "*/*/nokey", Actions: []string{"create", "read", "update", "delete"}},
		}}},
		Bindings: []store.Binding{{Role: "limited", Templates: []string{"open"}}, {Role: "few", Templates: []string{"open"}}},
		Scopes:   []store.Scope{{Role: "few", Object: "*/*/item", Filter: "qty=gt.1"}},
	}); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	for name, role := range map[string]string{"lim": "limited", "few": "few"} {
		if _, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: space.ID, Name: name, Kind: "user", Roles: []string{role}, KeyType: "crud", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	lim, few := g.mint("lim", auth.MintOptions{}), g.mint("few", auth.MintOptions{})
	seed := []map[string]any{
		{"id": 1, "name": "one", "qty": 1, "secret": "s1"},
		{"id": 2, "name": "two", "qty": 2, "secret": "s2"},
		{"id": 3, "name": "three", "qty": 3, "secret": "s3"},
	}
	unsupported := func(t *testing.T, r reply, what string) {
		t.Helper()
		if expect(t, r, 400); !strings.Contains(string(r.body), "UNSUPPORTED") {
			t.Errorf("%s: %s", what, r.body)
		}
	}
	rowsOf := func(t *testing.T, path string) string {
		t.Helper()
		r := g.do("GET", path+"?ps=10&pg=0&oy=id.as", g.admin, nil)
		expect(t, r, 200)
		return fmt.Sprint(r.data(t))
	}

	t.Run("ma update return=rows", func(t *testing.T) {
		path := auto + "/ma/" + name + "/item"
		g.waitFor("/ma/" + name + "/item?ps=1&pg=0")
		expect(t, g.do("POST", path, g.admin, seed), 201)
		r := g.do("PATCH", path+"?return=rows&qty=ge.2", lim, map[string]any{"qty": 20})
		expect(t, r, 200)
		ret := r.json(t)
		if got := fmt.Sprint(ret["data"]); got != "[map[id:2 name:two qty:20] map[id:3 name:three qty:20]]" || fmt.Sprint(ret["rows_affected"]) != "2" {
			t.Errorf("return=rows: %s", r.body)
		}
		if strings.Contains(string(r.body), "secret") || strings.Contains(string(r.body), "s2") {
			t.Errorf("return=rows shows a column the caller may not read: %s", r.body)
		}
		// The key set by the update is read back at its new value.
		r = g.do("PUT", path+"?return=rows&id=eq.3", g.admin, map[string]any{"id": 30, "name": "thirty"})
		if expect(t, r, 200); fmt.Sprint(r.data(t)) != "[map[id:30 name:thirty qty:20 secret:s3]]" {
			t.Errorf("return=rows of a key change: %s", r.body)
		}
		// Matching nothing answers no rows.
		r = g.do("PATCH", path+"?return=rows&id=eq.99", g.admin, map[string]any{"qty": 1})
		if expect(t, r, 200); fmt.Sprint(r.json(t)["rows_affected"]) != "0" || len(r.data(t)) != 0 {
			t.Errorf("return=rows matching nothing: %s", r.body)
		}
		if got := rowsOf(t, path); got != "[map[id:1 name:one qty:1 secret:s1] map[id:2 name:two qty:20 secret:s2] map[id:30 name:thirty qty:20 secret:s3]]" {
			t.Errorf("rows after the updates: %s", got)
		}

		// No primary key: refused, nothing changed.
		npath := auto + "/ma/" + name + "/nokey"
		expect(t, g.do("POST", npath, g.admin, []map[string]any{{"name": "a", "qty": 1}}), 201)
		unsupported(t, g.do("PATCH", npath+"?return=rows&name=eq.a", lim, map[string]any{"qty": 5}), "return=rows without a primary key")
		r = g.do("GET", npath+"?ps=10&pg=0", g.admin, nil)
		if expect(t, r, 200); fmt.Sprint(r.data(t)) != "[map[name:a qty:1]]" {
			t.Errorf("a refused return=rows changed the table: %s", r.body)
		}
		// Without return=rows the same update works.
		expect(t, g.do("PATCH", npath+"?name=eq.a", lim, map[string]any{"qty": 5}), 200)
	})

	t.Run("ch planned count from system.parts", func(t *testing.T) {
		path := auto + "/ch/" + name + "/item"
		g.waitFor("/ch/" + name + "/item?ps=1&pg=0")
		expect(t, g.do("POST", path, g.admin, seed), 201)
		totalOf := func(token, query string) string {
			t.Helper()
			r := g.do("GET", path+"?ps=1&pg=0"+query, token, nil)
			expect(t, r, 200)
			return fmt.Sprint(r.json(t)["page"].(map[string]any)["total"]) + " " + r.header.Get("Content-Range")
		}
		total := func(mode string) string { return totalOf(lim, "&qty=gt.1&count="+mode) }
		if got := totalOf(lim, "&count=planned"); got != "3 0-0/3" {
			t.Errorf("count=planned: %s, want the table's 3 rows from system.parts", got)
		}
		// system.parts knows nothing of a filter: a filtered read is
		// counted exactly, and so is a scoped caller's, whose scope is a
		// filter — the table's total would tell it of rows it may not see.
		if got := total("planned"); got != "2 0-0/2" {
			t.Errorf("count=planned with a filter: %s, want it counted exactly", got)
		}
		if got := totalOf(few, "&count=planned"); got != "2 0-0/2" {
			t.Errorf("a scoped caller's count=planned: %s, want the 2 rows of its scope, not the table's 3", got)
		}
		if got := total("exact"); got != "2 0-0/2" {
			t.Errorf("count=exact: %s", got)
		}
		if got := total("estimated"); got != "2 0-0/2" {
			t.Errorf("count=estimated (exact below the threshold): %s", got)
		}
		// A hidden column cannot be counted by.
		r := g.do("GET", path+"?ps=1&pg=0&secret=eq.s1&count=planned", lim, nil)
		if expect(t, r, 400); !strings.Contains(r.errorMessage(t), `unknown column "secret"`) {
			t.Errorf("count by a hidden column: %s", r.body)
		}
	})

	for _, typ := range []string{"pg", "ma"} {
		t.Run(typ+" on_conflict not a unique key", func(t *testing.T) {
			path := auto + "/" + typ + "/" + name + "/item"
			g.waitFor("/" + typ + "/" + name + "/item?ps=1&pg=0")
			before := rowsOf(t, path)
			if before == "[]" {
				expect(t, g.do("POST", path, g.admin, seed), 201)
				before = rowsOf(t, path)
			}
			r := g.do("POST", path+"?on_conflict=name", g.admin, map[string]any{"id": 1, "name": "one", "qty": 100})
			expect(t, r, 400)
			if msg := r.errorMessage(t); !strings.Contains(msg, "unique") {
				t.Errorf("on_conflict=name: %s", r.body)
			}
			if got := rowsOf(t, path); got != before {
				t.Errorf("a refused upsert wrote: %s, was %s", got, before)
			}
		})
	}
}

// TestRESTScopedUpsertMariaDB attacks a row-scoped writer's merge upsert on
// MariaDB (ON DUPLICATE KEY UPDATE with every assignment guarded by the
// scope) over real HTTP: a key that exists outside the scope is left as it
// was (the admin reads it back unchanged) and neither counted nor shown; a
// key inside the scope is merged; in one batch only the row inside the
// scope is affected; a row the scope does not hold is never created. A
// caller whose roles' scopes (ORed) tie two merged columns is refused (400
// UNSUPPORTED, nothing written): MariaDB's left-to-right assignments could
// leave such a merge half done.
func TestRESTScopedUpsertMariaDB(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	name := g.dialectDBs("sup", map[string][]string{
		"ma": {`CREATE TABLE {db}.item (id bigint PRIMARY KEY, dept varchar(10) NOT NULL, name varchar(20), qty int, secret varchar(20))`},
	})
	all := []store.Template{{Name: "all", Rules: []store.Rule{{Object: "*/*/item", Actions: []string{"create", "read", "update", "delete"}}}}}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, store.Policy{
		Templates: all,
		Bindings:  []store.Binding{{Role: "dept-a", Templates: []string{"all"}}, {Role: "a", Templates: []string{"all"}}, {Role: "x", Templates: []string{"all"}}},
		Scopes: []store.Scope{
			{Role: "dept-a", Object: "*/*/item", Filter: "dept=eq.a&qty=lt.100"},
			{Role: "a", Object: "*/*/item", Filter: "dept=eq.a"},
			{Role: "x", Object: "*/*/item", Filter: "name=eq.x"},
		},
	}); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	for _, id := range []store.Identity{{Name: "ada", Roles: []string{"dept-a"}}, {Name: "orla", Roles: []string{"a", "x"}}} {
		id.ProjectID, id.SpaceID, id.Kind, id.KeyType, id.Enabled = g.proj.ID, space.ID, "user", "crud", true
		if _, err := g.st.CreateIdentity(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	ada, orla := g.mint("ada", auth.MintOptions{}), g.mint("orla", auth.MintOptions{})
	path := auto + "/ma/" + name + "/item"
	g.waitFor("/ma/" + name + "/item?ps=1&pg=0")
	expect(t, g.do("POST", path, g.admin, []map[string]any{
		{"id": 1, "dept": "a", "name": "one", "qty": 1, "secret": "s1"},
		{"id": 2, "dept": "a", "name": "two", "qty": 2, "secret": "s2"},
		{"id": 3, "dept": "b", "name": "three", "qty": 3, "secret": "s3"},
		{"id": 4, "dept": "a", "name": "four", "qty": 400, "secret": "s4"},
	}), 201)
	row := func(t *testing.T, id int) string {
		t.Helper()
		r := g.do("GET", fmt.Sprintf("%s?ps=10&pg=0&id=eq.%d", path, id), g.admin, nil)
		expect(t, r, 200)
		return fmt.Sprint(r.data(t))
	}
	affected := func(t *testing.T, r reply) string {
		t.Helper()
		expect(t, r, 201)
		return fmt.Sprint(r.json(t)["rows_affected"])
	}

	t.Run("outside the scope: unchanged, not shown", func(t *testing.T) {
		for _, id := range []int{3, 4} { // dept b; dept a but qty 400
			r := g.do("POST", path+"?on_conflict=id", ada, map[string]any{"id": id, "dept": "a", "name": "stolen", "qty": 7, "secret": "mine"})
			if n := affected(t, r); n != "0" || strings.Contains(string(r.body), "s3") || strings.Contains(string(r.body), "s4") {
				t.Errorf("upsert of id %d outside the scope: %s", id, r.body)
			}
		}
		if got := row(t, 3); got != "[map[dept:b id:3 name:three qty:3 secret:s3]]" {
			t.Errorf("row 3 outside the scope changed: %s", got)
		}
		if got := row(t, 4); got != "[map[dept:a id:4 name:four qty:400 secret:s4]]" {
			t.Errorf("row 4 outside the scope changed: %s", got)
		}
	})
	t.Run("inside the scope: merged", func(t *testing.T) {
		r := g.do("POST", path+"?on_conflict=id", ada, map[string]any{"id": 2, "dept": "a", "name": "deux", "qty": 22, "secret": "t2"})
		if n := affected(t, r); n != "1" || fmt.Sprint(r.data(t)) != "[map[dept:a id:2 name:deux qty:22 secret:t2]]" {
			t.Errorf("merge inside the scope: %s", r.body)
		}
		if got := row(t, 2); got != "[map[dept:a id:2 name:deux qty:22 secret:t2]]" {
			t.Errorf("row 2 after the merge: %s", got)
		}
	})
	t.Run("a batch across the scope", func(t *testing.T) {
		r := g.do("POST", path+"?on_conflict=id", ada, []map[string]any{
			{"id": 1, "dept": "a", "name": "uno", "qty": 11, "secret": "u1"},
			{"id": 3, "dept": "a", "name": "stolen", "qty": 33, "secret": "u3"},
			{"id": 5, "dept": "a", "name": "five", "qty": 5, "secret": "u5"},
		})
		if n := affected(t, r); n != "2" || strings.Contains(string(r.body), "s3") || strings.Contains(string(r.body), "stolen") {
			t.Errorf("batch: %s", r.body)
		}
		if got := row(t, 1) + row(t, 3) + row(t, 5); got != "[map[dept:a id:1 name:uno qty:11 secret:u1]]"+
			"[map[dept:b id:3 name:three qty:3 secret:s3]][map[dept:a id:5 name:five qty:5 secret:u5]]" {
			t.Errorf("rows after the batch: %s", got)
		}
	})
	t.Run("ignore: a kept row outside the scope is not shown", func(t *testing.T) {
		// MariaDB answers the rows an ignoring upsert kept as well as the
		// ones it wrote; row 3 (dept b) is one the writer may not read.
		r := g.do("POST", path+"?on_conflict=id&resolution=ignore", ada, []map[string]any{
			{"id": 3, "dept": "a", "name": "stolen", "qty": 1},
			{"id": 8, "dept": "a", "name": "eight", "qty": 8},
		})
		expect(t, r, 201)
		if strings.Contains(string(r.body), "three") || strings.Contains(string(r.body), "s3") {
			t.Errorf("an ignoring upsert showed a row outside the scope: %s", r.body)
		}
		if got := row(t, 3); got != "[map[dept:b id:3 name:three qty:3 secret:s3]]" {
			t.Errorf("row 3 changed by an ignoring upsert: %s", got)
		}
		if got := row(t, 8); got != "[map[dept:a id:8 name:eight qty:8 secret:<nil>]]" {
			t.Errorf("row 8 not written by an ignoring upsert: %s", got)
		}
	})
	t.Run("a row outside the scope is not created", func(t *testing.T) {
		expect(t, g.do("POST", path+"?on_conflict=id", ada, map[string]any{"id": 6, "dept": "b", "name": "out"}), 403)
		if got := row(t, 6); got != "[]" {
			t.Errorf("created outside the scope: %s", got)
		}
	})
	t.Run("an OR across merged columns is refused", func(t *testing.T) {
		before := row(t, 1)
		r := g.do("POST", path+"?on_conflict=id", orla, map[string]any{"id": 1, "dept": "b", "name": "x"})
		if expect(t, r, 400); !strings.Contains(string(r.body), "UNSUPPORTED") {
			t.Errorf("merge under an OR scope: %s", r.body)
		}
		if got := row(t, 1); got != before {
			t.Errorf("a refused merge wrote: %s, was %s", got, before)
		}
	})
}
