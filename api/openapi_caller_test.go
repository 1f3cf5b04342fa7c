package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/engine"
)

// openAPIValidator loads a document into libopenapi-validator and checks
// it against the OpenAPI 3.1 specification's schema.
func openAPIValidator(t *testing.T, name string, doc []byte) validator.Validator {
	t.Helper()
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatalf("%s: not an OpenAPI document: %v", name, err)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", name, errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("%s: %s: %s", name, e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s at %s", se.Reason, se.FieldPath+" "+se.KeywordLocation)
			}
		}
		t.FailNow()
	}
	return v
}

// callerDoc fetches a caller's OpenAPI document.
func callerDoc(t *testing.T, g *gateway, tok string) ([]byte, map[string]any) {
	t.Helper()
	r := g.do("GET", auto+"/openapi.json", tok, nil)
	expect(t, r, 200)
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	return r.body, doc
}

func keysOf(m any) []string {
	var out []string
	for k := range m.(map[string]any) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// autoMethods are the methods of the global document's Auto API path.
func autoMethods(t *testing.T) []string {
	var doc map[string]any
	if err := json.Unmarshal(api.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	return keysOf(doc["paths"].(map[string]any)[api.AutoPrefix+"/{org}/{project}/{type}/{schema}/{table}"])
}

// TestCallerOpenAPI: the global document and each caller's pass an OpenAPI
// 3.1 validator; a caller's document has one path per table it may see,
// only the operations it holds, and only the columns it may use — none
// of a hidden table or column anywhere in it.
func TestCallerOpenAPI(t *testing.T) {
	f := newPermFixture(t)
	openAPIValidator(t, "global", api.OpenAPIDocument())
	pgBase := "/pg/" + f.schema + "/"
	rowProps := func(doc map[string]any, path, method string) []string {
		op := doc["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any)
		ref := op["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"].(string)
		schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
		answer := schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		rowRef := answer["properties"].(map[string]any)["data"].(map[string]any)["items"].(map[string]any)["$ref"].(string)
		return keysOf(schemas[strings.TrimPrefix(rowRef, "#/components/schemas/")].(map[string]any)["properties"])
	}

	for _, who := range []string{"admin", "alice", "frank", "carol", "zed"} {
		raw, doc := callerDoc(t, f.gateway, f.tokens[who])
		openAPIValidator(t, who, raw)
		if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
			t.Fatalf("%s: openapi %q", who, v)
		}
		servers := doc["servers"].([]any)
		if len(servers) != 1 || servers[0].(map[string]any)["url"] != f.srv.URL+auto {
			t.Errorf("%s: servers %v, want %s", who, servers, f.srv.URL+auto)
		}
	}

	// alice: three tables, read only, employees limited to three columns.
	raw, doc := callerDoc(t, f.gateway, f.tokens["alice"])
	if got := keysOf(doc["paths"]); fmtList(got) != fmtList([]string{pgBase + "audit_log", pgBase + "departments", pgBase + "employees"}) {
		t.Fatalf("alice's paths: %v", got)
	}
	for p, item := range doc["paths"].(map[string]any) {
		if m := keysOf(item); fmtList(m) != "[get]" {
			t.Errorf("alice's %s: %v", p, m)
		}
	}
	if got := rowProps(doc, pgBase+"employees", "get"); fmtList(got) != "[department_id full_name id]" {
		t.Errorf("alice's employee rows: %v", got)
	}
	for _, hidden := range []string{"salary", "owner", "salaries", "mi/app"} {
		if bytes.Contains(raw, []byte(hidden)) {
			t.Errorf("alice's document names %q", hidden)
		}
	}

	// frank: every operation of the Auto API on employees, four columns,
	// the insert body closed to them with full_name required.
	_, doc = callerDoc(t, f.gateway, f.tokens["frank"])
	item := doc["paths"].(map[string]any)[pgBase+"employees"]
	if got, want := keysOf(item), autoMethods(t); fmtList(got) != fmtList(want) {
		t.Errorf("frank's operations %v, want %v", got, want)
	}
	if got := rowProps(doc, pgBase+"employees", "get"); fmtList(got) != "[department_id full_name id owner]" {
		t.Errorf("frank's rows: %v", got)
	}
	post := item.(map[string]any)["post"].(map[string]any)
	oneOf := post["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["oneOf"].([]any)
	ins := doc["components"].(map[string]any)["schemas"].(map[string]any)[strings.TrimPrefix(oneOf[0].(map[string]any)["$ref"].(string), "#/components/schemas/")].(map[string]any)
	if fmtList(keysOf(ins["properties"])) != "[department_id full_name id owner]" || ins["additionalProperties"] != false || fmt1(ins["required"]) != "[full_name]" {
		t.Errorf("frank's insert body: %v", ins)
	}
	if ids := post["operationId"].(string); !strings.HasPrefix(ids, "insertRows_pg_") {
		t.Errorf("operationId %q", ids)
	}

	// No rights: a valid document with no path.
	_, doc = callerDoc(t, f.gateway, f.tokens["zed"])
	if len(doc["paths"].(map[string]any)) != 0 {
		t.Errorf("zed's paths: %v", keysOf(doc["paths"]))
	}
}

func fmt1(v any) string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return fmtList(out)
}

// TestCallerOpenAPITypes checks the typed row schemas against real
// answers: every column type of the test table, read, inserted and
// updated through the gateway, validates against the caller's document.
func TestCallerOpenAPITypes(t *testing.T) {
	dsn := pgDSN(t)
	g := newGateway(t, engine.Config{})
	schema := g.pgSchema(dsn)
	raw, _ := callerDoc(t, g, g.admin)
	v := openAPIValidator(t, "admin", raw)
	path := auto + "/pg/" + schema + "/employees"
	for _, c := range []struct {
		method, url, body string
		status            int
	}{
		{"GET", path + "?ps=10&pg=0&oy=id.as", "", 200},
		{"GET", path + "?ps=2&pg=0&fc=id,photo,profile,tags,updated", "", 200},
		{"POST", path, `[{"full_name":"Typed","salary":"12.50","big":"9007199254740993","tags":["a"],"profile":{"k":1},"photo":"AAE=","ext":"6f1c3a34-1b7e-4d6b-9f3a-3f1c2b7a9e10","hired":"2024-01-02","updated":"2024-01-02T03:04:05Z","id":null}]`, 201},
		{"PUT", path + "?full_name=eq.Typed", `{"rating":2.5,"active":false}`, 200},
		{"DELETE", path + "?full_name=eq.Typed", "", 200},
	} {
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		req, err := http.NewRequest(c.method, g.srv.URL+c.url, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("LB-Access-Token", g.admin)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := g.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Fatalf("%s %s: %d %s", c.method, c.url, resp.StatusCode, b)
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		// The validator reads the request body again.
		if c.body != "" {
			req.Body = io.NopCloser(strings.NewReader(c.body))
		}
		if ok, errs := v.ValidateHttpRequestResponse(req, resp); !ok {
			for _, e := range errs {
				t.Errorf("%s %s: %s: %s", c.method, c.url, e.Message, e.Reason)
				for _, se := range e.SchemaValidationErrors {
					t.Errorf("  %s at %s", se.Reason, se.FieldPath+" "+se.KeywordLocation)
				}
			}
			t.Logf("answer: %s", b)
		}
	}
	// The validator does match answers to the table's path: a row whose
	// id is not an integer, or with null in a NOT NULL column, fails.
	req, _ := http.NewRequest("GET", g.srv.URL+path+"?ps=1&pg=0", nil)
	req.Header.Set("LB-Access-Token", g.admin)
	for _, bad := range []string{`{"data":[{"id":"x"}],"page":{"number":0,"size":1}}`, `{"data":[{"full_name":null}],"page":{"number":0,"size":1}}`} {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(bad)), Request: req}
		if ok, _ := v.ValidateHttpResponse(req, resp); ok {
			t.Errorf("%s passes as an answer of employees", bad)
		}
	}
}

// TestCallerOpenAPIDialects: on PostgreSQL, MariaDB, ClickHouse and
// mini-app tables alike, discovery lists the tables and every insert and
// read of a table of varied column types validates against the types of
// the caller's OpenAPI document.
func TestCallerOpenAPIDialects(t *testing.T) {
	g := newGateway(t, engine.Config{})
	name := g.dialectDBs("oa", map[string][]string{
		"pg": {`CREATE TABLE {db}.typed (id bigint PRIMARY KEY, name text NOT NULL, note varchar(20), qty int, price numeric(10,2) NOT NULL,
			ratio double precision, day date, at timestamp, atz timestamptz, flag boolean, doc jsonb, blob bytea, ref uuid, tags text[])`},
		"ma": {`CREATE TABLE {db}.typed (id bigint PRIMARY KEY, name varchar(40) NOT NULL, note varchar(20) NULL, qty int NULL, price decimal(10,2) NOT NULL,
			ratio double NULL, day date NULL, at datetime(6) NULL, flag boolean NULL, doc json NULL, bin blob NULL)`},
		"ch": {`CREATE TABLE {db}.typed (id Int64, name String, note Nullable(String), qty Nullable(Int32), price Decimal(10,2), big UInt64,
			ratio Nullable(Float64), day Date, at DateTime, ref UUID, tags Array(String), flag UInt8) ENGINE = MergeTree ORDER BY id`},
	})
	rows := map[string]string{
		"pg": `[{"id":1,"name":"Ann","note":null,"qty":3,"price":"1.50","ratio":0.5,"day":"2024-01-15","at":"2024-01-15T10:11:12.5","atz":"2024-01-15T10:11:12Z","flag":true,"doc":{"a":[1,2]},"blob":"AAE=","ref":"6f1c3a34-1b7e-4d6b-9f3a-3f1c2b7a9e10","tags":["x","y"]},
			{"id":2,"name":"Bob","price":20}]`,
		"ma": `[{"id":1,"name":"Ann","note":null,"qty":3,"price":"1.50","ratio":0.5,"day":"2024-01-15","at":"2024-01-15T10:11:12.5","flag":true,"doc":{"a":[1,2]},"bin":"AAE="},
			{"id":2,"name":"Bob","price":20}]`,
		"ch": `[{"id":1,"name":"Ann","note":null,"qty":3,"price":"1.50","big":"18446744073709551615","ratio":0.5,"day":"2024-01-15","at":"2024-01-15T10:11:12","ref":"6f1c3a34-1b7e-4d6b-9f3a-3f1c2b7a9e10","tags":["x"],"flag":1},
			{"id":2,"name":"Bob","price":20,"big":0,"day":"2024-01-16","at":"2024-01-16T00:00:00","ref":"00000000-0000-4000-8000-000000000000","tags":[],"flag":0}]`,
	}
	for typ := range rows {
		g.waitFor("/" + typ + "/" + name + "/typed?ps=1&pg=0")
	}
	all := listing(t, g.do("GET", auto, g.admin, nil))
	for typ := range rows {
		if fmtList(all[typ+"/"+name]["typed"]) != crud {
			t.Errorf("%s: listing %v", typ, all[typ+"/"+name])
		}
		d := describe(t, g.do("GET", auto+"/"+typ+"/"+name+"/typed/_describe", g.admin, nil))
		if d.Columns[0].Name != "id" || d.Columns[0].Kind != "integer" || d.Columns[1].Kind != "string" || d.Columns[1].Nullable {
			t.Errorf("%s: described %+v", typ, d.Columns[:2])
		}
	}
	raw, _ := callerDoc(t, g, g.admin)
	v := openAPIValidator(t, "admin", raw)
	send := func(method, path, body string, status int) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, g.srv.URL+path, rd)
		req.Header.Set("LB-Access-Token", g.admin)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := g.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body))
		}
		if ok, errs := v.ValidateHttpRequestResponse(req, resp); !ok {
			for _, e := range errs {
				t.Errorf("%s %s: %s: %s", method, path, e.Message, e.Reason)
				for _, se := range e.SchemaValidationErrors {
					t.Errorf("  %s at %s", se.Reason, se.FieldPath+" "+se.KeywordLocation)
				}
			}
			t.Logf("answer: %s", b)
		}
	}
	for typ, body := range rows {
		path := auto + "/" + typ + "/" + name + "/typed"
		send("POST", path, body, 201)
		send("GET", path+"?ps=10&pg=0&oy=id.as", "", 200)
	}
	send("GET", auto+"/mi/app/notes?ps=10&pg=0", "", 200)
	send("POST", auto+"/mi/app/notes", `{"title":"typed","body":"checked"}`, 201)
}
