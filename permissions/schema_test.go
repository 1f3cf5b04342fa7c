package permissions

import (
	"testing"

	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// TestPermitsSchema: the schema action is granted by templates only, held
// by admin unless denied, and gives no row access of its own.
func TestPermitsSchema(t *testing.T) {
	a, err := NewAuthorizer()
	if err != nil {
		t.Fatal(err)
	}
	pol := map[string]store.Policy{"p1": {
		Templates: []store.Template{
			{Name: "design", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"schema"}}}},
			{Name: "no-notes", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"schema"}, Effect: store.EffectDeny}}},
		},
		Bindings: []store.Binding{
			{Role: "designer", Templates: []string{"design"}},
			{Role: "admin", Templates: []string{"no-notes"}},
		},
	}}
	if err := a.Load(pol); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		roles  []string
		object string
		want   bool
	}{
		{[]string{"designer"}, "mi/app/tasks", true},
		{[]string{"designer"}, "mi/other/tasks", false},
		{[]string{"writer"}, "mi/app/tasks", false},
		{[]string{"admin"}, "mi/app/tasks", true},
		{[]string{"admin"}, "mi/app/notes", false},
	} {
		if got, err := a.Permits("p1", c.roles, c.object, store.ActionSchema); err != nil || got != c.want {
			t.Errorf("%v on %s: %v %v, want %v", c.roles, c.object, got, err, c.want)
		}
	}
	// No row access from schema alone: the table stays hidden.
	d, err := a.Decide("p1", []string{"designer"}, "mi/app/tasks", query.Read)
	if err != nil || d.Allowed || !d.Hidden {
		t.Fatalf("schema alone grants %+v %v", d, err)
	}
	if ok, _ := a.Permits("p1", []string{"designer"}, "mi/app/tasks", "create"); ok {
		t.Fatal("schema grants create")
	}
	bad := map[string]store.Policy{"p1": {
		Templates: []store.Template{{Name: "x", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"drop"}}}}},
		Bindings:  []store.Binding{{Role: "r", Templates: []string{"x"}}},
	}}
	if err := a.Load(bad); err == nil || err.Error() != `project p1: unknown action "drop" (create, read, update, delete, schema)` {
		t.Fatalf("unknown action: %v", err)
	}
}
