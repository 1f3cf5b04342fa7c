package store

import (
	"reflect"
	"slices"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

func customDef(projectID, uri, method string, version int) CustomAPI {
	def := "%"
	max := 20
	lo := 1.0
	return CustomAPI{ProjectID: projectID, URI: uri, Method: method, Version: version, Type: "pg", Schema: "public",
		Mode: ModeRead, Description: "Employees of a department.", Roles: []string{"hr-analyst", "hr-manager"},
		Tables: []string{"employees"},
		Params: []CustomParam{
			{Name: "dept", Type: "integer", Required: true, Min: &lo},
			{Name: "name", Type: "string", Default: &def, MaxLength: &max},
		},
		Statements: []string{"SELECT id FROM employees WHERE department_id = :dept AND full_name LIKE :name"},
	}
}

func TestCustomAPIs(t *testing.T) { eachBackend(t, testCustomAPIs) }

func testCustomAPIs(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "acme")
	_, q, _ := tenant(t, s, "other")

	seq0 := must[int64](t)(s.ChangeSeq(ctx))
	a := must[CustomAPI](t)(s.CreateCustomAPI(ctx, customDef(p.ID, "employees/by-department", "GET", 1)))
	if a.ID == "" || a.CreatedAt.IsZero() || !a.CreatedAt.Equal(a.UpdatedAt) {
		t.Fatalf("created %+v", a)
	}
	if seq := must[int64](t)(s.ChangeSeq(ctx)); seq != seq0+1 {
		t.Fatalf("change counter %d -> %d", seq0, seq)
	}
	got := must[CustomAPI](t)(s.CustomAPI(ctx, p.ID, "employees/by-department", "GET", 1))
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, a)
	}
	_, err := s.CreateCustomAPI(ctx, customDef(p.ID, "employees/by-department", "GET", 1))
	wantKind(t, err, fault.Conflict)

	// Versions and methods coexist; listings are sorted by uri, method,
	// version; another project sees none of them.
	must[CustomAPI](t)(s.CreateCustomAPI(ctx, customDef(p.ID, "employees/by-department", "GET", 2)))
	must[CustomAPI](t)(s.CreateCustomAPI(ctx, customDef(p.ID, "employees/by-department", "POST", 1)))
	must[CustomAPI](t)(s.CreateCustomAPI(ctx, customDef(p.ID, "a-first", "GET", 1)))
	keys := func(list []CustomAPI) []string {
		out := make([]string, len(list))
		for i, c := range list {
			out[i] = c.Key()
		}
		return out
	}
	all := must[[]CustomAPI](t)(s.CustomAPIs(ctx, p.ID))
	if want := []string{"GET a-first v1", "GET employees/by-department v1", "GET employees/by-department v2", "POST employees/by-department v1"}; !slices.Equal(keys(all), want) {
		t.Fatalf("list %v", keys(all))
	}
	at := must[[]CustomAPI](t)(s.CustomAPIsAt(ctx, p.ID, "employees/by-department"))
	if len(at) != 3 {
		t.Fatalf("at uri: %v", keys(at))
	}
	if none := must[[]CustomAPI](t)(s.CustomAPIs(ctx, q.ID)); len(none) != 0 {
		t.Fatalf("other project lists %v", keys(none))
	}
	_, err = s.CustomAPI(ctx, q.ID, "employees/by-department", "GET", 1)
	wantKind(t, err, fault.NotFound)

	// Update keeps id and creation time.
	upd := customDef(p.ID, "employees/by-department", "GET", 1)
	upd.Roles, upd.Params, upd.Tables = []string{"x"}, nil, nil
	upd.Statements = []string{"SELECT 1"}
	u := must[CustomAPI](t)(s.UpdateCustomAPI(ctx, upd))
	if u.ID != a.ID || !u.CreatedAt.Equal(a.CreatedAt) || u.UpdatedAt.Before(a.UpdatedAt) {
		t.Fatalf("update %+v", u)
	}
	got = must[CustomAPI](t)(s.CustomAPI(ctx, p.ID, "employees/by-department", "GET", 1))
	if !slices.Equal(got.Roles, []string{"x"}) || len(got.Params) != 0 || got.Params == nil || got.Tables == nil || got.Statements[0] != "SELECT 1" {
		t.Fatalf("after update %+v", got)
	}
	_, err = s.UpdateCustomAPI(ctx, customDef(p.ID, "nope", "GET", 1))
	wantKind(t, err, fault.NotFound)

	// Shape checks.
	for _, edit := range []func(c *CustomAPI){
		func(c *CustomAPI) { c.URI = "/x" },
		func(c *CustomAPI) { c.URI = "A" },
		func(c *CustomAPI) { c.Method = "get" },
		func(c *CustomAPI) { c.Version = 0 },
		func(c *CustomAPI) { c.Type = "P G" },
		func(c *CustomAPI) { c.Schema = "a/b" },
		func(c *CustomAPI) { c.Mode = "rw" },
		func(c *CustomAPI) { c.Roles = nil },
		func(c *CustomAPI) { c.Tables = []string{"a", "a"} },
		func(c *CustomAPI) { c.Params = append(c.Params, c.Params[0]) },
		func(c *CustomAPI) { c.Params[0].Type = "" },
		func(c *CustomAPI) { c.Statements = []string{" "} },
		func(c *CustomAPI) { c.Statements = nil },
	} {
		c := customDef(p.ID, "bad", "GET", 1)
		edit(&c)
		_, err := s.CreateCustomAPI(ctx, c)
		wantKind(t, err, fault.Invalid)
	}
	_, err = s.CreateCustomAPI(ctx, customDef("no-such-project", "x", "GET", 1))
	wantKind(t, err, fault.NotFound)

	// Delete.
	if err := s.DeleteCustomAPI(ctx, p.ID, "a-first", "GET", 1); err != nil {
		t.Fatal(err)
	}
	wantKind(t, s.DeleteCustomAPI(ctx, p.ID, "a-first", "GET", 1), fault.NotFound)

	// Replace: kept keys keep their id, new ones are added, the rest go;
	// a key given twice or a malformed one changes nothing.
	before := must[[]CustomAPI](t)(s.CustomAPIs(ctx, p.ID))
	seq1 := must[int64](t)(s.ChangeSeq(ctx))
	wantKind(t, s.ReplaceCustomAPIs(ctx, p.ID, []CustomAPI{customDef("", "z", "GET", 1), customDef("", "z", "GET", 1)}), fault.Invalid)
	bad := customDef("", "z", "GET", 1)
	bad.Mode = ""
	wantKind(t, s.ReplaceCustomAPIs(ctx, p.ID, []CustomAPI{bad}), fault.Invalid)
	if after := must[[]CustomAPI](t)(s.CustomAPIs(ctx, p.ID)); !reflect.DeepEqual(after, before) {
		t.Fatal("a refused replace changed the store")
	}
	if seq := must[int64](t)(s.ChangeSeq(ctx)); seq != seq1 {
		t.Fatalf("a refused replace moved the counter %d -> %d", seq1, seq)
	}
	keep := customDef("ignored", "employees/by-department", "GET", 2)
	keep.Description = "changed"
	if err := s.ReplaceCustomAPIs(ctx, p.ID, []CustomAPI{keep, customDef("", "new", "PUT", 3)}); err != nil {
		t.Fatal(err)
	}
	if seq := must[int64](t)(s.ChangeSeq(ctx)); seq != seq1+1 {
		t.Fatalf("replace moved the counter %d -> %d, want one", seq1, seq)
	}
	now := must[[]CustomAPI](t)(s.CustomAPIs(ctx, p.ID))
	if want := []string{"GET employees/by-department v2", "PUT new v3"}; !slices.Equal(keys(now), want) {
		t.Fatalf("after replace %v", keys(now))
	}
	var oldV2 CustomAPI
	for _, c := range before {
		if c.Key() == "GET employees/by-department v2" {
			oldV2 = c
		}
	}
	if now[0].ID != oldV2.ID || now[0].Description != "changed" || now[0].ProjectID != p.ID || !now[0].CreatedAt.Equal(oldV2.CreatedAt) {
		t.Fatalf("kept definition %+v (was %+v)", now[0], oldV2)
	}
	if err := s.ReplaceCustomAPIs(ctx, p.ID, nil); err != nil {
		t.Fatal(err)
	}
	if left := must[[]CustomAPI](t)(s.CustomAPIs(ctx, p.ID)); len(left) != 0 {
		t.Fatalf("empty replace left %v", keys(left))
	}
	wantKind(t, s.ReplaceCustomAPIs(ctx, "no-such-project", nil), fault.NotFound)
}
