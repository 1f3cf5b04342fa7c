package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// permFixture is a project with four PostgreSQL tables, two mini-app
// tables, seven roles and a policy with column lists, a deny rule, row
// scopes (one on a claim) and an append-only lock.
type permFixture struct {
	*gateway
	schema string
	tokens map[string]string
	ids    map[string]store.Identity
}

const tasksSchema = `table: tasks
fields:
  - name: title
    type: string
    required: true
  - name: owner
    type: string
`

func newPermFixture(t *testing.T) *permFixture {
	dsn := pgDSN(t)
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("permtest_%d_%d", os.Getpid(), mrand.Uint32())
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.Background())
	})
	_, err = conn.Exec(ctx, `CREATE SCHEMA `+schema+`; SET search_path TO `+schema+`;
CREATE TABLE employees (id serial PRIMARY KEY, full_name text NOT NULL, department_id int, salary numeric, owner text);
CREATE TABLE salaries (id serial PRIMARY KEY, employee_id int, amount numeric);
CREATE TABLE audit_log (id serial PRIMARY KEY, msg text);
CREATE TABLE departments (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO employees (full_name, department_id, salary, owner) VALUES
 ('Ada',7,100,'erin'),('Rafael',6,200,'bob'),('Raffaella',6,300,'alice'),('Grace',9,400,'erin'),('Linus',7,500,'frank');
INSERT INTO salaries (employee_id, amount) VALUES (1, 10), (2, 20);
INSERT INTO audit_log (msg) VALUES ('boot');
INSERT INTO departments VALUES (6,'HR'),(7,'Eng'),(9,'Sales');`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: "pg", Schema: schema, DSN: dsn}); err != nil {
		t.Fatal(err)
	}
	if err := mi.CreateTable(g.dir+"/mini-app/app", "tasks", []byte(tasksSchema)); err != nil {
		t.Fatal(err)
	}
	emp := "pg/" + schema + "/employees"
	pol := store.Policy{
		Templates: []store.Template{
			{Name: "hr-read", Rules: []store.Rule{
				{Object: emp, Actions: []string{"read"}, Columns: []string{"id", "full_name", "department_id"}},
				{Object: "pg/" + schema + "/*", Actions: []string{"read"}, Columns: []string{"id"}},
				{Object: "pg/" + schema + "/salaries", Actions: []string{"read", "update"}, Effect: store.EffectDeny},
			}},
			{Name: "hr-write", Rules: []store.Rule{{Object: emp, Actions: []string{"create", "read", "update", "delete"}}}},
			{Name: "dept-edit", Rules: []store.Rule{{Object: emp, Actions: []string{"create", "read", "update", "delete"}, Columns: []string{"id", "full_name", "department_id", "owner"}}}},
			{Name: "own-read", Rules: []store.Rule{{Object: emp, Actions: []string{"read"}, Columns: []string{"id", "full_name", "owner"}}}},
			{Name: "audit", Rules: []store.Rule{
				{Object: "pg/" + schema + "/audit_log", Actions: []string{"create", "read"}},
				{Object: "mi/app/notes", Actions: []string{"read"}},
			}},
			{Name: "tasks", Rules: []store.Rule{{Object: "mi/app/tasks", Actions: []string{"create", "read", "update", "delete"}}}},
		},
		Bindings: []store.Binding{
			{Role: "hr-analyst", Templates: []string{"hr-read"}},
			{Role: "hr-manager", Templates: []string{"hr-write"}},
			{Role: "dept-editor", Templates: []string{"dept-edit"}},
			{Role: "owner-reader", Templates: []string{"own-read"}},
			{Role: "auditor", Templates: []string{"audit"}},
			{Role: "tasker", Templates: []string{"tasks"}},
		},
		Scopes: []store.Scope{
			{Role: "hr-analyst", Object: emp, Filter: "department_id=eq.{claims.department_id}"},
			{Role: "dept-editor", Object: emp, Filter: "department_id=eq.{claims.department_id}"},
			{Role: "owner-reader", Object: emp, Filter: "owner=eq.{identity}"},
			{Role: "tasker", Object: "mi/app/tasks", Filter: "owner=eq.{identity}"},
		},
		Locks: []store.Lock{{Pattern: "pg/" + schema + "/audit_log", Mask: "cr--"}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	f := &permFixture{gateway: g, schema: schema, tokens: map[string]string{"admin": g.admin}, ids: map[string]store.Identity{}}
	for _, spec := range []struct {
		name   string
		roles  []string
		claims map[string]any
	}{
		{"alice", []string{"hr-analyst"}, map[string]any{"department_id": 6}},
		{"bob", []string{"hr-manager"}, nil},
		{"frank", []string{"dept-editor"}, map[string]any{"department_id": 7}},
		{"carol", []string{"auditor"}, nil},
		{"erin", []string{"hr-analyst", "owner-reader"}, map[string]any{"department_id": 9}},
		{"tom", []string{"tasker"}, nil},
		{"nodept", []string{"hr-analyst"}, nil},
		{"zed", []string{}, nil},
	} {
		id, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: space.ID, Name: spec.name, Kind: "user", Roles: spec.roles, KeyType: "crud", Claims: spec.claims, Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		f.ids[spec.name] = id
		f.tokens[spec.name] = g.mint(spec.name, auth.MintOptions{})
	}
	g.waitFor("/pg/" + schema + "/employees?ps=1&pg=0")
	return f
}

func (f *permFixture) path(table string) string {
	if table == "notes" || table == "tasks" {
		return auto + "/mi/app/" + table
	}
	return auto + "/pg/" + f.schema + "/" + table
}

const noUUID = "00000000-0000-4000-8000-000000000000"

func (f *permFixture) missingID(table string) string {
	if table == "notes" || table == "tasks" {
		return noUUID
	}
	return "-1"
}

// TestAuthorizationMatrix runs every identity × table × action through
// real HTTP and checks the status of each, and the rows of each read.
func TestAuthorizationMatrix(t *testing.T) {
	f := newPermFixture(t)
	tables := []string{"employees", "salaries", "audit_log", "departments", "notes", "tasks"}
	// Expected statuses for create, read, update, delete.
	all := "201 200 200 200"
	hidden := "404 404 404 404"
	readOnly := "403 200 403 403"
	locked := "201 200 403 403" // audit_log is append-only for everyone
	want := map[string]map[string]string{
		"admin":  {"employees": all, "salaries": all, "audit_log": locked, "departments": all, "notes": all, "tasks": all},
		"alice":  {"employees": readOnly, "salaries": hidden, "audit_log": readOnly, "departments": readOnly, "notes": hidden, "tasks": hidden},
		"erin":   {"employees": readOnly, "salaries": hidden, "audit_log": readOnly, "departments": readOnly, "notes": hidden, "tasks": hidden},
		"bob":    {"employees": all, "salaries": hidden, "audit_log": hidden, "departments": hidden, "notes": hidden, "tasks": hidden},
		"frank":  {"employees": all, "salaries": hidden, "audit_log": hidden, "departments": hidden, "notes": hidden, "tasks": hidden},
		"carol":  {"employees": hidden, "salaries": hidden, "audit_log": locked, "departments": hidden, "notes": readOnly, "tasks": hidden},
		"tom":    {"employees": hidden, "salaries": hidden, "audit_log": hidden, "departments": hidden, "notes": hidden, "tasks": all},
		"zed":    {"employees": hidden, "salaries": hidden, "audit_log": hidden, "departments": hidden, "notes": hidden, "tasks": hidden},
		"nodept": {"employees": "403 403 403 403", "salaries": hidden, "audit_log": readOnly, "departments": readOnly, "notes": hidden, "tasks": hidden},
	}
	// Rows each identity reads (ids for PostgreSQL tables, counts for mini-app).
	wantRows := map[string]map[string]string{
		"admin": {"employees": "[1 2 3 4 5]", "departments": "[6 7 9]", "notes": "3 rows"},
		"alice": {"employees": "[2 3]", "departments": "[6 7 9]", "audit_log": "[1]"},
		"erin":  {"employees": "[1 4]"},
		"bob":   {"employees": "[1 2 3 4 5]"},
		"frank": {"employees": "[1 5]"},
		"carol": {"audit_log": "[1]", "notes": "3 rows"},
		"tom":   {"tasks": "0 rows"},
	}
	createBody := func(who, table string, n int) any {
		switch table {
		case "employees":
			dept := 7
			if who == "alice" || who == "nodept" {
				dept = 6
			}
			if who == "erin" {
				dept = 9
			}
			return map[string]any{"full_name": "M " + who, "department_id": dept, "owner": who}
		case "salaries":
			return map[string]any{"employee_id": 1, "amount": 1}
		case "audit_log":
			return map[string]any{"msg": "by " + who}
		case "departments":
			return map[string]any{"id": 100 + n, "name": fmt.Sprintf("D%d", n)}
		case "notes":
			return map[string]any{"title": "by " + who}
		}
		return map[string]any{"title": "t", "owner": who}
	}
	updateBody := map[string]any{"employees": map[string]any{"full_name": "X"}, "salaries": map[string]any{"amount": 2},
		"audit_log": map[string]any{"msg": "x"}, "departments": map[string]any{"name": "x"}, "notes": map[string]any{"title": "x"}, "tasks": map[string]any{"title": "x"}}

	who := make([]string, 0, len(want))
	for w := range want {
		who = append(who, w)
	}
	sort.Strings(who)
	// Reads first (so the writes below do not change what is read).
	for _, w := range who {
		for _, tbl := range tables {
			r := f.do("GET", f.path(tbl)+"?ps=100&pg=0&oy=id.as", f.tokens[w], nil)
			exp := strings.Fields(want[w][tbl])[1]
			if fmt.Sprint(r.status) != exp {
				t.Errorf("%s read %s: %d, want %s: %s", w, tbl, r.status, exp, r.body)
				continue
			}
			if r.status == 200 {
				if wr, ok := wantRows[w][tbl]; ok {
					got := rowsSummary(t, r, tbl)
					if got != wr {
						t.Errorf("%s read %s: rows %s, want %s", w, tbl, got, wr)
					}
				}
			}
		}
	}
	n := 0
	for _, w := range who {
		for _, tbl := range tables {
			n++
			exp := strings.Fields(want[w][tbl])
			checks := []struct {
				action, method, url string
				body                any
				want                string
			}{
				{"create", "POST", f.path(tbl), createBody(w, tbl, n), exp[0]},
				{"update", "PUT", f.path(tbl) + "?id=eq." + f.missingID(tbl), updateBody[tbl], exp[2]},
				{"delete", "DELETE", f.path(tbl) + "?id=eq." + f.missingID(tbl), nil, exp[3]},
			}
			for _, c := range checks {
				r := f.do(c.method, c.url, f.tokens[w], c.body)
				if fmt.Sprint(r.status) != c.want {
					t.Errorf("%s %s %s: %d, want %s: %s", w, c.action, tbl, r.status, c.want, r.body)
					continue
				}
				switch r.status {
				case 403:
					msg := r.errorMessage(t)
					roles := "[" + strings.Join(f.ids[w].Roles, ", ") + "]"
					if w == "admin" {
						roles = "[admin]"
					}
					if !strings.HasSuffix(msg, "got "+roles) {
						t.Errorf("%s %s %s: 403 message %q does not name the roles %s", w, c.action, tbl, msg, roles)
					}
					if tbl == "audit_log" && (c.action == "update" || c.action == "delete") && !strings.Contains(msg, "locked") {
						t.Errorf("lock refusal does not say locked: %q", msg)
					}
				case 404:
					// Identical to a table that does not exist.
					ghost := f.do(c.method, strings.Replace(c.url, "/"+tbl, "/no_such_table", 1), f.tokens[w], c.body)
					if ghost.status != 404 || ghost.errorMessage(t) != r.errorMessage(t) {
						t.Errorf("%s %s %s: hidden 404 differs from missing table: %s vs %s", w, c.action, tbl, r.body, ghost.body)
					}
				}
			}
		}
	}
}

func rowsSummary(t *testing.T, r reply, table string) string {
	rows := r.data(t)
	if table == "notes" || table == "tasks" {
		return fmt.Sprintf("%d rows", len(rows))
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = fmt.Sprint(row["id"])
	}
	return "[" + strings.Join(ids, " ") + "]"
}

func TestRowScopes(t *testing.T) {
	f := newPermFixture(t)
	emp := f.path("employees")
	count := func() int {
		return len(f.do("GET", emp+"?ps=100&pg=0", f.admin, nil).data(t))
	}
	frank := f.tokens["frank"]

	// Insert inside the scope works; outside is refused and writes nothing.
	expect(t, f.do("POST", emp, frank, map[string]any{"full_name": "In", "department_id": 7}), 201)
	before := count()
	expect(t, f.do("POST", emp, frank, map[string]any{"full_name": "Out", "department_id": 6}), 403)
	expect(t, f.do("POST", emp, frank, []any{map[string]any{"full_name": "In2", "department_id": 7}, map[string]any{"full_name": "Out2", "department_id": 9}}), 403)
	expect(t, f.do("POST", emp, frank, map[string]any{"full_name": "NoDept"}), 403)
	if after := count(); after != before {
		t.Fatalf("refused insert wrote rows: %d -> %d", before, after)
	}
	// An update trying to move a row out of the scope is refused.
	r := f.do("PUT", emp+"?id=eq.5", frank, map[string]any{"department_id": 6})
	expect(t, r, 403)
	if row := f.do("GET", emp+"?ps=1&pg=0&id=eq.5", f.admin, nil).data(t); fmt.Sprint(row[0]["department_id"]) != "7" {
		t.Fatalf("row moved: %v", row)
	}
	// An update of another department's row touches nothing.
	r = f.do("PUT", emp+"?id=eq.2", frank, map[string]any{"full_name": "hacked"})
	expect(t, r, 200)
	if fmt.Sprint(r.json(t)["rows_affected"]) != "0" {
		t.Fatalf("out-of-scope update: %s", r.body)
	}
	r = f.do("PUT", emp+"?id=in.1,2,5", frank, map[string]any{"full_name": "Eng"})
	if fmt.Sprint(r.json(t)["rows_affected"]) != "2" {
		t.Fatalf("scoped update: %s", r.body)
	}
	// Reads and deletes are scoped too; all=true deletes only the scope.
	r = f.do("DELETE", emp+"?all=true", frank, nil)
	expect(t, r, 200)
	if fmt.Sprint(r.json(t)["rows_affected"]) != "3" {
		t.Fatalf("scoped delete: %s", r.body)
	}
	if rows := f.do("GET", emp+"?ps=100&pg=0", frank, nil).data(t); len(rows) != 0 {
		t.Fatalf("frank still reads %v", rows)
	}
	if got := rowsSummary(t, f.do("GET", emp+"?ps=100&pg=0&oy=id.as", f.admin, nil), "employees"); got != "[2 3 4]" {
		t.Fatalf("rows left: %s", got)
	}
	// OR of two roles' scopes: erin reads her department's rows and the ones she owns.
	if got := rowsSummary(t, f.do("GET", emp+"?ps=100&pg=0&oy=id.as", f.tokens["erin"], nil), "employees"); got != "[4]" {
		t.Fatalf("erin: %s", got)
	}
	// A scope variable the caller does not carry fails closed.
	expect(t, f.do("GET", emp+"?ps=10&pg=0", f.tokens["nodept"], nil), 403)
	// mini-app row scope: tom only sees and writes his own tasks.
	tasks := f.path("tasks")
	expect(t, f.do("POST", tasks, f.tokens["tom"], map[string]any{"title": "mine", "owner": "tom"}), 201)
	expect(t, f.do("POST", tasks, f.tokens["tom"], map[string]any{"title": "theirs", "owner": "ann"}), 403)
	expect(t, f.do("POST", tasks, f.admin, map[string]any{"title": "admin's", "owner": "ann"}), 201)
	if rows := f.do("GET", tasks+"?ps=10&pg=0", f.tokens["tom"], nil).data(t); len(rows) != 1 || rows[0]["owner"] != "tom" {
		t.Fatalf("tom's tasks: %v", rows)
	}
}

func TestColumnLimits(t *testing.T) {
	f := newPermFixture(t)
	emp := f.path("employees") + "?ps=10&pg=0"
	alice := f.tokens["alice"]
	// * expands to the granted columns.
	rows := f.do("GET", emp, alice, nil).data(t)
	for _, row := range rows {
		keys := make([]string, 0, len(row))
		for k := range row {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if fmt.Sprint(keys) != "[department_id full_name id]" {
			t.Fatalf("alice sees %v", keys)
		}
	}
	// A hidden column answers exactly like a column that does not exist.
	for _, q := range []string{"&fc=id,%s", "&%s=gt.1", "&oy=%s.ds", "&%s=is.null"} {
		hidden := f.do("GET", emp+fmt.Sprintf(q, "salary"), alice, nil)
		missing := f.do("GET", emp+fmt.Sprintf(q, "nosuchcol"), alice, nil)
		if hidden.status != 400 || missing.status != 400 ||
			hidden.errorMessage(t) != strings.ReplaceAll(missing.errorMessage(t), "nosuchcol", "salary") {
			t.Errorf("%s: hidden %d %s vs missing %d %s", q, hidden.status, hidden.body, missing.status, missing.body)
		}
	}
	frank := f.tokens["frank"]
	path := f.path("employees")
	for _, c := range []struct {
		method, url string
		body        any
	}{
		{"POST", path, map[string]any{"full_name": "x", "department_id": 7, "%s": 5}},
		{"PUT", path + "?id=eq.5", map[string]any{"%s": 5}},
		{"PUT", path + "?id=eq.5&set=%s.5", nil},
		{"DELETE", path + "?%s=gt.0", nil},
	} {
		body := func(col string) any {
			if c.body == nil {
				return nil
			}
			m := map[string]any{}
			for k, v := range c.body.(map[string]any) {
				m[strings.ReplaceAll(k, "%s", col)] = v
			}
			return m
		}
		hidden := f.do(c.method, strings.ReplaceAll(c.url, "%s", "salary"), frank, body("salary"))
		missing := f.do(c.method, strings.ReplaceAll(c.url, "%s", "nosuchcol"), frank, body("nosuchcol"))
		if hidden.status != 400 || hidden.errorMessage(t) != strings.ReplaceAll(missing.errorMessage(t), "nosuchcol", "salary") {
			t.Errorf("%s %s: hidden %s vs missing %s", c.method, c.url, hidden.body, missing.body)
		}
	}
	// An insert answers only with columns the caller may read.
	r := f.do("POST", path, frank, map[string]any{"full_name": "Vis", "department_id": 7})
	expect(t, r, 201)
	if row := r.data(t)[0]; row["salary"] != nil || len(row) != 4 {
		t.Fatalf("insert returned %v", row)
	}
	if _, has := r.data(t)[0]["salary"]; has {
		t.Fatal("hidden column returned by insert")
	}
}

func TestTenancyAndTokenRules(t *testing.T) {
	f := newPermFixture(t)
	ctx := context.Background()
	emp := f.path("employees") + "?ps=10&pg=0"

	// A token of another project reaching this project's path gets 400.
	olgaTok := f.otherProjectAdmin()
	r := f.do("GET", emp, olgaTok, nil)
	expect(t, r, 400)
	if !strings.Contains(r.errorMessage(t), "do not match the token") {
		t.Fatalf("cross-tenant message: %s", r.body)
	}
	// Its own path does not reach this project's databases.
	expect(t, f.do("GET", "/minimal/api/rest/auto/v1/demo/other/pg/"+f.schema+"/employees?ps=1&pg=0", olgaTok, nil), 404)

	// A token whose space (or project) claim is not its identity's is refused,
	// even when properly signed.
	var c auth.Claims
	if _, _, err := jwt.NewParser().ParseUnverified(f.tokens["alice"], &c); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*auth.Claims){
		"space":    func(c *auth.Claims) { c.Space = "side" },
		"project":  func(c *auth.Claims) { c.Project = "other" },
		"identity": func(c *auth.Claims) { c.Identity = "bob" },
	} {
		cc := c
		mut(&cc)
		tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, cc).SignedString(f.key)
		if r := f.do("GET", emp, tok, nil); r.status != 401 {
			t.Errorf("%s claim swapped: %d %s", name, r.status, r.body)
		}
	}

	// Token attacks: EdDSA confusion, future nbf, altered roles.
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	ed, _ := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c).SignedString(priv)
	cn := c
	cn.NotBefore = jwt.NewNumericDate(time.Now().Add(time.Hour))
	future, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, cn).SignedString(f.key)
	parts := strings.Split(f.tokens["alice"], ".")
	altered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(bytes.ReplaceAll(mustDecode(t, parts[1]), []byte("hr-analyst"), []byte("admin"))) + "." + parts[2]
	for name, tok := range map[string]string{"EdDSA": ed, "future nbf": future, "altered roles": altered} {
		if r := f.do("GET", emp, tok, nil); r.status != 401 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}

	// Roles in a token the identity no longer holds stop counting within 2 s;
	// a disabled identity is refused within 2 s.
	if err := f.st.SetIdentityRoles(ctx, f.ids["bob"].ID, []string{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f.gateway, emp, f.tokens["bob"], 404)
	if err := f.st.SetIdentityEnabled(ctx, f.ids["frank"].ID, false); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f.gateway, emp, f.tokens["frank"], 401)
	// A policy change reaches the running engine within 2 s: unbind hr-analyst.
	pol, _ := f.st.Policy(ctx, f.proj.ID)
	pol.Bindings = slices.DeleteFunc(pol.Bindings, func(b store.Binding) bool { return b.Role == "hr-analyst" })
	if err := f.st.ReplacePolicy(ctx, f.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f.gateway, emp, f.tokens["alice"], 404)
}

