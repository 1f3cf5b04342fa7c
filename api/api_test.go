package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/bootstrap"
	_ "github.com/littlebitlabs/minimal/dialects/mi"
	_ "github.com/littlebitlabs/minimal/dialects/pg"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// gateway is a whole gateway on a temporary data dir, served over real HTTP.
type gateway struct {
	t     testing.TB
	dir   string
	st    *store.Store
	key   []byte
	srv   *httptest.Server
	admin string // admin token
	proj  store.Project
	eng   *engine.Engine
}

func newGateway(t testing.TB, cfg engine.Config) *gateway {
	t.Helper()
	return openGateway(t, cfg, false)
}

// openGateway is newGateway; with audited, the engine writes its audit
// entries through an audit writer, as the server's does.
func openGateway(t testing.TB, cfg engine.Config, audited bool) *gateway {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ver := auth.NewVerifier(st, key)
	if _, err := bootstrap.Ensure(ctx, st, dir, key, ver, log); err != nil {
		t.Fatal(err)
	}
	cfg.Logger = log
	cfg.PollInterval = 50 * time.Millisecond
	if audited {
		aw := store.NewAuditWriter(st, 0, log)
		t.Cleanup(func() { _ = aw.Close(context.Background()) })
		cfg.Audit = aw
	}
	eng, err := engine.New(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	go eng.Run(rctx)
	srv := httptest.NewServer(api.New(api.Deps{Engine: eng, Verifier: ver, Store: st, SigningKey: key}, api.Config{MaxBodyBytes: 1 << 16, MaxPageSize: 100, Logger: log}))
	t.Cleanup(func() { srv.Close(); cancel(); eng.Close() })
	tok, err := os.ReadFile(dir + "/admin.token")
	if err != nil {
		t.Fatal(err)
	}
	org, _ := st.Org(ctx, "demo")
	proj, _ := st.Project(ctx, org.ID, "demo")
	return &gateway{t: t, dir: dir, st: st, key: key, srv: srv, admin: strings.TrimSpace(string(tok)), proj: proj, eng: eng}
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("body is not JSON (%v): %s", err, r.body)
	}
	return m
}

func (r reply) data(t *testing.T) []map[string]any {
	t.Helper()
	raw, _ := r.json(t)["data"].([]any)
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i] = x.(map[string]any)
	}
	return out
}

func (r reply) errorMessage(t *testing.T) string {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error envelope in %s", r.body)
	}
	if e["request_id"] == "" || e["code"] == "" {
		t.Fatalf("incomplete error envelope %s", r.body)
	}
	return e["message"].(string)
}

func (g *gateway) do(method, path, token string, body any) reply {
	g.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, g.srv.URL+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("LB-Access-Token", token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := g.srv.Client().Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func (g *gateway) mint(identity string, opt auth.MintOptions) string {
	g.t.Helper()
	ctx := context.Background()
	id, err := g.st.Identity(ctx, g.proj.ID, identity)
	if err != nil {
		g.t.Fatal(err)
	}
	tok, err := auth.Mint(ctx, g.st, g.key, id, opt)
	if err != nil {
		g.t.Fatal(err)
	}
	return tok
}

const auto = "/minimal/api/rest/auto/v1/demo/demo"

func expect(t *testing.T, r reply, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
}

// pgDSN finds the test PostgreSQL; it skips only when the variable is unset
// and MINIMAL_TEST_REQUIRE_DBS is not 1.
func pgDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("MINIMAL_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("MINIMAL_TEST_REQUIRE_DBS") == "1" {
			t.Fatal("MINIMAL_TEST_PG_DSN is unset and MINIMAL_TEST_REQUIRE_DBS=1")
		}
		t.Skip("MINIMAL_TEST_PG_DSN is unset")
	}
	return dsn
}

