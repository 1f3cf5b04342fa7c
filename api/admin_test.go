package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

const (
	adm      = api.AdminPrefix
	demoProj = adm + "/orgs/demo/projects/demo"
	// testServerKey is the server key of the admin tests' gateways.
	testServerKey = "admin-test-server-key-0123456789"
)

// newAdminGateway is a gateway whose server key is testServerKey.
func newAdminGateway(t *testing.T) *gateway {
	t.Helper()
	t.Setenv(api.EnvServerKey, testServerKey)
	return newGateway(t, engine.Config{})
}

// send makes a request with the given headers and a JSON body.
func (g *gateway) send(method, path string, hdr map[string]string, body any) reply {
	g.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			g.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, g.srv.URL+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
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

// withKey calls with the server key.
func (g *gateway) withKey(method, path string, body any) reply {
	g.t.Helper()
	return g.send(method, path, map[string]string{api.ServerKeyHeader: testServerKey}, body)
}

// expectErr checks the status, the error envelope and that the message
// mentions every string of mention.
func expectErr(t *testing.T, r reply, status int, mention ...string) {
	t.Helper()
	expect(t, r, status)
	msg := r.errorMessage(t)
	for _, m := range mention {
		if !strings.Contains(msg, m) {
			t.Fatalf("status %d: message %q lacks %q", status, msg, m)
		}
	}
}

// field returns a top-level field of a JSON object answer as text.
func field(t *testing.T, r reply, name string) string {
	t.Helper()
	return fmt.Sprint(r.json(t)[name])
}

// listed returns the values of one field of every item of a {"data":[…]}
// answer.
func listed(t *testing.T, r reply, name string) []string {
	t.Helper()
	var out []string
	for _, item := range r.data(t) {
		out = append(out, fmt.Sprint(item[name]))
	}
	return out
}

// userToken creates an identity in the demo project and mints its token.
func (g *gateway) userToken(name string, roles ...string) string {
	g.t.Helper()
	ctx := context.Background()
	sp, err := g.st.Space(ctx, g.proj.ID, "main")
	if err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: sp.ID, Name: name, Kind: "user",
		Roles: roles, KeyType: "crud", Enabled: true}); err != nil {
		g.t.Fatal(err)
	}
	return g.mint(name, auth.MintOptions{})
}

// eventually polls check until it holds, for at most 2 s: the time within
// which a change through the store must reach a running server.
func eventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		ok, last := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 2 s; last: %s", what, last)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func TestAdminOrgsAndProjects(t *testing.T) {
	g := newAdminGateway(t)

	// An org admin sees its own org only.
	r := g.do("GET", adm+"/orgs", g.admin, nil)
	expect(t, r, 200)
	if got := listed(t, r, "abbr"); fmt.Sprint(got) != "[demo]" {
		t.Fatalf("orgs for the demo admin: %v", got)
	}
	expect(t, g.do("GET", adm+"/orgs/demo", g.admin, nil), 200)

	// Org creation needs the server key.
	expectErr(t, g.do("POST", adm+"/orgs", g.admin, map[string]any{"name": "Acme", "abbr": "acme"}), 403, "server key", "got [admin]")
	expectErr(t, g.send("POST", adm+"/orgs", map[string]string{api.ServerKeyHeader: "wrong-key-0123456789"}, map[string]any{"name": "Acme", "abbr": "acme"}), 401, "invalid server key")
	expect(t, g.send("POST", adm+"/orgs", nil, map[string]any{"name": "Acme", "abbr": "acme"}), 401)
	r = g.withKey("POST", adm+"/orgs", map[string]any{"name": "Acme", "abbr": "acme"})
	expect(t, r, 201)
	if field(t, r, "abbr") != "acme" || field(t, r, "name") != "Acme" || len(field(t, r, "id")) != 36 {
		t.Fatalf("created org: %s", r.body)
	}
	expectErr(t, g.withKey("POST", adm+"/orgs", map[string]any{"name": "Acme 2", "abbr": "acme"}), 409, "acme")
	expectErr(t, g.withKey("POST", adm+"/orgs", map[string]any{"name": "Acme", "abbr": "acme2"}), 409, "Acme")
	expectErr(t, g.withKey("POST", adm+"/orgs", map[string]any{"name": "No abbr"}), 400, `"abbr" is required`)
	expectErr(t, g.withKey("POST", adm+"/orgs", map[string]any{"name": "Bad", "abbr": "Bad!"}), 400, "abbreviation")
	expectErr(t, g.withKey("POST", adm+"/orgs", map[string]any{"name": "X", "abbr": "x", "owner": "me"}), 400, `unknown field "owner"`)
	expectErr(t, g.withKey("POST", adm+"/orgs", map[string]any{"name": 5, "abbr": "x"}), 400, `field "name" must be a string`)
	expectErr(t, g.withKey("POST", adm+"/orgs", `[{"name":"x"}]`), 400, "JSON object")
	expectErr(t, g.withKey("POST", adm+"/orgs", `{"name":`), 400, "not valid JSON")
	expectErr(t, g.withKey("POST", adm+"/orgs", strings.Repeat(" ", 1<<17)), 413)

	// The operator sees every org; the demo admin does not see acme.
	r = g.withKey("GET", adm+"/orgs", nil)
	expect(t, r, 200)
	if got := listed(t, r, "abbr"); fmt.Sprint(got) != "[acme demo]" {
		t.Fatalf("orgs for the operator: %v", got)
	}
	cross := g.do("GET", adm+"/orgs/acme", g.admin, nil)
	missing := g.do("GET", adm+"/orgs/nosuch", g.admin, nil)
	expectErr(t, cross, 404, `org "acme" not found`)
	expect(t, missing, 404)
	for _, path := range []string{"/orgs/acme/projects", "/orgs/acme/projects/x/identities", "/orgs/acme/projects/x/databases"} {
		expectErr(t, g.do("GET", adm+path, g.admin, nil), 404, `org "acme" not found`)
	}
	expectErr(t, g.do("POST", adm+"/orgs/acme/projects", g.admin, map[string]any{"name": "P", "abbr": "p"}), 404)
	expectErr(t, g.do("PATCH", adm+"/orgs/acme", g.admin, map[string]any{"name": "Mine"}), 404)
	expectErr(t, g.do("DELETE", adm+"/orgs/acme", g.admin, nil), 404)

	// Renaming: the name changes, the abbreviation cannot.
	r = g.do("PATCH", adm+"/orgs/demo", g.admin, map[string]any{"name": "Demo Inc"})
	expect(t, r, 200)
	if field(t, r, "name") != "Demo Inc" || field(t, r, "abbr") != "demo" {
		t.Fatalf("renamed org: %s", r.body)
	}
	expectErr(t, g.do("PATCH", adm+"/orgs/demo", g.admin, map[string]any{"abbr": "demo2"}), 400, `unknown field "abbr"`)
	expectErr(t, g.do("PATCH", adm+"/orgs/demo", g.admin, map[string]any{"name": "Acme"}), 409)
	expectErr(t, g.do("DELETE", adm+"/orgs/demo", g.admin, nil), 403, "server key")

	// Projects.
	r = g.do("POST", adm+"/orgs/demo/projects", g.admin, map[string]any{"name": "Payroll", "abbr": "payroll"})
	expect(t, r, 201)
	if field(t, r, "org") != "demo" || field(t, r, "abbr") != "payroll" {
		t.Fatalf("created project: %s", r.body)
	}
	expectErr(t, g.do("POST", adm+"/orgs/demo/projects", g.admin, map[string]any{"name": "Payroll", "abbr": "pay"}), 409, "Payroll")
	expectErr(t, g.do("POST", adm+"/orgs/demo/projects", g.admin, map[string]any{"name": "Pay", "abbr": "payroll"}), 409, "payroll")
	expectErr(t, g.do("POST", adm+"/orgs/demo/projects", g.admin, map[string]any{"abbr": "p"}), 400, `"name" is required`)
	r = g.do("GET", adm+"/orgs/demo/projects", g.admin, nil)
	// Ordered by name: "Payroll" sorts before "demo".
	if got := listed(t, r, "abbr"); fmt.Sprint(got) != "[payroll demo]" {
		t.Fatalf("projects: %v", got)
	}
	r = g.do("PATCH", adm+"/orgs/demo/projects/payroll", g.admin, map[string]any{"name": "Payroll 2"})
	expect(t, r, 200)
	if field(t, r, "name") != "Payroll 2" {
		t.Fatalf("renamed project: %s", r.body)
	}
	expectErr(t, g.do("GET", adm+"/orgs/demo/projects/nosuch", g.admin, nil), 404, `project "nosuch" not found`)
	// A project with identities cannot go; an empty one goes with its
	// spaces and policy.
	expectErr(t, g.do("DELETE", demoProj, g.admin, nil), 409, "identities", "admin")
	expect(t, g.do("POST", adm+"/orgs/demo/projects/payroll/spaces", g.admin, map[string]any{"name": "s1"}), 201)
	expect(t, g.do("POST", adm+"/orgs/demo/projects/payroll/locks", g.admin, map[string]any{"object": "pg", "mask": "-r--"}), 201)
	expect(t, g.do("DELETE", adm+"/orgs/demo/projects/payroll", g.admin, nil), 204)
	expect(t, g.do("GET", adm+"/orgs/demo/projects/payroll", g.admin, nil), 404)

	// The operator bootstraps the new org through the API: a project, a
	// space, an admin identity and its token. That admin sees acme only.
	expect(t, g.withKey("POST", adm+"/orgs/acme/projects", map[string]any{"name": "Main", "abbr": "main"}), 201)
	expect(t, g.withKey("POST", adm+"/orgs/acme/projects/main/spaces", map[string]any{"name": "ops"}), 201)
	expect(t, g.withKey("POST", adm+"/orgs/acme/projects/main/identities", map[string]any{"name": "root", "space": "ops", "roles": []string{"admin"}}), 201)
	r = g.withKey("POST", adm+"/orgs/acme/projects/main/identities/root/tokens", map[string]any{"ttl": "1h"})
	expect(t, r, 201)
	acmeAdmin := field(t, r, "token")
	r = g.do("GET", adm+"/orgs", acmeAdmin, nil)
	if got := listed(t, r, "abbr"); fmt.Sprint(got) != "[acme]" {
		t.Fatalf("orgs for the acme admin: %v", got)
	}
	expect(t, g.do("GET", adm+"/orgs/demo", acmeAdmin, nil), 404)
	expect(t, g.do("GET", demoProj+"/identities", acmeAdmin, nil), 404)
	expect(t, g.do("GET", adm+"/orgs/acme/projects/main/identities", acmeAdmin, nil), 200)

	// Orgs go only empty, and only with the server key.
	expect(t, g.withKey("POST", adm+"/orgs", map[string]any{"name": "Temp", "abbr": "temp"}), 201)
	expect(t, g.withKey("DELETE", adm+"/orgs/temp", nil), 204)
	expect(t, g.withKey("GET", adm+"/orgs/temp", nil), 404)
	expectErr(t, g.withKey("DELETE", adm+"/orgs/acme", nil), 409, "projects", "main")
}

