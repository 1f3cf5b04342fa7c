package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// listing decodes a discovery answer: database -> table -> actions.
func listing(t *testing.T, r reply) map[string]map[string][]string {
	t.Helper()
	expect(t, r, 200)
	var body struct {
		Data []struct {
			Type, Schema string
			Tables       []struct {
				Table   string
				Actions []string
			}
			Error *struct{ Code, Message string }
		}
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("listing is not JSON: %v: %s", err, r.body)
	}
	if body.Data == nil {
		t.Fatalf("listing without data: %s", r.body)
	}
	out := map[string]map[string][]string{}
	for _, d := range body.Data {
		if d.Error != nil {
			t.Fatalf("database %s/%s listed with an error: %s", d.Type, d.Schema, r.body)
		}
		m := map[string][]string{}
		for _, tb := range d.Tables {
			m[tb.Table] = tb.Actions
		}
		out[d.Type+"/"+d.Schema] = m
	}
	return out
}

// tableListing decodes a database's listing: table -> actions.
func tableListing(t *testing.T, r reply, typ, schema string) map[string][]string {
	t.Helper()
	expect(t, r, 200)
	m := map[string][]string{}
	for _, row := range r.data(t) {
		if row["type"] != typ || row["schema"] != schema {
			t.Fatalf("entry of another database: %v", row)
		}
		var acts []string
		for _, a := range row["actions"].([]any) {
			acts = append(acts, a.(string))
		}
		m[row["table"].(string)] = acts
	}
	return m
}

var requestIDField = regexp.MustCompile(`"request_id":"[^"]*"`)

// sameAnswer reports whether two answers are the same but for the request id.
func sameAnswer(a, b reply) bool {
	return a.status == b.status && requestIDField.ReplaceAllString(string(a.body), "") == requestIDField.ReplaceAllString(string(b.body), "")
}

type described struct {
	Actions    []string `json:"actions"`
	RowScoped  []string `json:"row_scoped"`
	PrimaryKey []string `json:"primary_key"`
	Columns    []struct {
		Name, Type, Kind string
		Nullable         bool
		PrimaryKey       bool `json:"primary_key"`
		HasDefault       bool `json:"has_default"`
		Actions          []string
	} `json:"columns"`
}

