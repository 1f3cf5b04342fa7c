package api_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

const ledgerSchema = `table: ledger
fields:
  - name: ref
    type: string
    required: true
  - name: dept_code
    type: string
  - name: amount
    type: number
`

// TestScopedWritesDecidedByDatabase attacks row scopes on writes over HTTP,
// on every dialect: a writer scoped to dept_code=eq.6 (a text column) sends
// values that only a lenient comparison takes for 6, and a writer scoped to
// amount=lt.1000 (numeric(6,2)) sends 999.999, which the column rounds to
// 1000.00. Whatever each database does with those values, what it stores
// must be inside the scope: after every attempt, each writer reads back (with
// its scope applied by the database) exactly the rows the admin sees.
func TestScopedWritesDecidedByDatabase(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	name := g.dialectDBs("sw", map[string][]string{
		"pg": {`CREATE TABLE {db}.ledger (id serial PRIMARY KEY, ref text NOT NULL, dept_code text, amount numeric(6,2))`},
		"ma": {`CREATE TABLE {db}.ledger (id int AUTO_INCREMENT PRIMARY KEY, ref varchar(40) NOT NULL, dept_code varchar(20) NULL, amount decimal(6,2) NULL)`},
		"ch": {`CREATE TABLE {db}.ledger (id Int64, ref String, dept_code Nullable(String), amount Nullable(Decimal(6,2))) ENGINE = MergeTree ORDER BY id`},
	})
	if err := mi.CreateTable(g.dir+"/mini-app/app", "ledger", []byte(ledgerSchema)); err != nil {
		t.Fatal(err)
	}

	pol := store.Policy{
		Templates: []store.Template{{Name: "ledger", Rules: []store.Rule{
			{Object: "*/*/ledger", Actions: []string{"create", "read", "update", "delete"}},
		}}},
		Bindings: []store.Binding{
			{Role: "dept-writer", Templates: []string{"ledger"}},
			{Role: "small-spender", Templates: []string{"ledger"}},
		},
		Scopes: []store.Scope{
			{Role: "dept-writer", Object: "*/*/ledger", Filter: "dept_code=eq.{claims.department_id}"},
			{Role: "small-spender", Object: "*/*/ledger", Filter: "amount=lt.1000"},
		},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	for _, id := range []store.Identity{
		{Name: "dana", Roles: []string{"dept-writer"}, Claims: map[string]any{"department_id": 6}},
		{Name: "sam", Roles: []string{"small-spender"}},
	} {
		id.ProjectID, id.SpaceID, id.Kind, id.KeyType, id.Enabled = g.proj.ID, space.ID, "user", "crud", true
		if _, err := g.st.CreateIdentity(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	dana, sam := g.mint("dana", auth.MintOptions{}), g.mint("sam", auth.MintOptions{})

	paths := map[string]string{"mi": auto + "/mi/app/ledger"}
	for _, typ := range []string{"pg", "ma", "ch"} {
		paths[typ] = auto + "/" + typ + "/" + name + "/ledger"
		g.waitFor("/" + typ + "/" + name + "/ledger?ps=1&pg=0")
	}
	g.waitFor("/mi/app/ledger?ps=1&pg=0")

	for _, typ := range []string{"pg", "ma", "ch", "mi"} {
		t.Run(typ, func(t *testing.T) {
			path := paths[typ]
			nextID := 0
			row := func(ref string, kv ...any) map[string]any {
				m := map[string]any{"ref": ref}
				if typ == "ch" { // no generated keys on ClickHouse
					nextID++
					m["id"] = nextID
				}
				for i := 0; i < len(kv); i += 2 {
					m[kv[i].(string)] = kv[i+1]
				}
				return m
			}
			// inScope: every row the admin sees with the writer's column
			// set is also read by the writer, whose scope the database applies.
			inScope := func(token, column string) {
				t.Helper()
				all := g.do("GET", path+"?ps=100&pg=0&"+column+"=is.notnull", g.admin, nil).data(t)
				mine := g.do("GET", path+"?ps=100&pg=0", token, nil).data(t)
				if len(all) != len(mine) {
					t.Fatalf("stored rows outside the writer's scope: admin reads %v, the writer %v", all, mine)
				}
			}

			// dept_code is text: "6" is in the scope, its numeric look-alikes are not.
			expect(t, g.do("POST", path, dana, row("a", "dept_code", "6")), 201)
			for _, v := range []string{"06", "6.0", "+6", "6e0", " 6", "6 "} {
				r := g.do("POST", path, dana, row("bad "+v, "dept_code", v))
				if r.status != 403 && r.status != 201 {
					t.Fatalf("insert dept_code %q: %d %s", v, r.status, r.body)
				}
				inScope(dana, "dept_code")
			}
			for _, v := range []string{"06", "6.0", "+6", "6e0"} {
				expect(t, g.do("POST", path, dana, row("bad "+v, "dept_code", v)), 403)
			}
			// A batch with one row outside writes nothing.
			expect(t, g.do("POST", path, dana, []any{row("c", "dept_code", "6"), row("d", "dept_code", "06")}), 403)
			inScope(dana, "dept_code")
			// An update may not move rows out of the scope.
			r := g.do("PUT", path+"?ref=eq.a", dana, map[string]any{"dept_code": "06"})
			if r.status != 403 && !(r.status == 200 && fmt.Sprint(r.json(t)["rows_affected"]) == "0") {
				t.Fatalf("update dept_code 06: %d %s", r.status, r.body)
			}
			inScope(dana, "dept_code")

			// amount is numeric(6,2): what the column stores decides.
			expect(t, g.do("POST", path, sam, row("e", "amount", 999.99)), 201)
			for _, v := range []any{"999.999", 999.999, 999.995, "999.9951"} {
				r := g.do("POST", path, sam, row(fmt.Sprint("amount ", v), "amount", v))
				// ClickHouse refuses a decimal with too many digits (400).
				if r.status != 403 && r.status != 201 && r.status != 400 {
					t.Fatalf("insert amount %v: %d %s", v, r.status, r.body)
				}
				inScope(sam, "amount")
			}
			r = g.do("PUT", path+"?ref=eq.e", sam, map[string]any{"amount": "999.999"})
			if r.status != 403 && r.status != 200 && r.status != 400 {
				t.Fatalf("update amount: %d %s", r.status, r.body)
			}
			inScope(sam, "amount")
			if typ == "pg" || typ == "ma" {
				// These round to 1000.00: refused, not stored.
				expect(t, g.do("POST", path, sam, row("f", "amount", "999.999")), 403)
				expect(t, g.do("PUT", path+"?ref=eq.e", sam, map[string]any{"amount": 999.999}), 403)
			}
			expect(t, g.do("POST", path, sam, row("g", "amount", 1000)), 403)
			inScope(sam, "amount")
		})
	}
}