func TestAdminServerKeyDisabled(t *testing.T) {
	t.Setenv(api.EnvServerKey, "")
	g := newGateway(t, engine.Config{})
	for name, hdr := range map[string]map[string]string{
		"admin token":     {"LB-Access-Token": g.admin},
		"a key":           {api.ServerKeyHeader: testServerKey},
		"no credentials":  nil,
		"garbage on both": {api.ServerKeyHeader: "x", "LB-Access-Token": "y"},
	} {
		r := g.send("POST", adm+"/orgs", hdr, map[string]any{"name": "Acme", "abbr": "acme"})
		if r.status != 403 || !strings.Contains(r.errorMessage(t), "org creation through the API is disabled") {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	// The key is refused everywhere else too; tokens still work.
	expectErr(t, g.send("GET", adm+"/orgs", map[string]string{api.ServerKeyHeader: testServerKey}, nil), 403, "server key is disabled")
	expect(t, g.do("GET", adm+"/orgs", g.admin, nil), 200)

	// A key shorter than the minimum disables it as well.
	t.Setenv(api.EnvServerKey, "short")
	g = newGateway(t, engine.Config{})
	expectErr(t, g.send("POST", adm+"/orgs", map[string]string{api.ServerKeyHeader: "short"}, map[string]any{"name": "A", "abbr": "a"}), 403, "disabled")
}

// adminRoutes walks the router for every route under the admin prefix,
// with its path parameters filled in for the demo project.
func adminRoutes(t *testing.T, h http.Handler) [][2]string {
	t.Helper()
	fill := strings.NewReplacer("{org}", "demo", "{project}", "demo", "{space}", "main", "{identity}", "admin",
		"{role}", "admin", "{template}", "t", "{object}", "pg%2Fpublic", "{type}", "mi", "{schema}", "app", "{id}", "00000000-0000-4000-8000-000000000000")
	var out [][2]string
	err := chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.HasPrefix(route, adm) {
			out = append(out, [2]string{method, fill.Replace(strings.TrimSuffix(route, "/"))})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 40 {
		t.Fatalf("only %d admin routes", len(out))
	}
	return out
}

// TestAdminRefusals sends every admin route unauthenticated, with a
// non-admin token, with a read-only admin token, and with bad tokens.
func TestAdminRefusals(t *testing.T) {
	g := newAdminGateway(t)
	reader := g.userToken("reader", "hr-analyst", "auditor")
	nobody := g.userToken("nobody")
	readOnly := g.mint("admin", auth.MintOptions{KeyType: "-r--"})
	body := map[string]any{}
	for _, rt := range adminRoutes(t, g.srv.Config.Handler) {
		method, path := rt[0], rt[1]
		if strings.HasPrefix(path, api.AdminSessionsPath) {
			continue // the journal has its own test (mcp); it refuses alike
		}
		r := g.send(method, path, nil, body)
		if r.status != 401 {
			t.Errorf("%s %s without credentials: %d %s", method, path, r.status, r.body)
		} else if r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: 401 without WWW-Authenticate", method, path)
		}
		r = g.do(method, path, reader, body)
		if r.status != 403 || r.errorMessage(t) != "insufficient permissions for this operation on this table, got [auditor, hr-analyst]" {
			t.Errorf("%s %s as a non-admin: %d %s", method, path, r.status, r.body)
		}
		r = g.do(method, path, nobody, body)
		if r.status != 403 || !strings.HasSuffix(r.errorMessage(t), "got []") {
			t.Errorf("%s %s without roles: %d %s", method, path, r.status, r.body)
		}
		r = g.do(method, path, "not.a.token", body)
		if r.status != 401 {
			t.Errorf("%s %s with a bad token: %d %s", method, path, r.status, r.body)
		}
		r = g.do(method, path, readOnly, body)
		if method == "GET" {
			if r.status == 401 || r.status == 403 {
				t.Errorf("%s %s with a read-only admin token: %d %s", method, path, r.status, r.body)
			}
		} else if r.status != 403 || !strings.HasSuffix(r.errorMessage(t), "got [admin]") {
			t.Errorf("%s %s with a read-only admin token: %d %s", method, path, r.status, r.body)
		}
	}
	// Nothing was created by the refused calls.
	r := g.do("GET", demoProj+"/identities", g.admin, nil)
	if got := listed(t, r, "name"); fmt.Sprint(got) != "[admin agent nobody reader]" {
		t.Fatalf("identities after refusals: %v", got)
	}
	// Unknown routes and methods under the prefix keep the envelope.
	expectErr(t, g.do("GET", adm+"/nosuch", g.admin, nil), 404)
	r = g.do("PUT", adm+"/orgs", g.admin, body)
	expect(t, r, 405)
}

func TestAdminSpaces(t *testing.T) {
	g := newAdminGateway(t)
	sp := demoProj + "/spaces"
	r := g.do("POST", sp, g.admin, map[string]any{"name": "agents", "mcp": true})
	expect(t, r, 201)
	if field(t, r, "mcp") != "true" || field(t, r, "name") != "agents" {
		t.Fatalf("created space: %s", r.body)
	}
	expect(t, g.do("POST", sp, g.admin, map[string]any{"name": "plain"}), 201)
	expectErr(t, g.do("POST", sp, g.admin, map[string]any{"name": "agents"}), 409, "agents")
	expectErr(t, g.do("POST", sp, g.admin, map[string]any{"mcp": true}), 400, `"name" is required`)
	expectErr(t, g.do("POST", sp, g.admin, map[string]any{"name": "x", "mcp": "yes"}), 400, `field "mcp" must be true or false`)
	expectErr(t, g.do("POST", sp, g.admin, map[string]any{"name": " padded"}), 400, "space name")
	r = g.do("GET", sp, g.admin, nil)
	if got := listed(t, r, "name"); fmt.Sprint(got) != "[agents main plain]" {
		t.Fatalf("spaces: %v", got)
	}
	if field(t, g.do("GET", sp+"/plain", g.admin, nil), "mcp") != "false" {
		t.Fatal("plain space has MCP on")
	}
	// The MCP switch, through the store.
	r = g.do("PATCH", sp+"/plain", g.admin, map[string]any{"mcp": true})
	expect(t, r, 200)
	if field(t, r, "mcp") != "true" {
		t.Fatalf("switched space: %s", r.body)
	}
	if s, _ := g.st.Space(context.Background(), g.proj.ID, "plain"); !s.MCPEnabled {
		t.Fatal("MCP switch not stored")
	}
	expectErr(t, g.do("PATCH", sp+"/plain", g.admin, map[string]any{"name": "renamed"}), 400, "cannot be renamed")
	expectErr(t, g.do("PATCH", sp+"/nosuch", g.admin, map[string]any{"mcp": true}), 404, "nosuch")
	// A space with members stays.
	expectErr(t, g.do("DELETE", sp+"/main", g.admin, nil), 409, "admin", "agent")
	expect(t, g.do("DELETE", sp+"/plain", g.admin, nil), 204)
	expect(t, g.do("GET", sp+"/plain", g.admin, nil), 404)
	expect(t, g.do("DELETE", sp+"/plain", g.admin, nil), 404)
}

func TestAdminIdentities(t *testing.T) {
	g := newAdminGateway(t)
	ids := demoProj + "/identities"

	// Defaults are those of a policy file: user, crud, enabled, no roles.
	r := g.do("POST", ids, g.admin, map[string]any{"name": "alice", "space": "main"})
	expect(t, r, 201)
	m := r.json(t)
	if m["kind"] != "user" || m["key_type"] != "crud" || m["enabled"] != true || fmt.Sprint(m["roles"]) != "[]" || fmt.Sprint(m["claims"]) != "map[]" || m["space"] != "main" {
		t.Fatalf("defaults: %s", r.body)
	}
	r = g.do("POST", ids, g.admin, map[string]any{"name": "bot", "space": "main", "kind": "service", "roles": []string{"etl", "etl"},
		"claims": map[string]any{"dept": 6, "tags": []string{"a"}}, "key_type": "-r--", "enabled": false})
	expect(t, r, 201)
	m = r.json(t)
	if m["kind"] != "service" || fmt.Sprint(m["roles"]) != "[etl]" || m["key_type"] != "-r--" || m["enabled"] != false || fmt.Sprint(m["claims"]) != "map[dept:6 tags:[a]]" {
		t.Fatalf("created: %s", r.body)
	}

	bad := []struct {
		body    any
		status  int
		mention string
	}{
		{map[string]any{"name": "alice", "space": "main"}, 409, `identity "alice" already exists`},
		{map[string]any{"space": "main"}, 400, `"name" is required`},
		{map[string]any{"name": "x"}, 400, `"space" is required`},
		{map[string]any{"name": "x", "space": "nosuch"}, 400, `field "space": no space "nosuch"`},
		{map[string]any{"name": "x", "space": "main", "kind": "robot"}, 400, `identity kind "robot"`},
		{map[string]any{"name": "x", "space": "main", "key_type": "rw"}, 400, `key_type "rw"`},
		{map[string]any{"name": "x", "space": "main", "key_type": "r---"}, 400, `key_type "r---"`},
		{map[string]any{"name": "x", "space": "main", "roles": "admin"}, 400, `field "roles" must be an array`},
		{map[string]any{"name": "x", "space": "main", "roles": []any{1}}, 400, `field "roles[0]" must be a string`},
		{map[string]any{"name": "x", "space": "main", "roles": []string{""}}, 400, "role is empty"},
		{map[string]any{"name": "x", "space": "main", "claims": []string{"a"}}, 400, `field "claims" must be an object`},
		{map[string]any{"name": "x", "space": "main", "claims": map[string]any{"": 1}}, 400, "empty name"},
		{map[string]any{"name": "x", "space": "main", "enabled": "yes"}, 400, `field "enabled"`},
		{map[string]any{"name": "x", "space": "main", "password": "p"}, 400, `unknown field "password" (allowed: name, kind, space, roles, claims, key_type, enabled)`},
	}
	for _, tc := range bad {
		r := g.do("POST", ids, g.admin, tc.body)
		if r.status != tc.status || !strings.Contains(r.errorMessage(t), tc.mention) {
			t.Errorf("%v: %d %s, want %d mentioning %q", tc.body, r.status, r.body, tc.status, tc.mention)
		}
	}

	r = g.do("GET", ids, g.admin, nil)
	if got := listed(t, r, "name"); fmt.Sprint(got) != "[admin agent alice bot]" {
		t.Fatalf("identities: %v", got)
	}
	expectErr(t, g.do("GET", ids+"/nosuch", g.admin, nil), 404, `identity "nosuch" not found`)

	// PATCH changes only what it names.
	r = g.do("PATCH", ids+"/alice", g.admin, map[string]any{"roles": []string{"admin", "hr"}, "claims": map[string]any{"dept": 7}})
	expect(t, r, 200)
	m = r.json(t)
	if fmt.Sprint(m["roles"]) != "[admin hr]" || fmt.Sprint(m["claims"]) != "map[dept:7]" || m["kind"] != "user" || m["enabled"] != true {
		t.Fatalf("patched: %s", r.body)
	}
	expectErr(t, g.do("PATCH", ids+"/alice", g.admin, map[string]any{"name": "alicia"}), 400, "cannot be renamed")
	expectErr(t, g.do("PATCH", ids+"/alice", g.admin, map[string]any{"key_type": "xxxx"}), 400, "key_type")
	expectErr(t, g.do("PATCH", ids+"/alice", g.admin, map[string]any{"space": "nosuch"}), 400, "space")

	// A token minted through the API works; disabling the identity through
	// the API refuses it within 2 s.
	r = g.do("POST", ids+"/alice/tokens", g.admin, map[string]any{"roles": []string{"admin"}, "key_type": "-r--", "ttl": "1h"})
	expect(t, r, 201)
	m = r.json(t)
	if fmt.Sprint(m["roles"]) != "[admin]" || m["key_type"] != "-r--" || m["identity"] != "alice" || m["jti"] == "" {
		t.Fatalf("minted: %s", r.body)
	}
	alice := m["token"].(string)
	expect(t, g.do("GET", auto+"/mi/app/notes?ps=1&pg=0", alice, nil), 200)
	expectErr(t, g.do("POST", ids+"/alice/tokens", g.admin, map[string]any{"roles": []string{"root"}}), 403, "root")
	expectErr(t, g.do("POST", ids+"/alice/tokens", g.admin, map[string]any{"ttl": "forever"}), 400, `"ttl"`)
	expectErr(t, g.do("POST", ids+"/bot/tokens", g.admin, map[string]any{}), 403, "disabled")
	r = g.do("POST", ids+"/agent/tokens", g.admin, nil)
	expect(t, r, 201)
	if m := r.json(t); fmt.Sprint(m["roles"]) != "[admin]" || m["key_type"] != "crud" {
		t.Fatalf("token without a body: %s", r.body)
	}

	expect(t, g.do("PATCH", ids+"/alice", g.admin, map[string]any{"enabled": false}), 200)
	eventually(t, "disabled identity refused", func() (bool, string) {
		r := g.do("GET", auto+"/mi/app/notes?ps=1&pg=0", alice, nil)
		return r.status == 401, fmt.Sprintf("%d %s", r.status, r.body)
	})
	expect(t, g.do("PATCH", ids+"/alice", g.admin, map[string]any{"enabled": true}), 200)
	eventually(t, "re-enabled identity admitted", func() (bool, string) {
		r := g.do("GET", auto+"/mi/app/notes?ps=1&pg=0", alice, nil)
		return r.status == 200, fmt.Sprintf("%d %s", r.status, r.body)
	})
	// Taking the admin role away shuts the admin API for its tokens.
	expect(t, g.do("GET", adm+"/orgs", alice, nil), 200)
	expect(t, g.do("PATCH", ids+"/alice", g.admin, map[string]any{"roles": []string{"hr"}}), 200)
	eventually(t, "revoked admin role refused", func() (bool, string) {
		r := g.do("GET", adm+"/orgs", alice, nil)
		return r.status == 403, fmt.Sprintf("%d %s", r.status, r.body)
	})

	// Delete: the identity and its tokens are gone.
	expect(t, g.do("DELETE", ids+"/alice", g.admin, nil), 204)
	expect(t, g.do("GET", ids+"/alice", g.admin, nil), 404)
	eventually(t, "deleted identity refused", func() (bool, string) {
		r := g.do("GET", auto+"/mi/app/notes?ps=1&pg=0", alice, nil)
		return r.status == 401, fmt.Sprintf("%d %s", r.status, r.body)
	})
	expect(t, g.do("DELETE", ids+"/alice", g.admin, nil), 404)
}

func TestAdminRoles(t *testing.T) {
	g := newAdminGateway(t)
	p := demoProj
	expect(t, g.do("POST", p+"/identities", g.admin, map[string]any{"name": "alice", "space": "main", "roles": []string{"hr"}}), 201)
	expect(t, g.do("POST", p+"/templates", g.admin, map[string]any{"name": "t", "rules": []any{map[string]any{"object": "mi", "actions": []string{"read"}}}}), 201)
	expect(t, g.do("POST", p+"/bindings", g.admin, map[string]any{"role": "viewer", "templates": []string{"t"}}), 201)
	expect(t, g.do("POST", p+"/scopes", g.admin, map[string]any{"role": "hr", "object": "mi/app/notes", "filter": "title=eq.{identity}"}), 201)
	r := g.do("GET", p+"/roles", g.admin, nil)
	expect(t, r, 200)
	if got := listed(t, r, "name"); fmt.Sprint(got) != "[admin hr viewer]" {
		t.Fatalf("roles: %v", got)
	}
	r = g.do("GET", p+"/roles/admin", g.admin, nil)
	if m := r.json(t); m["builtin"] != true || fmt.Sprint(m["identities"]) != "[admin agent]" {
		t.Fatalf("admin role: %s", r.body)
	}
	r = g.do("GET", p+"/roles/hr", g.admin, nil)
	if m := r.json(t); m["builtin"] != false || fmt.Sprint(m["identities"]) != "[alice]" || fmt.Sprint(m["scopes"]) != "[mi/app/notes]" {
		t.Fatalf("hr role: %s", r.body)
	}
	if m := g.do("GET", p+"/roles/viewer", g.admin, nil).json(t); fmt.Sprint(m["templates"]) != "[t]" {
		t.Fatalf("viewer role: %v", m)
	}
	expectErr(t, g.do("GET", p+"/roles/nosuch", g.admin, nil), 404, "nosuch")
	expect(t, g.do("POST", p+"/roles", g.admin, map[string]any{"name": "x"}), 405)
}

func TestAdminPolicy(t *testing.T) {
	g := newAdminGateway(t)
	p := demoProj
	ctx := context.Background()
	reader := g.userToken("reader", "note-reader")
	notes := auto + "/mi/app/notes"

	// Templates.
	tpl := map[string]any{"name": "notes-read", "rules": []any{
		map[string]any{"object": "mi/app/notes", "actions": []string{"read"}, "columns": []string{"id", "title"}},
		map[string]any{"object": "mi/app/secret*", "actions": []string{"read", "update"}, "effect": "deny"},
	}}
	r := g.do("POST", p+"/templates", g.admin, tpl)
	expect(t, r, 201)
	if len(field(t, r, "id")) != 36 || !strings.Contains(string(r.body), `"effect":"allow"`) || !strings.Contains(string(r.body), `"columns":["id","title"]`) {
		t.Fatalf("created template: %s", r.body)
	}
	tplID := field(t, r, "id")
	expectErr(t, g.do("POST", p+"/templates", g.admin, tpl), 409, "notes-read")
	badTemplates := []struct {
		body    any
		mention string
	}{
		{map[string]any{"rules": []any{}}, `"name" is required`},
		{map[string]any{"name": "x", "rules": []any{map[string]any{"object": "mi", "actions": []string{"write"}}}}, `action "write"`},
		{map[string]any{"name": "x", "rules": []any{map[string]any{"object": "mi", "actions": []string{}}}}, "no actions"},
		{map[string]any{"name": "x", "rules": []any{map[string]any{"object": "a/b/c/d", "actions": []string{"read"}}}}, "at most three segments"},
		{map[string]any{"name": "x", "rules": []any{map[string]any{"object": "mi", "actions": []string{"read"}, "columns": []string{}}}}, "column list is empty"},
		{map[string]any{"name": "x", "rules": []any{map[string]any{"object": "mi", "actions": []string{"read"}, "effect": "maybe"}}}, `effect "maybe"`},
		{map[string]any{"name": "x", "rules": []any{map[string]any{"object": "mi", "actions": []string{"read"}, "colums": []string{"a"}}}}, `unknown field "rules[0].colums"`},
		{map[string]any{"name": "x", "rules": map[string]any{}}, `field "rules" must be an array`},
	}
	for _, tc := range badTemplates {
		r := g.do("POST", p+"/templates", g.admin, tc.body)
		if r.status != 400 || !strings.Contains(r.errorMessage(t), tc.mention) {
			t.Errorf("%v: %d %s, want 400 mentioning %q", tc.body, r.status, r.body, tc.mention)
		}
	}

	// Bindings: binding the template grants the reader within 2 s.
	expect(t, g.do("GET", notes+"?ps=5&pg=0", reader, nil), 404)
	r = g.do("POST", p+"/bindings", g.admin, map[string]any{"role": "note-reader", "templates": []string{"notes-read"}})
	expect(t, r, 201)
	eventually(t, "binding reaches the engine", func() (bool, string) {
		r := g.do("GET", notes+"?ps=5&pg=0", reader, nil)
		return r.status == 200, fmt.Sprintf("%d %s", r.status, r.body)
	})
	if row := g.do("GET", notes+"?ps=1&pg=0", reader, nil).data(t)[0]; len(row) != 2 {
		t.Fatalf("column list not applied: %v", row)
	}
	expectErr(t, g.do("POST", p+"/bindings", g.admin, map[string]any{"role": "note-reader", "templates": []string{"notes-read"}}), 409, "note-reader")
	expectErr(t, g.do("POST", p+"/bindings", g.admin, map[string]any{"role": "x", "templates": []string{"nosuch"}}), 400, `unknown template "nosuch"`)
	expectErr(t, g.do("POST", p+"/bindings", g.admin, map[string]any{"role": "x", "templates": []string{}}), 400, "names no template")
	expectErr(t, g.do("POST", p+"/bindings", g.admin, map[string]any{"role": "x"}), 400, `"templates" is required`)
	expectErr(t, g.do("DELETE", p+"/templates/notes-read", g.admin, nil), 409, "note-reader")

	// Replacing a template keeps its id; the new rules reach the engine.
	r = g.do("PUT", p+"/templates/notes-read", g.admin, map[string]any{"rules": []any{
		map[string]any{"object": "mi/app/notes", "actions": []string{"read"}},
	}})
	expect(t, r, 200)
	if field(t, r, "id") != tplID {
		t.Fatalf("template id changed: %s", r.body)
	}
	eventually(t, "replaced template reaches the engine", func() (bool, string) {
		r := g.do("GET", notes+"?ps=1&pg=0", reader, nil)
		return r.status == 200 && len(r.data(t)[0]) > 2, fmt.Sprintf("%d %s", r.status, r.body)
	})
	expectErr(t, g.do("PUT", p+"/templates/notes-read", g.admin, map[string]any{"name": "other", "rules": []any{}}), 400, `"other"`)
	expectErr(t, g.do("PUT", p+"/templates/notes-read", g.admin, map[string]any{}), 400, `"rules" is required`)
	expectErr(t, g.do("PUT", p+"/templates/nosuch", g.admin, map[string]any{"rules": []any{}}), 404)
	expect(t, g.do("POST", p+"/templates", g.admin, map[string]any{"name": "spare"}), 201)
	r = g.do("PUT", p+"/bindings/note-reader", g.admin, map[string]any{"templates": []string{"notes-read", "spare"}})
	expect(t, r, 200)
	if field(t, r, "templates") != "[notes-read spare]" {
		t.Fatalf("binding: %s", r.body)
	}
	expect(t, g.do("GET", p+"/bindings/note-reader", g.admin, nil), 200)
	expectErr(t, g.do("GET", p+"/bindings/nosuch", g.admin, nil), 404, "nosuch")
	r = g.do("GET", p+"/templates", g.admin, nil)
	if got := listed(t, r, "name"); fmt.Sprint(got) != "[notes-read spare]" {
		t.Fatalf("templates: %v", got)
	}

	// Scopes: filters are checked like `minimal apply` checks them.
	badScopes := []struct {
		filter, mention string
	}{
		{"title", "not column=op.value"},
		{"title=zz.1", `unknown operator "zz"`},
		{"title=eq.{nosuch}", "unknown variable {nosuch}"},
		{"ps=eq.1", "reserved"},
		{"title=eq.a&&body=eq.b", "empty term"},
	}
	for _, tc := range badScopes {
		r := g.do("POST", p+"/scopes", g.admin, map[string]any{"role": "note-reader", "object": "mi/app/notes", "filter": tc.filter})
		if r.status != 400 || !strings.Contains(r.errorMessage(t), `field "filter"`) || !strings.Contains(r.errorMessage(t), tc.mention) {
			t.Errorf("filter %q: %d %s, want 400 mentioning %q", tc.filter, r.status, r.body, tc.mention)
		}
	}
	expectErr(t, g.do("POST", p+"/scopes", g.admin, map[string]any{"role": "note-reader", "object": "mi/app/notes"}), 400, `"filter" is required`)
	r = g.do("POST", p+"/scopes", g.admin, map[string]any{"role": "note-reader", "object": "mi/app/notes", "filter": "title=eq.Tokens"})
	expect(t, r, 201)
	eventually(t, "scope reaches the engine", func() (bool, string) {
		r := g.do("GET", notes+"?ps=10&pg=0", reader, nil)
		return r.status == 200 && len(r.data(t)) == 1, fmt.Sprintf("%d %s", r.status, r.body)
	})
	expectErr(t, g.do("POST", p+"/scopes", g.admin, map[string]any{"role": "note-reader", "object": "mi/app/notes", "filter": "title=eq.x"}), 409)
	scope := p + "/scopes/note-reader/" + url.PathEscape("mi/app/notes")
	if !strings.Contains(scope, "%2F") {
		t.Fatalf("object not escaped: %s", scope)
	}
	r = g.do("GET", scope, g.admin, nil)
	if field(t, r, "filter") != "title=eq.Tokens" {
		t.Fatalf("scope: %s", r.body)
	}
	r = g.do("PUT", scope, g.admin, map[string]any{"filter": "title=like.*REST"})
	expect(t, r, 200)
	expectErr(t, g.do("PUT", scope, g.admin, map[string]any{"filter": "title=eq.{claims}"}), 400, `field "filter"`)
	expectErr(t, g.do("PUT", scope, g.admin, map[string]any{"object": "mi", "filter": "title=eq.1"}), 400, `"mi"`)
	expectErr(t, g.do("GET", p+"/scopes/note-reader/"+url.PathEscape("mi/app/x"), g.admin, nil), 404)
	if got := listed(t, g.do("GET", p+"/scopes", g.admin, nil), "filter"); fmt.Sprint(got) != "[title=like.*REST]" {
		t.Fatalf("scopes: %v", got)
	}
	expect(t, g.do("DELETE", scope, g.admin, nil), 204)
	expect(t, g.do("DELETE", scope, g.admin, nil), 404)

	// Locks: a lock added through the API refuses a write within 2 s.
	expect(t, g.do("POST", notes, g.admin, map[string]any{"title": "before the lock"}), 201)
	r = g.do("POST", p+"/locks", g.admin, map[string]any{"object": "mi/app/notes", "mask": "-r--"})
	expect(t, r, 201)
	if len(field(t, r, "id")) != 36 || field(t, r, "mask") != "-r--" {
		t.Fatalf("lock: %s", r.body)
	}
	eventually(t, "lock refuses a write", func() (bool, string) {
		r := g.do("POST", notes, g.admin, map[string]any{"title": "after the lock"})
		return r.status == 403, fmt.Sprintf("%d %s", r.status, r.body)
	})
	expect(t, g.do("GET", notes+"?ps=1&pg=0", g.admin, nil), 200)
	expectErr(t, g.do("POST", p+"/locks", g.admin, map[string]any{"object": "mi/app/notes", "mask": "----"}), 409, "mi/app/notes")
	expectErr(t, g.do("POST", p+"/locks", g.admin, map[string]any{"object": "mi", "mask": "rw"}), 400, "mask")
	expectErr(t, g.do("POST", p+"/locks", g.admin, map[string]any{"object": "a//b", "mask": "-r--"}), 400, "empty segment")
	expectErr(t, g.do("POST", p+"/locks", g.admin, map[string]any{"mask": "-r--"}), 400, `"object" is required`)
	lock := p + "/locks/" + url.PathEscape("mi/app/notes")
	r = g.do("PUT", lock, g.admin, map[string]any{"mask": "cr--"})
	expect(t, r, 200)
	eventually(t, "changed lock admits inserts", func() (bool, string) {
		r := g.do("POST", notes, g.admin, map[string]any{"title": "append-only"})
		return r.status == 201, fmt.Sprintf("%d %s", r.status, r.body)
	})
	expect(t, g.do("DELETE", notes+"?title=eq.append-only", g.admin, nil), 403)
	if field(t, g.do("GET", lock, g.admin, nil), "mask") != "cr--" {
		t.Fatal("lock mask not changed")
	}
	expect(t, g.do("DELETE", lock, g.admin, nil), 204)
	eventually(t, "removed lock admits deletes", func() (bool, string) {
		r := g.do("DELETE", notes+"?title=eq.append-only", g.admin, nil)
		return r.status == 200, fmt.Sprintf("%d %s", r.status, r.body)
	})
	expect(t, g.do("GET", lock, g.admin, nil), 404)

	// What the API wrote is what the store holds, and what apply checks.
	pol, err := g.st.Policy(ctx, g.proj.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CheckPolicy(pol); err != nil {
		t.Fatal(err)
	}
	if len(pol.Templates) != 2 || len(pol.Bindings) != 1 || len(pol.Scopes) != 0 || len(pol.Locks) != 0 {
		t.Fatalf("stored policy: %+v", pol)
	}

	// Unbinding and deleting.
	expect(t, g.do("DELETE", p+"/bindings/note-reader", g.admin, nil), 204)
	eventually(t, "unbound role loses the table", func() (bool, string) {
		r := g.do("GET", notes+"?ps=1&pg=0", reader, nil)
		return r.status == 404, fmt.Sprintf("%d %s", r.status, r.body)
	})
	expect(t, g.do("DELETE", p+"/templates/notes-read", g.admin, nil), 204)
	expect(t, g.do("DELETE", p+"/templates/notes-read", g.admin, nil), 404)
}

// secretWatch remembers every answer of a test and fails if one contains
// a secret.
type secretWatch struct {
	t       *testing.T
	secrets []string
	seen    int
}

func (s *secretWatch) check(r reply) reply {
	s.t.Helper()
	s.seen++
	for _, sec := range s.secrets {
		if strings.Contains(string(r.body), sec) {
			s.t.Fatalf("answer %d contains the secret %q: %s", s.seen, sec, r.body)
		}
		for _, vs := range r.header {
			for _, v := range vs {
				if strings.Contains(v, sec) {
					s.t.Fatalf("a header of answer %d contains the secret %q", s.seen, sec)
				}
			}
		}
	}
	return r
}

func TestAdminDatabasesSecretsNeverEchoed(t *testing.T) {
	g := newAdminGateway(t)
	dbs := demoProj + "/databases"
	const password = "Pa55-w0rd-Never-Echoed"
	badDSNs := []string{
		"postgres://ops:" + password + "@127.0.0.1:1/x?sslmode=disable&connect_timeout=2",
		"host=127.0.0.1 port=1 user=ops password=" + password + " dbname=x connect_timeout=2",
		"postgres://ops:" + password + "@[::1:bad/x",
	}
	w := &secretWatch{t: t, secrets: append([]string{password, url.QueryEscape(password)}, badDSNs...)}

	// A failed connection test refuses the registration and names nothing
	// of the DSN.
	for _, dsn := range badDSNs {
		r := w.check(g.do("POST", dbs, g.admin, map[string]any{"type": "pg", "schema": "public", "dsn": dsn}))
		expectErr(t, r, 400, "connection test of pg/public failed")
		if c := r.json(t)["error"].(map[string]any)["code"]; c != api.CodeConnectionTest {
			t.Fatalf("code %v: %s", c, r.body)
		}
	}
	if got := listed(t, w.check(g.do("GET", dbs, g.admin, nil)), "schema"); fmt.Sprint(got) != "[app]" {
		t.Fatalf("a refused database was registered: %v", got)
	}
	for _, tc := range []struct {
		body    any
		status  int
		mention string
	}{
		{map[string]any{"type": "zz", "schema": "s", "dsn": "x"}, 400, `unknown database type "zz"`},
		{map[string]any{"type": "pg", "schema": "s"}, 400, `"dsn" is required`},
		{map[string]any{"schema": "s", "dsn": "x"}, 400, `"type" is required`},
		{map[string]any{"type": "pg", "dsn": "x"}, 400, `"schema" is required`},
		{map[string]any{"type": "pg", "schema": "s", "dsn": badDSNs[0], "password": password}, 400, `unknown field "password"`},
		{map[string]any{"type": "mi", "schema": "app", "dsn": "/tmp"}, 403, "server key"},
	} {
		r := w.check(g.do("POST", dbs, g.admin, tc.body))
		if r.status != tc.status || !strings.Contains(r.errorMessage(t), tc.mention) {
			t.Errorf("%v: %d %s, want %d mentioning %q", tc.body, r.status, r.body, tc.status, tc.mention)
		}
	}

	expectErr(t, w.check(g.withKey("POST", dbs, map[string]any{"type": "mi", "schema": "app", "dsn": "/tmp"})), 409, "already registered")

	// A mini-app directory: only the operator hands one out.
	dir := filepath.Join(t.TempDir(), "secret-dir-name")
	if err := mi.CreateTable(dir, "things", []byte("table: things\nfields:\n  - name: label\n    type: string\n")); err != nil {
		t.Fatal(err)
	}
	w.secrets = append(w.secrets, dir)
	expectErr(t, w.check(g.do("POST", dbs, g.admin, map[string]any{"type": "mi", "schema": "extra", "dsn": dir})), 403, "server key")
	expectErr(t, w.check(g.withKey("POST", dbs, map[string]any{"type": "mi", "schema": "extra", "dsn": dir + "-missing"})), 400, "connection test")
	r := w.check(g.withKey("POST", dbs, map[string]any{"type": "mi", "schema": "extra", "dsn": dir}))
	expect(t, r, 201)
	m := r.json(t)
	if m["type"] != "mi" || m["schema"] != "extra" || len(fmt.Sprint(m["id"])) != 36 || m["created_at"] == nil || m["dsn"] != nil || len(m) != 5 {
		t.Fatalf("registered: %s", r.body)
	}
	eventually(t, "registered database serves", func() (bool, string) {
		r := w.check(g.do("GET", auto+"/mi/extra/things?ps=1&pg=0", g.admin, nil))
		return r.status == 200, fmt.Sprintf("%d %s", r.status, r.body)
	})
	r = w.check(g.do("GET", dbs+"/mi/extra", g.admin, nil))
	expect(t, r, 200)
	if _, ok := r.json(t)["dsn"]; ok {
		t.Fatalf("get answers a dsn: %s", r.body)
	}
	r = w.check(g.do("GET", dbs, g.admin, nil))
	if got := listed(t, r, "schema"); fmt.Sprint(got) != "[app extra]" || strings.Contains(string(r.body), "dsn") {
		t.Fatalf("list: %s", r.body)
	}
	r = w.check(g.do("POST", dbs+"/mi/extra/test", g.admin, nil))
	expect(t, r, 200)
	if field(t, r, "status") != "ok" {
		t.Fatalf("test: %s", r.body)
	}
	expectErr(t, w.check(g.do("PATCH", dbs+"/mi/extra", g.admin, map[string]any{"dsn": dir})), 403, "server key")
	expectErr(t, w.check(g.withKey("PATCH", dbs+"/mi/extra", map[string]any{"dsn": dir + "-missing"})), 400, "connection test")
	expectErr(t, w.check(g.withKey("PATCH", dbs+"/mi/extra", map[string]any{"type": "pg", "dsn": dir})), 400, "cannot change")
	expect(t, w.check(g.withKey("PATCH", dbs+"/mi/extra", map[string]any{"dsn": dir})), 200)
	expectErr(t, w.check(g.do("GET", dbs+"/mi/nosuch", g.admin, nil)), 404)
	expect(t, w.check(g.do("DELETE", dbs+"/mi/extra", g.admin, nil)), 204)
	eventually(t, "removed database is gone", func() (bool, string) {
		r := w.check(g.do("GET", auto+"/mi/extra/things?ps=1&pg=0", g.admin, nil))
		return r.status == 404, fmt.Sprintf("%d %s", r.status, r.body)
	})
	expect(t, w.check(g.do("DELETE", dbs+"/mi/extra", g.admin, nil)), 404)
	if w.seen < 20 {
		t.Fatalf("only %d answers checked", w.seen)
	}
}

// TestAdminPostgresDatabase registers the test PostgreSQL through the API:
// a connection test, then the Auto API serves it; the DSN, its password
// and a marker planted in it appear in no answer.
func TestAdminPostgresDatabase(t *testing.T) {
	dsn := pgDSN(t)
	g := newAdminGateway(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("admintest_%d_%d", os.Getpid(), rand.Uint32())
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.Background())
	})
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema+`; CREATE TABLE `+schema+`.items (id serial PRIMARY KEY, name text NOT NULL);
INSERT INTO `+schema+`.items (name) VALUES ('one'), ('two');`); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("mk%d", rand.Uint64())
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	full := dsn + sep + "application_name=" + marker
	secrets := []string{full, dsn, marker}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			// The test password may be a common word: look for it as the
			// DSN writes it, next to the user name.
			secrets = append(secrets, u.User.Username()+":"+pw+"@")
		}
	}
	w := &secretWatch{t: t, secrets: secrets}
	dbs := demoProj + "/databases"

	r := w.check(g.do("POST", dbs, g.admin, map[string]any{"type": "pg", "schema": schema, "dsn": full}))
	expect(t, r, 201)
	if m := r.json(t); m["schema"] != schema || m["type"] != "pg" || len(m) != 5 {
		t.Fatalf("registered: %s", r.body)
	}
	expectErr(t, w.check(g.do("POST", dbs, g.admin, map[string]any{"type": "pg", "schema": schema, "dsn": full})), 409, "already registered")
	eventually(t, "registered database serves", func() (bool, string) {
		r := w.check(g.do("GET", auto+"/pg/"+schema+"/items?ps=10&pg=0&oy=id.as", g.admin, nil))
		return r.status == 200 && len(r.data(t)) == 2, fmt.Sprintf("%d %s", r.status, r.body)
	})
	w.check(g.do("GET", dbs, g.admin, nil))
	w.check(g.do("GET", dbs+"/pg/"+schema, g.admin, nil))
	expect(t, w.check(g.do("POST", dbs+"/pg/"+schema+"/test", g.admin, nil)), 200)

	// A DSN change that fails its test leaves the database as it was.
	bad := "postgres://ops:" + marker + "@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"
	w.secrets = append(w.secrets, bad)
	expectErr(t, w.check(g.do("PATCH", dbs+"/pg/"+schema, g.admin, map[string]any{"dsn": bad})), 400, "connection test")
	stored, err := g.st.Database(ctx, g.proj.ID, "pg", schema)
	if err != nil || stored.DSN != full {
		t.Fatalf("DSN changed by a failed update: %v", err)
	}
	r = w.check(g.do("PATCH", dbs+"/pg/"+schema, g.admin, map[string]any{"dsn": dsn}))
	expect(t, r, 200)
	if stored, _ := g.st.Database(ctx, g.proj.ID, "pg", schema); stored.DSN != dsn {
		t.Fatal("DSN not replaced")
	}
	expect(t, w.check(g.do("GET", auto+"/pg/"+schema+"/items?ps=10&pg=0", g.admin, nil)), 200)

	expect(t, w.check(g.do("DELETE", dbs+"/pg/"+schema, g.admin, nil)), 204)
	if got := listed(t, w.check(g.do("GET", dbs, g.admin, nil)), "schema"); slices.Contains(got, schema) {
		t.Fatalf("still listed: %v", got)
	}
}

