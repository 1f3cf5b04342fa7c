package api_test

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/dialects/mi"
)

var updateGolden = flag.Bool("update", false, "rewrite api/testdata/*.golden")

// uuidRE and requestIDRE match what changes from run to run in an answer.
var (
	uuidRE      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	requestIDRE = regexp.MustCompile(`"request_id":"[^"]*"`)
	stampRE     = regexp.MustCompile(`"(created_at|updated_at)":"[^"]*"`)
)

// adminCall is one scripted admin API call.
type adminCall struct {
	method, path string
	hdr          map[string]string
	body         any
}

// TestAdminAnswersGolden replays a script of admin API calls — every
// route of the resources written on the generic handlers (policy sections,
// orgs, projects, spaces, databases, custom APIs), each success and each
// refusal — and compares the answers (status, ETag,
// Allow and body, ids and request ids masked) with
// testdata/admin_answers.golden, so a refactoring of the handlers keeps
// every answer byte for byte. -update rewrites the file.
func TestAdminAnswersGolden(t *testing.T) {
	g := newAdminGateway(t)
	p := demoProj
	esc := url.PathEscape
	ifMatch := func(v string) map[string]string { return map[string]string{"If-Match": v} }
	key := map[string]string{api.ServerKeyHeader: testServerKey}
	dir := filepath.Join(t.TempDir(), "extra")
	if err := mi.CreateTable(dir, "things", []byte("table: things\nfields:\n  - name: label\n    type: string\n")); err != nil {
		t.Fatal(err)
	}
	customDef := map[string]any{
		"uri": "notes/by-title", "method": "get", "version": 1, "type": "pg", "schema": "public", "mode": "read",
		"description": "Notes with a title", "roles": []string{"reader"}, "tables": []string{"notes"},
		"params": []any{map[string]any{"name": "title", "type": "string", "required": true, "max_length": 40}},
		"sql":    "SELECT id, title FROM notes WHERE title = :title",
	}
	// customWith is customDef at version 9 with fields changed (nil: left out).
	customWith := func(kv ...any) map[string]any {
		out := maps.Clone(customDef)
		out["version"] = 9
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(out, kv[i].(string))
			} else {
				out[kv[i].(string)] = kv[i+1]
			}
		}
		return out
	}
	rules := func(objects ...string) []any {
		out := []any{}
		for _, o := range objects {
			out = append(out, map[string]any{"object": o, "actions": []string{"read"}})
		}
		return out
	}
	script := []adminCall{
		// Templates.
		{"GET", p + "/templates", nil, nil},
		{"POST", p + "/templates", nil, map[string]any{"name": "t1", "rules": []any{
			map[string]any{"object": "mi/app/notes", "actions": []string{"read"}, "columns": []string{"id", "title"}},
			map[string]any{"object": "mi/app/secret*", "actions": []string{"read", "update"}, "effect": "deny"}}}},
		{"POST", p + "/templates", nil, map[string]any{"name": "t1"}},
		{"POST", p + "/templates", nil, map[string]any{"rules": rules("mi")}},
		{"POST", p + "/templates", nil, map[string]any{"name": "t2", "rulez": 1}},
		{"POST", p + "/templates", nil, map[string]any{"name": "t2", "rules": []any{map[string]any{"object": "mi", "actions": []string{"fly"}}}}},
		{"POST", p + "/templates", nil, `[1]`},
		{"POST", p + "/templates", nil, map[string]any{"name": "t2"}},
		{"GET", p + "/templates/t1", nil, nil},
		{"GET", p + "/templates/nosuch", nil, nil},
		{"PUT", p + "/templates/t1", nil, map[string]any{"rules": rules("mi/app/a", "mi/app/b")}},
		{"PUT", p + "/templates/t1", nil, map[string]any{"name": "other", "rules": rules()}},
		{"PUT", p + "/templates/t1", nil, map[string]any{}},
		{"PUT", p + "/templates/nosuch", nil, map[string]any{"rules": rules()}},
		{"PUT", p + "/templates/t1", ifMatch(`"1"`), map[string]any{"rules": rules()}},
		{"PUT", p + "/templates/t1", ifMatch(`"x"`), map[string]any{"rules": rules()}},
		{"PUT", p + "/templates/t1", nil, map[string]any{"rules": rules(), "version": 1}},
		{"GET", p + "/templates", nil, nil},
		// Bindings.
		{"POST", p + "/bindings", nil, map[string]any{"role": "r1", "templates": []string{"t1"}}},
		{"POST", p + "/bindings", nil, map[string]any{"role": "r1", "templates": []string{"t1"}}},
		{"POST", p + "/bindings", nil, map[string]any{"role": "x", "templates": []string{"nosuch"}}},
		{"POST", p + "/bindings", nil, map[string]any{"role": "x", "templates": []string{}}},
		{"POST", p + "/bindings", nil, map[string]any{"role": "x"}},
		{"POST", p + "/bindings", nil, map[string]any{"templates": []string{"t1"}}},
		{"GET", p + "/bindings/r1", nil, nil},
		{"GET", p + "/bindings/nosuch", nil, nil},
		{"PUT", p + "/bindings/r1", nil, map[string]any{"templates": []string{"t1", "t2"}}},
		{"PUT", p + "/bindings/r1", nil, map[string]any{"role": "r2", "templates": []string{"t1"}}},
		{"PUT", p + "/bindings/r1", nil, map[string]any{}},
		{"PUT", p + "/bindings/nosuch", nil, map[string]any{"templates": []string{"t1"}}},
		{"GET", p + "/bindings", nil, nil},
		{"DELETE", p + "/templates/t1", nil, nil},
		// Locks.
		{"POST", p + "/locks", nil, map[string]any{"object": "mi/app/notes", "mask": "-r--"}},
		{"POST", p + "/locks", nil, map[string]any{"object": "mi/app/notes", "mask": "----"}},
		{"POST", p + "/locks", nil, map[string]any{"object": "mi", "mask": "rw"}},
		{"POST", p + "/locks", nil, map[string]any{"object": "a//b", "mask": "-r--"}},
		{"POST", p + "/locks", nil, map[string]any{"mask": "-r--"}},
		{"POST", p + "/locks", nil, map[string]any{"object": "mi"}},
		{"GET", p + "/locks/" + esc("mi/app/notes"), nil, nil},
		{"GET", p + "/locks/nosuch", nil, nil},
		{"PUT", p + "/locks/" + esc("mi/app/notes"), nil, map[string]any{"mask": "cr--"}},
		{"PUT", p + "/locks/" + esc("mi/app/notes"), nil, map[string]any{"object": "mi", "mask": "cr--"}},
		{"PUT", p + "/locks/" + esc("mi/app/notes"), nil, map[string]any{}},
		{"PUT", p + "/locks/nosuch", nil, map[string]any{"mask": "cr--"}},
		{"GET", p + "/locks", nil, nil},
		{"DELETE", p + "/locks/" + esc("mi/app/notes"), nil, nil},
		{"DELETE", p + "/locks/" + esc("mi/app/notes"), nil, nil},
		// Scopes.
		{"POST", p + "/scopes", nil, map[string]any{"role": "r1", "object": "mi/app/notes", "filter": "title=eq.{identity}"}},
		{"POST", p + "/scopes", nil, map[string]any{"role": "r1", "object": "mi/app/notes", "filter": "title=eq.x"}},
		{"POST", p + "/scopes", nil, map[string]any{"role": "r1", "object": "mi/app/x", "filter": "title=zz.1"}},
		{"POST", p + "/scopes", nil, map[string]any{"role": "r1", "object": "mi/app/x", "filter": "title=eq.{nope}"}},
		{"POST", p + "/scopes", nil, map[string]any{"role": "r1", "object": "mi/app/x"}},
		{"POST", p + "/scopes", nil, map[string]any{"object": "mi/app/x", "filter": "a=eq.1"}},
		{"GET", p + "/scopes/r1/" + esc("mi/app/notes"), nil, nil},
		{"GET", p + "/scopes/r1/" + esc("mi/app/x"), nil, nil},
		{"PUT", p + "/scopes/r1/" + esc("mi/app/notes"), nil, map[string]any{"filter": "title=like.*REST"}},
		{"PUT", p + "/scopes/r1/" + esc("mi/app/notes"), nil, map[string]any{"role": "r2", "filter": "a=eq.1"}},
		{"PUT", p + "/scopes/r1/" + esc("mi/app/notes"), nil, map[string]any{"object": "mi", "filter": "a=eq.1"}},
		{"PUT", p + "/scopes/r1/" + esc("mi/app/notes"), nil, map[string]any{}},
		{"PUT", p + "/scopes/r1/" + esc("mi/app/notes"), nil, map[string]any{"filter": "a=zz.1"}},
		{"PUT", p + "/scopes/r1/" + esc("mi/app/x"), nil, map[string]any{"filter": "a=eq.1"}},
		{"GET", p + "/scopes", nil, nil},
		{"DELETE", p + "/scopes/r1/" + esc("mi/app/notes"), nil, nil},
		{"DELETE", p + "/scopes/r1/" + esc("mi/app/notes"), nil, nil},
		{"DELETE", p + "/bindings/r1", nil, nil},
		{"DELETE", p + "/bindings/r1", nil, nil},
		{"DELETE", p + "/templates/t1", ifMatch(`"1"`), nil},
		{"DELETE", p + "/templates/t1", nil, nil},
		{"DELETE", p + "/templates/t1", nil, nil},
		{"PATCH", p + "/templates/t2", nil, map[string]any{}},
		// Orgs (the server key where only it may), projects, spaces.
		{"GET", "/orgs", nil, nil},
		{"POST", "/orgs", key, map[string]any{"name": "Acme", "abbr": "acme"}},
		{"POST", "/orgs", key, map[string]any{"name": "Acme", "abbr": "acme2"}},
		{"POST", "/orgs", key, map[string]any{"name": "Acme 3"}},
		{"POST", "/orgs", nil, map[string]any{"name": "Beta", "abbr": "beta"}},
		{"GET", "/orgs", key, nil},
		{"GET", "/orgs/acme", key, nil},
		{"GET", "/orgs/acme", nil, nil},
		{"PATCH", "/orgs/acme", key, map[string]any{"name": "Acme Inc"}},
		{"PATCH", "/orgs/acme", key, map[string]any{"abbr": "x"}},
		{"PATCH", "/orgs/demo", nil, map[string]any{}},
		{"POST", "/orgs/acme/projects", key, map[string]any{"name": "Payroll", "abbr": "payroll"}},
		{"POST", "/orgs/acme/projects", key, map[string]any{"name": "Payroll", "abbr": "pay2"}},
		{"POST", "/orgs/acme/projects", key, map[string]any{"abbr": "pay3"}},
		{"GET", "/orgs/acme/projects", key, nil},
		{"GET", "/orgs/acme/projects/payroll", key, nil},
		{"GET", "/orgs/acme/projects/nosuch", key, nil},
		{"PATCH", "/orgs/acme/projects/payroll", key, map[string]any{"name": "Pay"}},
		{"PATCH", "/orgs/acme/projects/payroll", key, map[string]any{"name": 3}},
		{"GET", "/orgs/acme/projects/payroll/spaces", key, nil},
		{"POST", "/orgs/acme/projects/payroll/spaces", key, map[string]any{"name": "main"}},
		{"POST", "/orgs/acme/projects/payroll/spaces", key, map[string]any{"name": "main"}},
		{"POST", "/orgs/acme/projects/payroll/spaces", key, map[string]any{"name": "agents", "mcp": true}},
		{"POST", "/orgs/acme/projects/payroll/spaces", key, map[string]any{"mcp": true}},
		{"GET", "/orgs/acme/projects/payroll/spaces/agents", key, nil},
		{"GET", "/orgs/acme/projects/payroll/spaces/nosuch", key, nil},
		{"PATCH", "/orgs/acme/projects/payroll/spaces/agents", key, map[string]any{"mcp": false}},
		{"PATCH", "/orgs/acme/projects/payroll/spaces/agents", key, map[string]any{"name": "other"}},
		{"PATCH", "/orgs/acme/projects/payroll/spaces/agents", key, map[string]any{"name": "agents", "mcp": false}},
		{"GET", "/orgs/acme/projects/payroll/spaces", key, nil},
		{"DELETE", "/orgs/acme/projects/payroll/spaces/agents", key, nil},
		{"DELETE", "/orgs/acme/projects/payroll/spaces/agents", key, nil},
		{"DELETE", "/orgs/acme", key, nil},
		{"DELETE", "/orgs/acme/projects/payroll", key, nil},
		{"DELETE", "/orgs/acme/projects/payroll", key, nil},
		{"DELETE", "/orgs/demo", nil, nil},
		{"DELETE", "/orgs/acme", key, nil},
		{"GET", "/orgs/acme", key, nil},
		// Databases (a mini-app directory: its path is in no answer).
		{"GET", p + "/databases", nil, nil},
		{"POST", p + "/databases", nil, map[string]any{"type": "zz", "schema": "s", "dsn": "x"}},
		{"POST", p + "/databases", nil, map[string]any{"type": "pg", "schema": "s"}},
		{"POST", p + "/databases", nil, map[string]any{"schema": "s", "dsn": "x"}},
		{"POST", p + "/databases", nil, map[string]any{"type": "pg", "schema": "s", "dsn": "x", "password": "x"}},
		{"POST", p + "/databases", nil, map[string]any{"type": "mi", "schema": "extra", "dsn": dir}},
		{"POST", p + "/databases", key, map[string]any{"type": "mi", "schema": "app", "dsn": dir}},
		{"POST", p + "/databases", key, map[string]any{"type": "mi", "schema": "extra", "dsn": dir + "-missing"}},
		{"POST", p + "/databases", key, map[string]any{"type": "mi", "schema": "extra", "dsn": dir}},
		{"GET", p + "/databases/mi/extra", nil, nil},
		{"GET", p + "/databases/mi/nosuch", nil, nil},
		{"PATCH", p + "/databases/mi/extra", nil, map[string]any{"dsn": dir}},
		{"PATCH", p + "/databases/mi/extra", key, map[string]any{"type": "pg", "dsn": dir}},
		{"PATCH", p + "/databases/mi/extra", key, map[string]any{}},
		{"PATCH", p + "/databases/mi/nosuch", key, map[string]any{"dsn": dir}},
		{"PATCH", p + "/databases/mi/extra", key, map[string]any{"dsn": dir}},
		{"POST", p + "/databases/mi/extra/test", nil, nil},
		{"POST", p + "/databases/mi/nosuch/test", nil, nil},
		{"GET", p + "/databases", nil, nil},
		{"DELETE", p + "/databases/mi/extra", nil, nil},
		{"DELETE", p + "/databases/mi/extra", nil, nil},
		// Custom APIs.
		{"GET", p + "/apis", nil, nil},
		{"POST", p + "/apis", nil, customDef},
		{"POST", p + "/apis", nil, customDef},
		{"POST", p + "/apis", nil, customWith("uri", nil)},
		{"POST", p + "/apis", nil, customWith("method", nil)},
		{"POST", p + "/apis", nil, customWith("version", "one")},
		{"POST", p + "/apis", nil, customWith("sql", "DROP TABLE notes")},
		{"POST", p + "/apis", nil, customWith("statements", []string{"SELECT 1"})},
		{"POST", p + "/apis", nil, customWith("sql", nil)},
		{"POST", p + "/apis", nil, customWith("secret", "x")},
		{"GET", p + "/apis/GET/1/notes/by-title", nil, nil},
		{"GET", p + "/apis/GET/one/notes/by-title", nil, nil},
		{"GET", p + "/apis/GET/2/notes/by-title", nil, nil},
		{"PUT", p + "/apis/GET/1/notes/by-title", nil, customWith("description", "Changed", "version", 1)},
		{"PUT", p + "/apis/GET/1/notes/by-title", nil, customWith("description", "x")},
		{"PUT", p + "/apis/GET/1/notes/by-title", nil, customWith("uri", "other", "version", 1)},
		{"PUT", p + "/apis/GET/1/notes/by-title", nil, customWith("method", "post", "version", 1)},
		{"PUT", p + "/apis/GET/2/notes/by-title", nil, customWith("version", nil)},
		{"PUT", p + "/apis/GET/0/notes/by-title", nil, customWith("version", nil)},
		{"GET", p + "/apis", nil, nil},
		{"DELETE", p + "/apis/GET/1/notes/by-title", nil, nil},
		{"DELETE", p + "/apis/GET/1/notes/by-title", nil, nil},
		{"DELETE", p + "/apis/GET/x/notes/by-title", nil, nil},
		// Wrong project, wrong org.
		{"GET", adm + "/orgs/demo/projects/nosuch/templates", nil, nil},
		{"POST", adm + "/orgs/nosuch/projects/demo/locks", nil, map[string]any{"object": "mi", "mask": "-r--"}},
	}
	var out bytes.Buffer
	for _, c := range script {
		hdr := map[string]string{"LB-Access-Token": g.admin}
		for k, v := range c.hdr {
			hdr[k] = v
		}
		if _, ok := c.hdr[api.ServerKeyHeader]; ok {
			delete(hdr, "LB-Access-Token")
		}
		path := c.path
		if path[0] == '/' && len(path) < len(adm) || path[:len(adm)] != adm {
			path = adm + path
		}
		r := g.send(c.method, path, hdr, c.body)
		body := uuidRE.ReplaceAll(r.body, []byte("<id>"))
		body = requestIDRE.ReplaceAll(body, []byte(`"request_id":"<rid>"`))
		body = stampRE.ReplaceAll(body, []byte(`"$1":"<time>"`))
		body = bytes.ReplaceAll(body, []byte(dir), []byte("<dir>"))
		shown := maps.Clone(c.hdr)
		if _, ok := shown[api.ServerKeyHeader]; ok {
			shown[api.ServerKeyHeader] = "<key>"
		}
		fmt.Fprintf(&out, "%s %s %v\n→ %d ETag=%q Allow=%q\n%s\n", c.method, path[len(adm):], shown, r.status,
			r.header.Get("ETag"), r.header.Get("Allow"), bytes.TrimRight(body, "\n"))
	}
	golden := filepath.Join("testdata", "admin_answers.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		got := bytes.Split(out.Bytes(), []byte("\n"))
		exp := bytes.Split(want, []byte("\n"))
		for i := range max(len(got), len(exp)) {
			var g, e []byte
			if i < len(got) {
				g = got[i]
			}
			if i < len(exp) {
				e = exp[i]
			}
			if !bytes.Equal(g, e) {
				t.Fatalf("answers differ from %s at line %d:\n got %s\nwant %s", golden, i+1, g, e)
			}
		}
	}
}
