package engine_test

import (
	"slices"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// TestProjectionShared: a read of every column gets the catalog's column
// names as its projection, a grant limited to some columns only those;
// in either order, and a plan that appends to its projection writes into
// a slice of its own, not into the names another read gets.
func TestProjectionShared(t *testing.T) {
	registerFake()
	obj := fakeType + "/s/items"
	reg := &registry{pol: store.Policy{
		Templates: []store.Template{
			{Name: "read", Rules: []store.Rule{{Object: obj, Actions: []string{"read"}, Columns: []string{"dept", "id", "owner"}}}},
			{Name: "all", Rules: []store.Rule{{Object: obj, Actions: []string{"read"}}}},
		},
		Bindings: []store.Binding{{Role: "reader", Templates: []string{"read"}}, {Role: "viewer", Templates: []string{"all"}}},
	}}
	e, _, _ := newTestEngine(t, reg)
	fakeSrc.reset()
	who := func(role string) *auth.Principal {
		return &auth.Principal{IdentityID: "i1", Identity: "ann", OrgID: "o1", Org: "o", ProjectID: "p1", Project: "p",
			Roles: []string{role}, KeyType: query.MaskAll}
	}
	read := func(role string) []string {
		t.Helper()
		p := &query.Plan{Action: query.Read, Org: "o", Project: "p", Type: fakeType, Schema: "s", Table: "items", Limit: 10}
		res, err := e.Execute(t.Context(), who(role), p)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Rows.Close(); err != nil {
			t.Fatal(err)
		}
		return p.Columns
	}
	every, limited := []string{"id", "owner", "dept", "secret"}, []string{"id", "owner", "dept"}
	for _, role := range []string{"viewer", "reader", "admin", "reader", "viewer"} {
		want := every
		if role == "reader" {
			want = limited
		}
		if got := read(role); !slices.Equal(got, want) {
			t.Errorf("%s reads %v, want %v", role, got, want)
		}
	}
	a, b := read("viewer"), read("viewer")
	a = append(a, "mine")
	b = append(b, "yours")
	if a[len(a)-1] != "mine" || b[len(b)-1] != "yours" {
		t.Errorf("two projections share room to grow: %v, %v", a, b)
	}
	if got := read("viewer"); !slices.Equal(got, every) {
		t.Errorf("after appends a read's projection is %v, want %v", got, every)
	}
}