func TestAdminCustomAPIs(t *testing.T) {
	g := newAdminGateway(t)
	apis := demoProj + "/apis"
	def := map[string]any{
		"uri": "notes/by-title", "method": "get", "version": 1, "type": "pg", "schema": "public", "mode": "read",
		"description": "Notes with a title", "roles": []string{"reader"}, "tables": []string{"notes"},
		"params": []any{map[string]any{"name": "title", "type": "string", "required": true, "max_length": 40}},
		"sql":    "SELECT id, title FROM notes WHERE title = :title",
	}
	r := g.do("POST", apis, g.admin, def)
	expect(t, r, 201)
	m := r.json(t)
	if m["method"] != "GET" || m["uri"] != "notes/by-title" || fmt.Sprint(m["version"]) != "1" || m["sql"] == nil || len(fmt.Sprint(m["id"])) != 36 {
		t.Fatalf("created: %s", r.body)
	}
	expectErr(t, g.do("POST", apis, g.admin, def), 409, "GET notes/by-title v1")

	with := func(k string, v any) map[string]any {
		out := map[string]any{}
		for kk, vv := range def {
			out[kk] = vv
		}
		out["version"] = 9
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		body    map[string]any
		mention string
	}{
		{with("uri", nil), `"uri" is required`},
		{with("version", "one"), `field "version" must be an integer`},
		{with("sql", "DROP TABLE notes"), "SELECT"},
		{with("sql", "SELECT 1 FROM notes WHERE title = :nosuch"), "nosuch"},
		{with("statements", []string{"SELECT 1"}), "not both"},
		{with("sql", nil), `"sql"`},
		{with("params", []any{map[string]any{"name": "title", "type": "string", "min": "low"}}), `field "params[0].min" must be a number`},
		{with("params", []any{map[string]any{"name": "title", "type": "blob"}}), "blob"},
		{with("secret", "x"), `unknown field "secret"`},
		{with("mode", "write"), "GET"},
	} {
		r := g.do("POST", apis, g.admin, tc.body)
		if r.status != 400 || !strings.Contains(r.errorMessage(t), tc.mention) {
			t.Errorf("%v: %d %s, want 400 mentioning %q", tc.body, r.status, r.body, tc.mention)
		}
	}

	item := apis + "/GET/1/notes/by-title"
	r = g.do("GET", item, g.admin, nil)
	expect(t, r, 200)
	if field(t, r, "description") != "Notes with a title" {
		t.Fatalf("get: %s", r.body)
	}
	put := with("description", "Changed")
	put["version"] = 1
	r = g.do("PUT", item, g.admin, put)
	expect(t, r, 200)
	if field(t, r, "description") != "Changed" || field(t, r, "id") != fmt.Sprint(m["id"]) {
		t.Fatalf("put: %s", r.body)
	}
	expectErr(t, g.do("PUT", item, g.admin, with("description", "x")), 400, `field "version" is 9`)
	expectErr(t, g.do("PUT", apis+"/GET/2/notes/by-title", g.admin, with("version", nil)), 404)
	expectErr(t, g.do("GET", apis+"/GET/one/notes/by-title", g.admin, nil), 400, "version")
	if got := listed(t, g.do("GET", apis, g.admin, nil), "uri"); fmt.Sprint(got) != "[notes/by-title]" {
		t.Fatalf("list: %v", got)
	}
	// The definition is what callers of the project are offered.
	r = g.do("GET", api.CustomPrefix+"/demo/demo", g.admin, nil)
	expect(t, r, 200)
	if !strings.Contains(string(r.body), "notes/by-title") {
		t.Fatalf("custom listing: %s", r.body)
	}
	expect(t, g.do("DELETE", item, g.admin, nil), 204)
	expect(t, g.do("GET", item, g.admin, nil), 404)
	expect(t, g.do("DELETE", item, g.admin, nil), 404)
}