// pgSchema creates a fresh schema with the test tables and registers it.
func (g *gateway) pgSchema(dsn string) string {
	g.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		g.t.Fatal(err)
	}
	schema := fmt.Sprintf("apitest_%d", rand.Uint32())
	g.t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.Background())
	})
	ddl := `
CREATE SCHEMA ` + schema + `;
SET search_path TO ` + schema + `;
CREATE TABLE departments (id int PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE employees (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  full_name text NOT NULL,
  email text UNIQUE,
  department_id int REFERENCES departments(id),
  salary numeric(14,2),
  rating double precision,
  active boolean NOT NULL DEFAULT true,
  hired date,
  updated timestamptz,
  tags text[],
  profile jsonb,
  big bigint,
  ext uuid,
  photo bytea
);
CREATE VIEW slow AS SELECT 1 AS id, pg_sleep(3)::text AS s;
CREATE VIEW failing AS SELECT id, 10 / (id - 3) AS q FROM generate_series(1, 5) AS id;
INSERT INTO departments VALUES (1,'Ops'),(6,'HR'),(7,'Eng'),(9,'Sales');
INSERT INTO employees (full_name,email,department_id,salary,rating,active,hired,updated,tags,profile,big,ext,photo) VALUES
 ('Ada Lovelace','ada@x.io',7,12345678901.25,4.5,true,'2020-01-02','2021-03-04T05:06:07.123456Z','{a,b}','{"n":9007199254740993,"k":"v"}',9007199254740993,'6f1c3a34-1b7e-4d6b-9f3a-3f1c2b7a9e10','\x0001ff'),
 ('Rafael Nadal','rafa@x.io',6,5000,3.25,true,'2019-05-06',NULL,'{}',NULL,-9223372036854775808,NULL,NULL),
 ('Raffaella Carra',NULL,6,7000.5,NULL,false,NULL,NULL,NULL,'[1,2]',9223372036854775807,NULL,NULL),
 ('Grace Hopper','grace@x.io',9,NULL,5,true,'1952-01-01',NULL,'{"x,y"}',NULL,0,NULL,NULL),
 ('Linus, Jr.','linus@x.io',NULL,100,1,false,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
`
	if _, err := conn.Exec(ctx, ddl); err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: "pg", Schema: schema, DSN: dsn}); err != nil {
		g.t.Fatal(err)
	}
	g.waitFor("/pg/" + schema + "/employees?ps=1&pg=0")
	return schema
}

// waitFor polls until a path answers 200 (registration reaches the engine
// through the store's change counter).
func (g *gateway) waitFor(path string) {
	g.t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		r := g.do("GET", auto+path, g.admin, nil)
		if r.status == 200 {
			return
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("%s never became ready: %d %s", path, r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// escapeQuery percent-encodes the values of a readable a=b&c=d query.
func escapeQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		parts[i] = k + "=" + url.QueryEscape(v)
	}
	return strings.Join(parts, "&")
}

func names(rows []map[string]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r["full_name"])
	}
	return out
}

func TestSampleNotes(t *testing.T) {
	g := newGateway(t, engine.Config{})
	r := g.do("GET", auto+"/mi/app/notes?ps=10&pg=0&oy=title.as", g.admin, nil)
	expect(t, r, 200)
	rows := r.data(t)
	if len(rows) != 3 || rows[0]["title"] != "Read me over REST" {
		t.Fatalf("notes: %s", r.body)
	}
	r = g.do("GET", auto+"/mi/app/notes?ps=10&pg=0&format=csv&fc=title", g.admin, nil)
	expect(t, r, 200)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("content type %q", ct)
	}
	if lines := strings.Split(strings.TrimSpace(string(r.body)), "\n"); len(lines) != 4 || lines[0] != "title" {
		t.Fatalf("csv: %q", r.body)
	}
	// Writes through REST are validated against schema.yaml.
	r = g.do("POST", auto+"/mi/app/notes", g.admin, map[string]any{"body": "no title"})
	expect(t, r, 400)
	if msg := r.errorMessage(t); !strings.Contains(msg, "title") {
		t.Fatalf("message does not name the field: %s", msg)
	}
	r = g.do("POST", auto+"/mi/app/notes", g.admin, []any{map[string]any{"title": "t1", "id": nil}, map[string]any{"title": "t2", "body": "b"}})
	expect(t, r, 201)
	if rows := r.data(t); len(rows) != 2 || len(rows[0]["id"].(string)) != 36 {
		t.Fatalf("insert answer %s", r.body)
	}
	r = g.do("PUT", auto+"/mi/app/notes?title=eq.t2", g.admin, map[string]any{"body": "changed"})
	expect(t, r, 200)
	if n := r.json(t)["rows_affected"]; fmt.Sprint(n) != "1" {
		t.Fatalf("update: %s", r.body)
	}
	r = g.do("DELETE", auto+"/mi/app/notes?title=like.t*", g.admin, nil)
	expect(t, r, 200)
	if n := r.json(t)["rows_affected"]; fmt.Sprint(n) != "2" {
		t.Fatalf("delete: %s", r.body)
	}
}