func waitStatus(t *testing.T, g *gateway, path, tok string, status int) {
	t.Helper()
	start := time.Now()
	for {
		r := g.do("GET", path, tok, nil)
		if r.status == status {
			t.Logf("status %d after %v", status, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("still %d after 2 s, want %d: %s", r.status, status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestNarrowerTokens(t *testing.T) {
	f := newPermFixture(t)
	ctx := context.Background()
	// erin holds two roles; she may mint a token with one of them, read-only.
	r := f.do("POST", "/minimal/api/auth/v1/tokens", f.tokens["erin"], map[string]any{"roles": []string{"owner-reader"}, "key_type": "-r--", "ttl": "1h"})
	expect(t, r, 201)
	tok := r.json(t)["token"].(string)
	if got := rowsSummary(t, f.do("GET", f.path("employees")+"?ps=10&pg=0&oy=id.as", tok, nil), "employees"); got != "[1 4]" {
		t.Fatalf("narrow token reads %s", got)
	}
	for _, body := range []map[string]any{
		{"roles": []string{"admin"}},
		{"roles": []string{"owner-reader", "hr-manager"}},
		{"ttl": "10000h"},
		{"unknown": 1},
		{"key_type": "rw"},
	} {
		r := f.do("POST", "/minimal/api/auth/v1/tokens", f.tokens["erin"], body)
		if r.status != 403 && r.status != 400 {
			t.Errorf("%v: %d %s", body, r.status, r.body)
		}
	}
	// From a read-only token, a crud token cannot be had.
	r = f.do("POST", "/minimal/api/auth/v1/tokens", tok, map[string]any{"key_type": "crud"})
	expect(t, r, 403)
	// Unauthenticated minting is refused.
	expect(t, f.do("POST", "/minimal/api/auth/v1/tokens", "", map[string]any{}), 401)
	_ = ctx
}

func mustDecode(t *testing.T, seg string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExplain(t *testing.T) {
	f := newPermFixture(t)
	ctx := context.Background()
	principal := func(name string) *auth.Principal {
		id, err := f.st.Identity(ctx, f.proj.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := auth.PrincipalFor(ctx, f.st, id)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	plan := func(action query.Action, q string) *query.Plan {
		v, _ := url.ParseQuery(q)
		p, err := query.FromParams(action, v, query.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		p.Org, p.Project, p.Type, p.Schema, p.Table = "demo", "demo", "pg", f.schema, "employees"
		return p
	}
	x := f.eng.Explain(ctx, principal("alice"), plan(query.Read, "ps=10&pg=0&oy=id.as"))
	if x.Outcome != nil || x.Stmt == nil {
		t.Fatalf("alice read: %+v", x)
	}
	if !strings.Contains(x.Stmt.SQL, `"department_id" = $`) || fmt.Sprint(x.Stmt.Args) != "[6 10]" || fmt.Sprint(x.Columns) != "[id full_name department_id]" {
		t.Fatalf("alice read SQL: %s %v cols %v", x.Stmt.SQL, x.Stmt.Args, x.Columns)
	}
	x = f.eng.Explain(ctx, principal("alice"), plan(query.Delete, "id=eq.1"))
	if fault.KindOf(x.Outcome) != fault.Forbidden || x.Gates[len(x.Gates)-1].Name != "2 template" {
		t.Fatalf("alice delete: %+v", x)
	}
	p := plan(query.Delete, "id=eq.1")
	p.Table = "audit_log"
	x = f.eng.Explain(ctx, principal("admin"), p)
	if fault.KindOf(x.Outcome) != fault.Forbidden || x.Gates[len(x.Gates)-1].Name != "1 lock mask" {
		t.Fatalf("admin delete audit_log: %+v", x)
	}
	// Explaining writes nothing.
	before := len(f.do("GET", f.path("employees")+"?ps=100&pg=0", f.admin, nil).data(t))
	x = f.eng.Explain(ctx, principal("bob"), plan(query.Delete, "all=true"))
	if x.Outcome != nil || !strings.HasPrefix(x.Stmt.SQL, "DELETE") {
		t.Fatalf("bob delete: %+v", x)
	}
	if after := len(f.do("GET", f.path("employees")+"?ps=100&pg=0", f.admin, nil).data(t)); after != before {
		t.Fatal("explain wrote")
	}
}