func describe(t *testing.T, r reply) described {
	t.Helper()
	expect(t, r, 200)
	var d described
	if err := json.Unmarshal(r.body, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d described) names() []string {
	var out []string
	for _, c := range d.Columns {
		out = append(out, c.Name)
	}
	return out
}

const crud = "[read create update delete]"

// TestDiscovery lists databases and tables and describes tables over
// HTTP, for callers with every right, some, a column limit, none, and a
// token of another project: what a caller may not see is absent, and a
// hidden table's description answers the 404 of a missing one.
func TestDiscovery(t *testing.T) {
	f := newPermFixture(t)
	pgDB := "pg/" + f.schema
	base := auto + "/" + pgDB

	// admin sees every table; the append-only lock takes update and
	// delete on audit_log even from admin.
	all := listing(t, f.do("GET", auto, f.admin, nil))
	want := map[string]string{"audit_log": "[read create]", "departments": crud, "employees": crud, "salaries": crud}
	if len(all[pgDB]) != len(want) {
		t.Fatalf("admin sees %v", all)
	}
	for tb, acts := range want {
		if got := fmtList(all[pgDB][tb]); got != acts {
			t.Errorf("admin on %s: %s, want %s", tb, got, acts)
		}
	}
	if fmtList(all["mi/app"]["tasks"]) != crud {
		t.Errorf("admin mi/app: %v", all["mi/app"])
	}

	// alice: read-only, column-limited, salaries hidden, no mi table.
	alice := f.tokens["alice"]
	got := listing(t, f.do("GET", auto, alice, nil))
	if len(got) != 1 || fmtMap(got[pgDB]) != "audit_log:[read] departments:[read] employees:[read]" {
		t.Fatalf("alice sees %v", got)
	}
	if tl := tableListing(t, f.do("GET", base, alice, nil), "pg", f.schema); fmtMap(tl) != fmtMap(got[pgDB]) {
		t.Errorf("alice's database listing %v differs from the project listing %v", tl, got[pgDB])
	}
	d := describe(t, f.do("GET", base+"/employees/_describe", alice, nil))
	if fmtList(d.names()) != "[id full_name department_id]" || fmtList(d.Actions) != "[read]" ||
		fmtList(d.RowScoped) != "[read]" || fmtList(d.PrimaryKey) != "[id]" {
		t.Fatalf("alice's employees: %+v", d)
	}
	if c := d.Columns[0]; c.Type != "integer" || c.Kind != "integer" || c.Nullable || !c.PrimaryKey || !c.HasDefault || fmtList(c.Actions) != "[read]" {
		t.Errorf("alice's id column: %+v", c)
	}
	if c := d.Columns[2]; !c.Nullable || c.PrimaryKey || c.HasDefault {
		t.Errorf("alice's department_id column: %+v", c)
	}
	for _, hidden := range []string{"salary", "owner", "salaries"} {
		for _, path := range []string{auto, base, base + "/employees/_describe"} {
			if r := f.do("GET", path, alice, nil); strings.Contains(string(r.body), hidden) {
				t.Errorf("alice sees %q at %s: %s", hidden, path, r.body)
			}
		}
	}

	// A hidden table's description is exactly a missing table's, and
	// exactly what reading it answers.
	missing := f.do("GET", base+"/nosuch/_describe", alice, nil)
	expect(t, missing, 404)
	for _, path := range []string{base + "/salaries/_describe", auto + "/pg/nosuchschema/employees/_describe", base + "/salaries?ps=1&pg=0"} {
		if r := f.do("GET", path, alice, nil); !sameAnswer(r, missing) {
			t.Errorf("%s: %d %s, want the missing table's %s", path, r.status, r.body, missing.body)
		}
	}

	// frank's role grants four columns for every action, scoped.
	d = describe(t, f.do("GET", base+"/employees/_describe", f.tokens["frank"], nil))
	if fmtList(d.names()) != "[id full_name department_id owner]" || fmtList(d.Actions) != crud || fmtList(d.RowScoped) != crud {
		t.Fatalf("frank's employees: %+v", d)
	}
	for _, c := range d.Columns {
		if fmtList(c.Actions) != crud {
			t.Errorf("frank's %s: %v", c.Name, c.Actions)
		}
	}

	// A read-only token of bob (hr-manager, every action) holds read only.
	ro := f.mint("bob", auth.MintOptions{KeyType: "-r--"})
	if got := listing(t, f.do("GET", auto, ro, nil)); fmtMap(got[pgDB]) != "employees:[read]" {
		t.Errorf("read-only bob sees %v", got)
	}

	// No rights: empty listings, and every description a missing table's.
	zed := f.tokens["zed"]
	if r := f.do("GET", auto, zed, nil); string(r.body) != "{\"data\":[]}\n" {
		t.Errorf("zed's project listing: %d %s", r.status, r.body)
	}
	if tl := tableListing(t, f.do("GET", base, zed, nil), "pg", f.schema); len(tl) != 0 {
		t.Errorf("zed's database listing: %v", tl)
	}
	zmissing := f.do("GET", base+"/nosuch/_describe", zed, nil)
	if r := f.do("GET", base+"/employees/_describe", zed, nil); !sameAnswer(r, zmissing) || r.status != 404 {
		t.Errorf("zed describes employees: %d %s", r.status, r.body)
	}

	// An unregistered database is a 404 for everyone.
	expect(t, f.do("GET", auto+"/pg/nosuchschema", f.admin, nil), 404)

	// A token of another project: 400 on every discovery route; no token: 401.
	olgaTok := f.otherProjectAdmin()
	for _, path := range []string{auto, auto + "/openapi.json", base, base + "/employees/_describe"} {
		r := f.do("GET", path, olgaTok, nil)
		expect(t, r, 400)
		if !strings.Contains(r.errorMessage(t), "do not match the token") {
			t.Errorf("%s: %s", path, r.body)
		}
		expect(t, f.do("GET", path, "", nil), 401)
	}
	// Its own project lists nothing of this one.
	if got := listing(t, f.do("GET", "/minimal/api/rest/auto/v1/demo/other", olgaTok, nil)); len(got) != 0 {
		t.Errorf("olga's project lists %v", got)
	}
}

func fmtList(s []string) string { return "[" + strings.Join(s, " ") + "]" }

func fmtMap(m map[string][]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + fmtList(m[k])
	}
	return strings.Join(parts, " ")
}

