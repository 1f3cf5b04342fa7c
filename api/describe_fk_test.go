package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// TestDescribeForeignKeysDialects: on PostgreSQL and MariaDB, a
// single-column foreign key is described on its column over HTTP, but only
// when the caller may see the table and the column it references: a token
// limited to employees (table-limited) sees neither key, one that reads
// departments' code and name but not its id (column-limited) sees the key
// to code and not the key to id, and the referenced table's hidden column
// is absent from its description too. A composite key is not described.
func TestDescribeForeignKeysDialects(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	ddl := func(engineClause string) []string {
		return []string{
			`CREATE TABLE {db}.departments (id int PRIMARY KEY, code varchar(10) NOT NULL UNIQUE, name varchar(50), a int, b int, UNIQUE (a, b))` + engineClause,
			`CREATE TABLE {db}.employees (id int PRIMARY KEY, department_id int, dept_code varchar(10), a int, b int,
				FOREIGN KEY (department_id) REFERENCES {db}.departments (id),
				FOREIGN KEY (dept_code) REFERENCES {db}.departments (code),
				FOREIGN KEY (a, b) REFERENCES {db}.departments (a, b))` + engineClause,
		}
	}
	name := g.dialectDBs("dfk", map[string][]string{"pg": ddl(""), "ma": ddl(" ENGINE=InnoDB")})
	var templates []store.Template
	roles := map[string][]string{}
	for _, typ := range []string{"pg", "ma"} {
		emp, dept := typ+"/"+name+"/employees", typ+"/"+name+"/departments"
		templates = append(templates,
			store.Template{Name: typ + "-emp", Rules: []store.Rule{{Object: emp, Actions: []string{"read"}}}},
			store.Template{Name: typ + "-dept-cols", Rules: []store.Rule{{Object: dept, Actions: []string{"read"}, Columns: []string{"code", "name"}}}},
			store.Template{Name: typ + "-dept", Rules: []store.Rule{{Object: dept, Actions: []string{"read"}}}},
		)
		roles["table-limited"] = append(roles["table-limited"], typ+"-emp")
		roles["column-limited"] = append(roles["column-limited"], typ+"-emp", typ+"-dept-cols")
		roles["both"] = append(roles["both"], typ+"-emp", typ+"-dept")
	}
	pol := store.Policy{Templates: templates}
	for role, ts := range roles {
		pol.Bindings = append(pol.Bindings, store.Binding{Role: role, Templates: ts})
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	tokens := map[string]string{"admin": g.admin}
	for role := range roles {
		if _, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: space.ID, Name: role, Kind: "user", Roles: []string{role}, KeyType: "crud", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		tokens[role] = g.mint(role, auth.MintOptions{})
	}
	// describe answers a table's columns, each with the column its foreign
	// key references: "id", "department_id->departments.id", …
	describe := func(tok, path string) (string, []byte) {
		t.Helper()
		r := g.do("GET", path, tok, nil)
		expect(t, r, 200)
		var d struct {
			Columns []struct {
				Name       string
				References *struct{ Table, Column string }
			}
		}
		if err := json.Unmarshal(r.body, &d); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range d.Columns {
			s := c.Name
			if c.References != nil {
				s += "->" + c.References.Table + "." + c.References.Column
			}
			out = append(out, s)
		}
		return strings.Join(out, " "), r.body
	}
	want := map[string]string{
		"admin":          "id department_id->departments.id dept_code->departments.code a b",
		"both":           "id department_id->departments.id dept_code->departments.code a b",
		"column-limited": "id department_id dept_code->departments.code a b",
		"table-limited":  "id department_id dept_code a b",
	}
	for _, typ := range []string{"pg", "ma"} {
		base := auto + "/" + typ + "/" + name
		for who, tok := range tokens {
			t.Run(typ+"/"+who, func(t *testing.T) {
				waitStatus(t, g, base+"/employees?ps=1&pg=0", tok, 200)
				if got, body := describe(tok, base+"/employees/_describe"); got != want[who] {
					t.Errorf("employees: %s, want %s (%s)", got, want[who], body)
				}
				r := g.do("GET", base+"/departments/_describe", tok, nil)
				switch who {
				case "table-limited":
					missing := g.do("GET", base+"/nosuch/_describe", tok, nil)
					if expect(t, r, 404); !sameAnswer(r, missing) {
						t.Errorf("hidden departments: %s, want the missing table's %s", r.body, missing.body)
					}
				case "column-limited":
					if got, _ := describe(tok, base+"/departments/_describe"); got != "code name" {
						t.Errorf("departments: %s", got)
					}
				default:
					expect(t, r, 200)
				}
			})
		}
	}
}
