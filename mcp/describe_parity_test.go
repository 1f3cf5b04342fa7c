package mcp_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	_ "github.com/littlebitlabs/minimal/dialects/ma"
	"github.com/littlebitlabs/minimal/store"
)

// describeDB makes a PostgreSQL schema or a MariaDB database holding
// departments, employees (two single-column foreign keys into departments)
// and secrets (a foreign key into employees), registers it and drops it at
// the end. It answers the schema's name.
func describeDB(t *testing.T, g *gateway, typ string) string {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("minimal_dp_%d", rand.Uint32())
	ddl := []string{
		`CREATE TABLE {db}.departments (id int PRIMARY KEY, code varchar(10) NOT NULL UNIQUE, name varchar(50))`,
		`CREATE TABLE {db}.employees (id int PRIMARY KEY, full_name varchar(50) NOT NULL, salary int,
			department_id int REFERENCES {db}.departments (id), dept_code varchar(10) REFERENCES {db}.departments (code))`,
		`CREATE TABLE {db}.secrets (id int PRIMARY KEY, employee_id int REFERENCES {db}.employees (id))`,
	}
	var dsn string
	switch typ {
	case "pg":
		dsn = dialecttest.DSN(t, "MINIMAL_TEST_PG_DSN")
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
			c.Close(context.Background())
		})
		for _, q := range append([]string{"CREATE SCHEMA {db}"}, ddl...) {
			if _, err := c.Exec(ctx, strings.ReplaceAll(q, "{db}", name)); err != nil {
				t.Fatal(err)
			}
		}
	case "ma":
		dsn = dialecttest.DSN(t, "MINIMAL_TEST_MA_DSN")
		c, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = c.Exec("DROP DATABASE IF EXISTS " + name); c.Close() })
		// MariaDB ignores a REFERENCES clause on a column: table constraints.
		ma := []string{
			"CREATE DATABASE {db}",
			ddl[0] + " ENGINE=InnoDB",
			`CREATE TABLE {db}.employees (id int PRIMARY KEY, full_name varchar(50) NOT NULL, salary int, department_id int, dept_code varchar(10),
				FOREIGN KEY (department_id) REFERENCES {db}.departments (id), FOREIGN KEY (dept_code) REFERENCES {db}.departments (code)) ENGINE=InnoDB`,
			`CREATE TABLE {db}.secrets (id int PRIMARY KEY, employee_id int, FOREIGN KEY (employee_id) REFERENCES {db}.employees (id)) ENGINE=InnoDB`,
		}
		for _, q := range ma {
			if _, err := c.Exec(strings.ReplaceAll(q, "{db}", name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: typ, Schema: name, DSN: dsn}); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestDescribeParity: the REST description (…/{table}/_describe) and the
// MCP tool meta_describe_table answer the same document — columns, keys,
// foreign keys, actions — for the same token, on PostgreSQL and MariaDB;
// a hidden table is the same NOT_FOUND as a missing one on both, and what
// a token may not see (a column, a table, the column a foreign key
// references) is absent from both.
func TestDescribeParity(t *testing.T) {
	for _, typ := range []string{"pg", "ma"} {
		t.Run(typ, func(t *testing.T) {
			g := newGateway(t, time.Hour)
			ctx := context.Background()
			schema := describeDB(t, g, typ)
			obj := func(table string) string { return typ + "/" + schema + "/" + table }
			pol := store.Policy{
				Templates: []store.Template{
					// Columns: departments without id, so department_id's key
					// is hidden and dept_code's shown; create on fewer columns.
					{Name: "cols", Rules: []store.Rule{
						{Object: obj("employees"), Actions: []string{"read"}, Columns: []string{"id", "full_name", "department_id", "dept_code"}},
						{Object: obj("employees"), Actions: []string{"create"}, Columns: []string{"full_name", "dept_code"}},
						{Object: obj("departments"), Actions: []string{"read"}, Columns: []string{"code", "name"}},
					}},
					// Tables: employees only, so neither key is shown.
					{Name: "tables", Rules: []store.Rule{{Object: obj("employees"), Actions: []string{"read", "update"}}}},
					{Name: "all", Rules: []store.Rule{{Object: typ + "/" + schema + "/*", Actions: []string{"read", "create", "update", "delete"}}}},
				},
				Bindings: []store.Binding{{Role: "cols", Templates: []string{"cols"}}, {Role: "tables", Templates: []string{"tables"}}, {Role: "all", Templates: []string{"all"}}},
				Scopes:   []store.Scope{{Role: "tables", Object: obj("employees"), Filter: "salary=lt.100"}},
			}
			if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
				t.Fatal(err)
			}
			tokens := map[string]string{"agent": g.agent}
			for _, role := range []string{"cols", "tables", "all"} {
				_, tokens[role] = g.identity(role, "mcp", []string{role}, nil, auth.MintOptions{})
			}
			_, tokens["all-read-only"] = g.identity("ro", "mcp", []string{"all"}, nil, auth.MintOptions{KeyType: "-r--"})
			_, tokens["none"] = g.identity("zed", "mcp", []string{}, nil, auth.MintOptions{})
			rest := "/minimal/api/rest/auto/v1/demo/demo/" + typ + "/" + schema + "/"
			deadline := time.Now().Add(5 * time.Second)
			for g.restDo("GET", rest+"employees/_describe", tokens["cols"], nil).status != 200 {
				if time.Now().After(deadline) {
					t.Fatal("database or policy never reached the engine")
				}
				time.Sleep(50 * time.Millisecond)
			}

			// What each token's employees description shows: columns,
			// foreign keys, actions (table and per column).
			want := map[string]string{
				"agent":         "actions=[read create update delete] scoped=[] pk=[id] id:[read create update delete] full_name:[read create update delete] salary:[read create update delete] department_id->departments.id:[read create update delete] dept_code->departments.code:[read create update delete]",
				"cols":          "actions=[read create] scoped=[] pk=[id] id:[read] full_name:[read create] department_id:[read] dept_code->departments.code:[read create]",
				"tables":        "actions=[read update] scoped=[read update] pk=[id] id:[read update] full_name:[read update] salary:[read update] department_id:[read update] dept_code:[read update]",
				"all-read-only": "actions=[read] scoped=[] pk=[id] id:[read] full_name:[read] salary:[read] department_id->departments.id:[read] dept_code->departments.code:[read]",
			}
			for who, tok := range tokens {
				sid := g.start(tok)
				for _, table := range []string{"employees", "departments", "secrets", "nosuch"} {
					r := g.restDo("GET", rest+table+"/_describe", tok, nil)
					m := g.tool(tok, sid, "meta_describe_table", map[string]any{"type": typ, "schema": schema, "table": table})
					if r.status == 200 {
						if m.isError || m.text != strings.TrimSuffix(string(r.raw), "\n") {
							t.Errorf("%s %s: REST and MCP differ:\nREST %s\nMCP  %s", who, table, r.raw, m.text)
						}
					} else {
						code, msg := m.refusal(t)
						if r.status != 404 || code != "NOT_FOUND" || msg != "table not found" || !strings.Contains(string(r.raw), `"table not found"`) {
							t.Errorf("%s %s: REST %d %s, MCP %s %s", who, table, r.status, r.raw, code, msg)
						}
					}
					if table == "employees" && want[who] != "" {
						if got := summary(t, m); got != want[who] {
							t.Errorf("%s employees:\n got %s\nwant %s", who, got, want[who])
						}
					}
					visible := r.status == 200
					wantVisible := table != "nosuch" && who != "none" && (who != "tables" || table == "employees") && (who != "cols" || table != "secrets")
					if visible != wantVisible {
						t.Errorf("%s %s: described %v, want %v", who, table, visible, wantVisible)
					}
				}
				if who == "cols" {
					d := g.tool(tok, sid, "meta_describe_table", map[string]any{"type": typ, "schema": schema, "table": "departments"}).ok(t).text
					for _, hidden := range []string{`"id"`, "employees"} {
						if strings.Contains(d, hidden) {
							t.Errorf("cols sees %s in departments: %s", hidden, d)
						}
					}
				}
			}
		})
	}
}

// summary is a description in one line: the table's actions, the scoped
// ones, the key, then each column with its foreign key and actions.
func summary(t *testing.T, r toolResult) string {
	t.Helper()
	d := r.ok(t).object(t)
	list := func(v any) string {
		var s []string
		for _, x := range v.([]any) {
			s = append(s, x.(string))
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	out := []string{"actions=" + list(d["actions"]), "scoped=" + list(d["row_scoped"]), "pk=" + list(d["primary_key"])}
	for _, c := range d["columns"].([]any) {
		c := c.(map[string]any)
		s := c["name"].(string)
		if ref, ok := c["references"].(map[string]any); ok {
			s += "->" + ref["table"].(string) + "." + ref["column"].(string)
		} else if c["references"] != nil {
			t.Fatalf("references %v", c["references"])
		}
		out = append(out, s+":"+list(c["actions"]))
	}
	return strings.Join(out, " ")
}
