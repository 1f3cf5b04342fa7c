package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/custom"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

const customRoot = "/minimal/api/rest/custom/v1/demo/demo/"

// defineCustom checks a definition as the admin API and apply do, then
// stores it.
func (g *gateway) defineCustom(d store.CustomAPI) {
	g.t.Helper()
	d.ProjectID = g.proj.ID
	if err := custom.Check(d); err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.st.CreateCustomAPI(context.Background(), d); err != nil {
		g.t.Fatal(err)
	}
}

func sp(s string) *string { return &s }

// TestCustomREST: what is particular to the REST face of custom APIs —
// where parameters come from, version and format in the query string,
// typed values reaching PostgreSQL as the types its columns have, and the
// refusals around them.
func TestCustomREST(t *testing.T) {
	dsn := pgDSN(t)
	g := newGateway(t, engine.Config{})
	schema := g.pgSchema(dsn)
	typed := store.CustomAPI{URI: "employees/search", Method: "POST", Version: 1, Type: "pg", Schema: schema, Mode: store.ModeRead,
		Roles: []string{"hr"}, Tables: []string{"employees"},
		Params: []store.CustomParam{
			{Name: "hired", Type: "date", Required: true},
			{Name: "active", Type: "boolean", Required: true},
			{Name: "ext", Type: "uuid", Required: true},
			{Name: "before", Type: "timestamp", Required: true},
			{Name: "salary", Type: "number", Required: true},
			{Name: "big", Type: "integer", Required: true},
			{Name: "tag", Type: "string", Default: sp("a")},
		},
		Statements: []string{`SELECT id, full_name FROM employees
WHERE hired = :hired AND active = :active AND ext = :ext AND updated < :before
  AND salary > :salary AND big = :big AND :tag = ANY (tags) ORDER BY id`},
	}
	g.defineCustom(typed)
	get := typed
	get.URI, get.Method = "employees/by-department", "GET"
	get.Params = []store.CustomParam{{Name: "dept", Type: "integer", Required: true}}
	get.Statements = []string{"SELECT id, full_name, salary FROM employees WHERE department_id = :dept ORDER BY id"}
	g.defineCustom(get)
	del := store.CustomAPI{URI: "employees/retire", Method: "DELETE", Version: 1, Type: "pg", Schema: schema, Mode: store.ModeWrite,
		Roles: []string{"hr"}, Params: []store.CustomParam{{Name: "email", Type: "string", Required: true}},
		Statements: []string{"DELETE FROM employees WHERE email = :email"}}
	g.defineCustom(del)
	put := del
	put.URI, put.Method = "employees/rate", "PUT"
	put.Params = []store.CustomParam{{Name: "id", Type: "integer", Required: true}, {Name: "rating", Type: "number", Required: true}}
	put.Statements = []string{"UPDATE employees SET rating = :rating WHERE id = :id RETURNING id"}
	g.defineCustom(put)
	mini := get
	mini.URI, mini.Type, mini.Schema, mini.Tables = "notes", "mi", "app", nil
	mini.Statements = []string{"SELECT * FROM notes WHERE :dept > 0"}
	g.defineCustom(mini)
	gone := get
	gone.URI, gone.Schema = "gone", "no_such_schema"
	g.defineCustom(gone)

	// Typed values from a JSON body, each compared with a column of its
	// PostgreSQL type.
	r := g.do("POST", customRoot+"employees/search?version=1", g.admin, `{"hired":"2020-01-02","active":true,
"ext":"6F1C3A34-1B7E-4D6B-9F3A-3F1C2B7A9E10","before":"2021-03-04T08:00:00+02:00","salary":12345678901,"big":"9007199254740993"}`)
	expect(t, r, 200)
	if string(r.body) != `{"data":[{"id":1,"full_name":"Ada Lovelace"}]}`+"\n" {
		t.Fatalf("typed search: %s", r.body)
	}
	// The same values as text in a query string are refused on a POST.
	r = g.do("POST", customRoot+"employees/search?version=1&hired=2020-01-02", g.admin, `{}`)
	if expect(t, r, 400); r.errorMessage(t) != `query parameter "hired": a POST takes its parameters in the JSON body` {
		t.Fatalf("query param on POST: %s", r.body)
	}
	for _, c := range []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{"POST", "employees/search?version=1", `[1]`, 400, "request body must be a JSON object of parameters"},
		{"POST", "employees/search?version=1", `{"hired":"2020-01-02","active":"maybe"}`, 400, `parameter "active" must be true or false, got "maybe"`},
		{"POST", "employees/search?version=1", `{"hired":2020}`, 400, `parameter "hired" must be a date, got a number`},
		{"GET", "employees/by-department?version=x&dept=1", "", 400, "version must be one integer, e.g. ?version=1"},
		{"GET", "employees/by-department?version=1&version=2&dept=1", "", 400, "version must be one integer, e.g. ?version=1"},
		{"GET", "employees/by-department?dept=1", "", 400, "version is required and must be 1 or more (REST: ?version=N)"},
		{"GET", "employees/by-department?version=1&dept=6&dept=7", "", 400, `parameter "dept" must be a single integer value`},
		{"GET", "employees/by-department?version=1&dept=6&format=pdf", "", 400, ""},
		{"GET", "notes?version=1&dept=1", "", 400, "custom APIs do not run on databases of type mi"},
		{"GET", "gone?version=1&dept=1", "", 404, "database pg/no_such_schema of custom API GET gone v1 is not registered"},
		{"GET", "Bad%20Uri?version=1", "", 404, `custom API "Bad Uri" not found`},
		{"PATCH", "employees/by-department?version=1", "", 405, ""},
		{"POST", "?version=1", "{}", 404, "no route for POST /minimal/api/rest/custom/v1/demo/demo/: name a custom API's uri"},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		r := g.do(c.method, customRoot+c.path, g.admin, body)
		expect(t, r, c.status)
		if c.msg != "" && r.errorMessage(t) != c.msg {
			t.Errorf("%s %s: %q, want %q", c.method, c.path, r.errorMessage(t), c.msg)
		}
	}
	if r := g.do("GET", "/minimal/api/rest/custom/v1/other/demo/employees/by-department?version=1&dept=6", g.admin, nil); r.status != 400 {
		t.Fatalf("other org: %d %s", r.status, r.body)
	}
	if r := g.do("GET", customRoot+"employees/by-department?version=1&dept=6", "", nil); r.status != 401 {
		t.Fatalf("no token: %d %s", r.status, r.body)
	}

	// Reads take the Auto API's formats; a trailing slash is the same uri.
	r = g.do("GET", customRoot+"employees/by-department/?version=1&dept=6&format=csv", g.admin, nil)
	expect(t, r, 200)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") || string(r.body) != "id,full_name,salary\n2,Rafael Nadal,5000.00\n3,Raffaella Carra,7000.50\n" {
		t.Fatalf("csv %s: %q", ct, r.body)
	}

	// PUT and DELETE writes: the body and the query string.
	r = g.do("PUT", customRoot+"employees/rate?version=1", g.admin, `{"id":2,"rating":"4.75"}`)
	if expect(t, r, 200); string(r.body) != "{\"rows_affected\":1}\n" {
		t.Fatalf("put %s", r.body)
	}
	r = g.do("DELETE", customRoot+"employees/retire?version=1&email="+"nobody%27%20OR%20%271%27%3D%271", g.admin, nil)
	if expect(t, r, 200); string(r.body) != "{\"rows_affected\":0}\n" {
		t.Fatalf("delete injection: %s", r.body)
	}
	r = g.do("DELETE", customRoot+"employees/retire?version=1&email=linus@x.io", g.admin, nil)
	if expect(t, r, 200); string(r.body) != "{\"rows_affected\":1}\n" {
		t.Fatalf("delete %s", r.body)
	}
	r = g.do("GET", auto+"/pg/"+schema+"/employees?ps=10&pg=0&fc=id,rating&oy=id.as", g.admin, nil)
	if expect(t, r, 200); string(r.body) != `{"data":[{"id":1,"rating":4.5},{"id":2,"rating":4.75},{"id":3,"rating":null},{"id":4,"rating":5}],"page":{"number":0,"size":10}}`+"\n" {
		t.Fatalf("after writes: %s", r.body)
	}

	// The listing below the project.
	r = g.do("GET", "/minimal/api/rest/custom/v1/demo/demo", g.admin, nil)
	expect(t, r, 200)
	for _, want := range []string{`"uri":"employees/search","method":"POST","version":1,"mode":"read"`, `"uri":"employees/retire","method":"DELETE"`} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("listing lacks %s: %s", want, r.body)
		}
	}
}