func TestPostgresReads(t *testing.T) {
	dsn := pgDSN(t)
	g := newGateway(t, engine.Config{})
	s := g.pgSchema(dsn)
	base := auto + "/pg/" + s + "/employees?ps=50&pg=0&oy=id.as"
	read := func(q string) []map[string]any {
		t.Helper()
		r := g.do("GET", base+"&"+escapeQuery(q), g.admin, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		return r.data(t)
	}
	cases := []struct {
		q    string
		want string
	}{
		{"id=eq.1", "[Ada Lovelace]"},
		{"id=ne.1", "[Rafael Nadal Raffaella Carra Grace Hopper Linus, Jr.]"},
		{"id=neq.1&id=lt.4", "[Rafael Nadal Raffaella Carra]"},
		{"department_id=gt.6", "[Ada Lovelace Grace Hopper]"},
		{"department_id=ge.7", "[Ada Lovelace Grace Hopper]"},
		{"department_id=gte.7", "[Ada Lovelace Grace Hopper]"},
		{"department_id=lt.7", "[Rafael Nadal Raffaella Carra]"},
		{"department_id=le.6", "[Rafael Nadal Raffaella Carra]"},
		{"department_id=lte.6", "[Rafael Nadal Raffaella Carra]"},
		{"full_name=like.Raf*", "[Rafael Nadal Raffaella Carra]"},
		{"full_name=like.raf*", "[]"},
		{"full_name=ilike.raf*", "[Rafael Nadal Raffaella Carra]"},
		{"full_name=li.ovel", "[Ada Lovelace]"},
		{"full_name=rli.Gr", "[Grace Hopper]"},
		{"id=in.1,3,5", "[Ada Lovelace Raffaella Carra Linus, Jr.]"},
		{`full_name=in."Linus, Jr.",Grace Hopper`, "[Grace Hopper Linus, Jr.]"},
		{"id=nin.1,2,3", "[Grace Hopper Linus, Jr.]"},
		{"salary=bw.5000,7000.5", "[Rafael Nadal Raffaella Carra]"},
		{"email=is.null", "[Raffaella Carra]"},
		{"department_id=is.notnull&active=is.false", "[Raffaella Carra]"},
		{"active=is.true", "[Ada Lovelace Rafael Nadal Grace Hopper]"},
		{"active=eq.false", "[Raffaella Carra Linus, Jr.]"},
		{"big=eq.9007199254740993", "[Ada Lovelace]"},
		{"hired=lt.2000-01-01", "[Grace Hopper]"},
		{"ext=eq.6f1c3a34-1b7e-4d6b-9f3a-3f1c2b7a9e10", "[Ada Lovelace]"},
		{"rating=gt.4.5", "[Grace Hopper]"},
		{"id=not.in.1,2,3,4", "[Linus, Jr.]"},
		{"full_name=eq.Robert'); DROP TABLE employees;--", "[]"},
	}
	for _, tc := range cases {
		if got := fmt.Sprint(names(read(tc.q))); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.q, got, tc.want)
		}
	}

	// Projection, ordering on several columns, paging. PostgreSQL sorts
	// NULLs first in descending order: Linus, Grace | Ada, Rafael | Raffaella.
	r := g.do("GET", auto+"/pg/"+s+"/employees?fc=full_name,department_id&oy=department_id.ds,full_name.asc&ps=2&pg=1", g.admin, nil)
	expect(t, r, 200)
	rows := r.data(t)
	if len(rows) != 2 || len(rows[0]) != 2 || rows[0]["full_name"] != "Ada Lovelace" || rows[1]["full_name"] != "Rafael Nadal" {
		t.Fatalf("paging/ordering: %s", r.body)
	}
	if pg := r.json(t)["page"].(map[string]any); fmt.Sprintf("%v %v", pg["number"], pg["size"]) != "1 2" {
		t.Fatalf("page: %v", pg)
	}
	r = g.do("GET", auto+"/pg/"+s+"/employees?ps=10&pg=9", g.admin, nil)
	expect(t, r, 200)
	if len(r.data(t)) != 0 {
		t.Fatalf("past the end: %s", r.body)
	}

	// Faithful JSON for PostgreSQL types.
	r = g.do("GET", base+"&id=eq.1", g.admin, nil)
	body := string(r.body)
	for _, want := range []string{
		`"big":9007199254740993`, `"salary":12345678901.25`, `"rating":4.5`, `"active":true`,
		`"hired":"2020-01-02"`, `"updated":"2021-03-04T05:06:07.123456Z"`, `"tags":["a","b"]`,
		`"profile":{"k":"v","n":9007199254740993}`, `"ext":"6f1c3a34-1b7e-4d6b-9f3a-3f1c2b7a9e10"`,
		`"photo":"` + base64.StdEncoding.EncodeToString([]byte{0, 1, 0xff}) + `"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("row lacks %s: %s", want, body)
		}
	}
	r = g.do("GET", base+"&big=lt.0", g.admin, nil)
	if !strings.Contains(string(r.body), `"big":-9223372036854775808`) {
		t.Errorf("int8 min: %s", r.body)
	}

	// Every format, with its content type.
	formats := map[string]string{
		"json": "application/json", "ndjson": "application/x-ndjson", "csv": "text/csv",
		"xml": "application/xml", "yaml": "application/yaml", "bson": "application/bson",
	}
	for f, ct := range formats {
		r := g.do("GET", base+"&fc=id,full_name&id=lt.3&format="+f, g.admin, nil)
		expect(t, r, 200)
		if !strings.HasPrefix(r.header.Get("Content-Type"), ct) {
			t.Errorf("%s: content type %q", f, r.header.Get("Content-Type"))
		}
		if f != "bson" && !strings.Contains(string(r.body), "Rafael Nadal") {
			t.Errorf("%s: %s", f, r.body)
		}
	}
	if r := g.do("GET", base+"&format=ndjson&id=lt.3&fc=id", g.admin, nil); string(r.body) != "{\"id\":1}\n{\"id\":2}\n" {
		t.Errorf("ndjson: %q", r.body)
	}
}

func TestPostgresWrites(t *testing.T) {
	dsn := pgDSN(t)
	g := newGateway(t, engine.Config{})
	s := g.pgSchema(dsn)
	path := auto + "/pg/" + s + "/employees"

	// Insert returns generated keys; null for the identity column means DEFAULT.
	r := g.do("POST", path, g.admin, []any{
		map[string]any{"id": nil, "full_name": "New One", "department_id": 1, "big": "9007199254740995", "profile": map[string]any{"a": 1}},
		map[string]any{"full_name": "New Two", "salary": 10.5, "tags": []any{"x"}},
	})
	expect(t, r, 201)
	m := r.json(t)
	rows := r.data(t)
	if fmt.Sprint(m["rows_affected"]) != "2" || len(rows) != 2 || rows[0]["id"] == nil || rows[0]["active"] != true {
		t.Fatalf("insert: %s", r.body)
	}
	if !strings.Contains(string(r.body), `"big":9007199254740995`) {
		t.Fatalf("bigint sent as string lost precision: %s", r.body)
	}
	// A single object is accepted too.
	expect(t, g.do("POST", path, g.admin, map[string]any{"full_name": "Solo"}), 201)

	// A failing row rolls the whole batch back.
	before := len(g.do("GET", path+"?ps=100&pg=0", g.admin, nil).data(t))
	r = g.do("POST", path, g.admin, []any{
		map[string]any{"full_name": "Batch A"},
		map[string]any{"full_name": "Batch B", "department_id": 4242},
	})
	expect(t, r, 400)
	if after := len(g.do("GET", path+"?ps=100&pg=0", g.admin, nil).data(t)); after != before {
		t.Fatalf("batch not rolled back: %d -> %d", before, after)
	}
	// Duplicates are 409.
	r = g.do("POST", path, g.admin, map[string]any{"full_name": "Dup", "email": "ada@x.io"})
	expect(t, r, 409)
	if r.errorMessage(t) != "a row with the same key already exists" {
		t.Fatalf("conflict message: %s", r.body)
	}
	if r.json(t)["error"].(map[string]any)["code"] != "CONFLICT" {
		t.Fatalf("code: %s", r.body)
	}

	// Update by filter, by body and by set= params.
	r = g.do("PUT", path+"?department_id=eq.6", g.admin, map[string]any{"rating": 2, "active": false})
	expect(t, r, 200)
	if fmt.Sprint(r.json(t)["rows_affected"]) != "2" {
		t.Fatalf("update: %s", r.body)
	}
	r = g.do("PUT", path+"?full_name=eq.Solo&set=email.solo@x.io&set=salary.null", g.admin, nil)
	expect(t, r, 200)
	got := g.do("GET", path+"?ps=1&pg=0&full_name=eq.Solo", g.admin, nil).data(t)
	if len(got) != 1 || got[0]["email"] != "solo@x.io" || got[0]["salary"] != nil {
		t.Fatalf("set params: %v", got)
	}

	// Delete: a filter is required unless all=true; ps/pg are ignored.
	expect(t, g.do("DELETE", path, g.admin, nil), 400)
	expect(t, g.do("PUT", path, g.admin, map[string]any{"rating": 1}), 400)
	r = g.do("DELETE", path+"?full_name=like.New*&ps=1&pg=5", g.admin, nil)
	expect(t, r, 200)
	if fmt.Sprint(r.json(t)["rows_affected"]) != "2" {
		t.Fatalf("delete: %s", r.body)
	}
	dpath := auto + "/pg/" + s + "/departments"
	expect(t, g.do("DELETE", dpath+"?all=true", g.admin, nil), 400) // FK: rows still referenced
	expect(t, g.do("DELETE", path+"?all=true", g.admin, nil), 200)
	r = g.do("DELETE", dpath+"?all=true", g.admin, nil)
	expect(t, r, 200)
	if fmt.Sprint(r.json(t)["rows_affected"]) != "4" {
		t.Fatalf("delete all: %s", r.body)
	}
}

func TestRefusals(t *testing.T) {
	dsn := pgDSN(t)
	g := newGateway(t, engine.Config{})
	s := g.pgSchema(dsn)
	path := auto + "/pg/" + s + "/employees"
	read := path + "?ps=10&pg=0"

	bad := []struct {
		method, url string
		body        any
		status      int
		mention     string
	}{
		{"GET", read + "&nosuch=eq.1", nil, 400, `unknown column "nosuch"`},
		{"GET", read + "&fc=id,nosuch", nil, 400, `unknown column "nosuch"`},
		{"GET", read + "&oy=nosuch.as", nil, 400, `unknown column "nosuch"`},
		{"GET", read + "&id=zz.1", nil, 400, `unknown operator "zz"`},
		{"GET", read + "&id=eq.abc", nil, 400, `"abc" is not an integer`},
		{"GET", read + "&salary=gt.1e", nil, 400, `not a decimal`},
		{"GET", read + "&active=eq.maybe", nil, 400, `not true or false`},
		{"GET", read + "&hired=eq.notadate", nil, 400, `date`},
		{"GET", read + "&department_id=like.1*", nil, 400, `need a text column`},
		{"GET", path + "?pg=0", nil, 400, `"ps" is required`},
		{"GET", path + "?ps=10", nil, 400, `"pg" is required`},
		{"GET", path + "?ps=101&pg=0", nil, 400, `over the limit of 100`},
		{"GET", read + "&format=pdf", nil, 400, `format`},
		{"POST", path, `{"full_name":`, 400, `not valid JSON`},
		{"POST", path, `[]`, 400, `empty array`},
		{"POST", path, `[1]`, 400, `not a JSON object`},
		{"POST", path, ``, 400, `empty`},
		{"POST", path, map[string]any{"full_name": 5}, 400, `column "full_name": expected string`},
		{"POST", path, map[string]any{"full_name": "x", "id": 1.5}, 400, `not a 64-bit integer`},
		{"POST", path, map[string]any{"full_name": "x", "secret": 1}, 400, `unknown column "secret"`},
		{"POST", path, strings.Repeat(" ", 1<<17), 413, `over the limit`},
		{"PUT", path, map[string]any{"rating": 1}, 400, `at least one filter`},
		{"PUT", path + "?id=eq.1", nil, 400, `at least one new value`},
		{"PUT", path + "?id=eq.1", map[string]any{"nosuch": 1}, 400, `unknown column "nosuch"`},
		{"DELETE", path, nil, 400, `all=true`},
		{"GET", auto + "/pg/" + s + "/nosuch?ps=1&pg=0", nil, 404, `not found`},
		{"GET", auto + "/pg/nosuchschema/employees?ps=1&pg=0", nil, 404, `not found`},
		{"GET", auto + "/zz/" + s + "/employees?ps=1&pg=0", nil, 404, `not found`},
		{"GET", "/minimal/api/rest/auto/v1/other/demo/pg/" + s + "/employees?ps=1&pg=0", nil, 400, `do not match the token`},
		{"GET", "/minimal/api/rest/auto/v1/demo/other/pg/" + s + "/employees?ps=1&pg=0", nil, 400, `do not match the token`},
	}
	for _, tc := range bad {
		r := g.do(tc.method, tc.url, g.admin, tc.body)
		if r.status != tc.status {
			t.Errorf("%s %s: status %d, want %d: %s", tc.method, tc.url, r.status, tc.status, r.body)
			continue
		}
		if msg := r.errorMessage(t); !strings.Contains(msg, tc.mention) {
			t.Errorf("%s %s: message %q lacks %q", tc.method, tc.url, msg, tc.mention)
		}
	}

	// Tokens: missing, tampered, expired, alg=none, wrong key, Bearer form.
	expect(t, g.do("GET", read, "", nil), 401)
	parts := strings.Split(g.admin, ".")
	claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	tampered := strings.Replace(string(claims), `"key_type":"crud"`, `"key_type":"crud","x":1`, 1)
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(tampered)) + "." + parts[2]
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	var c auth.Claims
	if _, _, err := jwt.NewParser().ParseUnverified(g.admin, &c); err != nil {
		t.Fatal(err)
	}
	c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Hour))
	expired, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(g.key)
	c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(time.Hour))
	otherKey, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte("0123456789abcdef0123456789abcdef"))
	c.ExpiresAt = nil
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(g.key)
	for name, tok := range map[string]string{
		"tampered": forged, "alg=none": none, "expired": expired, "wrong key": otherKey,
		"no exp": noExp, "garbage": "abc.def.ghi", "huge": strings.Repeat("a", 5000),
	} {
		r := g.do("GET", read, tok, nil)
		if r.status != 401 {
			t.Errorf("%s token: status %d: %s", name, r.status, r.body)
			continue
		}
		t.Logf("%s token refused: %s", name, r.errorMessage(t))
	}
	req, _ := http.NewRequest("GET", g.srv.URL+read, nil)
	req.Header.Set("Authorization", "Bearer "+g.admin)
	resp, err := g.srv.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("bearer: %v %v", err, resp.Status)
	}
	resp.Body.Close()

	// key_type: a read-only token reads but cannot write; the 403 names the roles.
	ro := g.mint("admin", auth.MintOptions{KeyType: "-r--"})
	expect(t, g.do("GET", read, ro, nil), 200)
	for _, m := range []struct {
		method, url string
		body        any
	}{{"POST", path, map[string]any{"full_name": "x"}}, {"PUT", path + "?id=eq.1", map[string]any{"rating": 1}}, {"DELETE", path + "?id=eq.1", nil}} {
		r := g.do(m.method, m.url, ro, m.body)
		expect(t, r, 403)
		if msg := r.errorMessage(t); msg != "insufficient permissions for this operation on this table, got [admin]" {
			t.Errorf("403 message %q", msg)
		}
	}

	// Lock mask: an operator's -r-- lock freezes writes for every token.
	if _, err := g.st.AddLock(context.Background(), store.Lock{ProjectID: g.proj.ID, Pattern: "pg/" + s + "/emp*", Mask: "-r--"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		r := g.do("DELETE", path+"?id=eq.999", g.admin, nil)
		if r.status == 403 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lock not applied: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	expect(t, g.do("GET", read, g.admin, nil), 200)
	expect(t, g.do("DELETE", auto+"/pg/"+s+"/departments?id=eq.999", g.admin, nil), 200)

	// Revocation and disabled identities take effect on live tokens.
	tok := g.mint("admin", auth.MintOptions{})
	expect(t, g.do("GET", read, tok, nil), 200)
	var tc auth.Claims
	_, _, _ = jwt.NewParser().ParseUnverified(tok, &tc)
	if err := g.st.RevokeToken(context.Background(), tc.ID, tc.ExpiresAt.Time); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	expect(t, g.do("GET", read, tok, nil), 401)
}

func TestUnavailableAndTimeout(t *testing.T) {
	dsn := pgDSN(t)
	g := newGateway(t, engine.Config{StatementTimeout: 300 * time.Millisecond})
	s := g.pgSchema(dsn)

	r := g.do("GET", auto+"/pg/"+s+"/slow?ps=1&pg=0", g.admin, nil)
	expect(t, r, 504)
	t.Logf("timeout: %s", r.errorMessage(t))

	ctx := context.Background()
	if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: "pg", Schema: "public", DSN: "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		r = g.do("GET", auto+"/pg/public/anything?ps=1&pg=0", g.admin, nil)
		if r.status != 404 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	expect(t, r, 503)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
}