// otherProjectAdmin creates the project demo/other with an admin identity
// olga and answers a token of hers.
func (g *gateway) otherProjectAdmin() string {
	g.t.Helper()
	ctx := context.Background()
	org, _ := g.st.Org(ctx, "demo")
	other, err := g.st.CreateProject(ctx, org.ID, "other", "other")
	if err != nil {
		g.t.Fatal(err)
	}
	sp, _ := g.st.CreateSpace(ctx, other.ID, "side", false)
	olga, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: other.ID, SpaceID: sp.ID, Name: "olga", Kind: "user", Roles: []string{"admin"}, KeyType: "crud", Enabled: true})
	if err != nil {
		g.t.Fatal(err)
	}
	tok, err := auth.Mint(ctx, g.st, g.key, olga, auth.MintOptions{})
	if err != nil {
		g.t.Fatal(err)
	}
	return tok
}

// TestDescribeForeignKeys: a PostgreSQL foreign key is described on its
// column, but only when the caller may see the column it references.
func TestDescribeForeignKeys(t *testing.T) {
	g := newGateway(t, engine.Config{})
	schema := g.pgSchema(pgDSN(t))
	ctx := context.Background()
	emp, dept := "pg/"+schema+"/employees", "pg/"+schema+"/departments"
	pol := store.Policy{
		Templates: []store.Template{
			{Name: "emp", Rules: []store.Rule{{Object: emp, Actions: []string{"read"}}}},
			{Name: "dept-name", Rules: []store.Rule{{Object: dept, Actions: []string{"read"}, Columns: []string{"name"}}}},
			{Name: "dept", Rules: []store.Rule{{Object: dept, Actions: []string{"read"}}}},
		},
		Bindings: []store.Binding{
			{Role: "emp-only", Templates: []string{"emp"}},
			{Role: "dept-name", Templates: []string{"emp", "dept-name"}},
			{Role: "both", Templates: []string{"emp", "dept"}},
		},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	refs := func(tok string) map[string]string {
		t.Helper()
		var d struct {
			Columns []struct {
				Name       string
				References *struct{ Table, Column string }
			}
		}
		r := g.do("GET", auto+"/"+emp+"/_describe", tok, nil)
		expect(t, r, 200)
		if err := json.Unmarshal(r.body, &d); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, c := range d.Columns {
			if c.References != nil {
				out[c.Name] = c.References.Table + "." + c.References.Column
			}
		}
		return out
	}
	if got := refs(g.admin); fmt.Sprint(got) != "map[department_id:departments.id]" {
		t.Errorf("admin: %v", got)
	}
	for role, want := range map[string]string{"emp-only": "map[]", "dept-name": "map[]", "both": "map[department_id:departments.id]"} {
		if _, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: space.ID, Name: role, Kind: "user", Roles: []string{role}, KeyType: "crud", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		tok := g.mint(role, auth.MintOptions{})
		waitStatus(t, g, auto+"/"+emp+"?ps=1&pg=0", tok, 200)
		if got := refs(tok); fmt.Sprint(got) != want {
			t.Errorf("%s: %v, want %s", role, got, want)
		}
	}
}
