package permissions

import (
	"testing"

	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

func TestOverlaps(t *testing.T) {
	for _, c := range []struct {
		pattern, prefix string
		want            bool
	}{
		{"mi", "mi/app", true},           // the whole type
		{"mi/app/notes", "mi/app", true}, // one table of the database
		{"mi/*/notes", "mi/app", true},
		{"*", "mi/app", true},
		{"mi/other", "mi/app", false},
		{"pg", "mi/app", false},
		{"pg/public/*", "mi", false},
		{"mi/a*", "mi/app", true},
		{"mi/app", "mi", true},
	} {
		if got := Overlaps(c.pattern, c.prefix); got != c.want {
			t.Errorf("Overlaps(%q, %q) = %v, want %v", c.pattern, c.prefix, got, c.want)
		}
	}
}

func TestAnywhereUnder(t *testing.T) {
	a, err := NewAuthorizer()
	if err != nil {
		t.Fatal(err)
	}
	pol := testPolicy()
	p := pol["p1"]
	p.Templates = append(p.Templates,
		store.Template{Name: "designer", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"schema", "create"}}}},
		store.Template{Name: "no-mi", Rules: []store.Rule{{Object: "mi", Actions: []string{"read", "update"}, Effect: store.EffectDeny}}})
	p.Bindings = append(p.Bindings, store.Binding{Role: "designer", Templates: []string{"designer"}}, store.Binding{Role: "denied", Templates: []string{"no-mi"}})
	pol["p1"] = p
	if err := a.Load(pol); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		roles  []string
		mask   query.Mask
		schema bool
		prefix string
		want   bool
	}{
		{[]string{"writer"}, query.MaskRead, false, "mi/app", true},
		{[]string{"writer"}, query.MaskRead, false, "mi/other", false},
		{[]string{"writer"}, query.MaskRead, true, "mi/app", false}, // no schema action
		{[]string{"hr-analyst"}, query.MaskRead, false, "mi/app", false},
		{[]string{"hr-analyst"}, query.MaskRead, false, "pg/public", true},
		{[]string{"hr-manager"}, query.MaskDelete, false, "pg/public", false},
		{[]string{"hr-manager"}, query.MaskAll, false, "pg", true}, // any of the actions
		{[]string{"designer"}, 0, true, "mi/app", true},
		{[]string{"designer"}, query.MaskCreate, false, "mi/app", true},
		{[]string{"designer"}, query.MaskUpdate, false, "mi/app", false},
		{[]string{"denied"}, query.MaskRead, false, "mi/app", false}, // a deny rule grants nothing
		{[]string{AdminRole}, query.MaskDelete, true, "mi/app", true},
		{nil, query.MaskRead, false, "mi/app", false},
	} {
		if got := a.AnywhereUnder("p1", c.roles, c.mask, c.schema, c.prefix); got != c.want {
			t.Errorf("AnywhereUnder(%v, %v, schema %v, %q) = %v, want %v", c.roles, c.mask, c.schema, c.prefix, got, c.want)
		}
	}
	if a.AnywhereUnder("nope", []string{"writer"}, query.MaskRead, false, "mi") {
		t.Error("a project without a policy grants a non-admin something")
	}
}
