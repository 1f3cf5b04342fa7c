package store

import (
	"reflect"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

// examplePolicy is the policy of the example file.
func examplePolicy() Policy {
	return Policy{
		Templates: []Template{{
			Name: "hr-read",
			Rules: []Rule{
				{Object: "pg/public/employees", Actions: []string{"read"}, Columns: []string{"id", "full_name", "department_id"}},
				{Object: "pg/public/*", Actions: []string{"read"}},
				{Object: "pg/public/salaries", Actions: []string{"read", "update"}, Effect: EffectDeny},
			},
		}},
		Bindings: []Binding{{Role: "hr-analyst", Templates: []string{"hr-read"}}},
		Scopes:   []Scope{{Role: "hr-analyst", Object: "pg/public/employees", Filter: "department_id=eq.{claims.department_id}"}},
		Locks:    []Lock{{Pattern: "pg/public/audit_log", Mask: "-r--"}},
	}
}

func seq(t *testing.T, s *Store) int64 {
	t.Helper()
	return must[int64](t)(s.ChangeSeq(t.Context()))
}

// strip clears the store-assigned ids so policies can be compared.
func strip(p Policy) Policy {
	for i := range p.Templates {
		p.Templates[i].ID, p.Templates[i].ProjectID = "", ""
	}
	for i := range p.Locks {
		p.Locks[i].ID, p.Locks[i].ProjectID = "", ""
	}
	return p
}

func TestPolicyEmpty(t *testing.T) { eachBackend(t, testPolicyEmpty) }

func testPolicyEmpty(t *testing.T) {
	s, _ := newStore(t)
	_, p, _ := tenant(t, s, "a")
	got := must[Policy](t)(s.Policy(t.Context(), p.ID))
	if got.Templates == nil || got.Bindings == nil || got.Scopes == nil || got.Locks == nil ||
		len(got.Templates)+len(got.Bindings)+len(got.Scopes)+len(got.Locks) != 0 {
		t.Fatalf("empty policy = %#v", got)
	}
	_, err := s.Policy(t.Context(), "nope")
	wantKind(t, err, fault.NotFound)
	wantKind(t, s.ReplacePolicy(t.Context(), "nope", examplePolicy()), fault.NotFound)
}

func TestReplacePolicyRoundTrip(t *testing.T) { eachBackend(t, testReplacePolicyRoundTrip) }

func testReplacePolicyRoundTrip(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "a")
	_, q, _ := tenant(t, s, "b")
	if err := s.ReplacePolicy(ctx, q.ID, examplePolicy()); err != nil {
		t.Fatal(err)
	}

	in := examplePolicy()
	in.Templates = append(in.Templates, Template{Name: "a-empty"}, Template{Name: "ops", Rules: []Rule{
		{Object: "pg", Actions: []string{"delete", "create"}, Effect: EffectAllow},
		{Object: "mi/app", Actions: []string{"read"}},
	}})
	in.Bindings = append(in.Bindings, Binding{Role: "admin", Templates: []string{"ops", "hr-read"}})
	in.Scopes = append(in.Scopes, Scope{Role: "admin", Object: "pg/*/*", Filter: "owner=eq.{identity}"})
	in.Locks = append(in.Locks, Lock{Pattern: "pg", Mask: "crud"}, Lock{Pattern: "mi/app", Mask: "-r--"})

	before := seq(t, s)
	if err := s.ReplacePolicy(ctx, p.ID, in); err != nil {
		t.Fatal(err)
	}
	if after := seq(t, s); after != before+1 {
		t.Fatalf("change counter moved %d -> %d, want one bump", before, after)
	}
	got := must[Policy](t)(s.Policy(ctx, p.ID))
	for _, tm := range got.Templates {
		if tm.ID == "" || tm.ProjectID != p.ID {
			t.Fatalf("template %+v lacks ids", tm)
		}
	}
	for _, l := range got.Locks {
		if l.ID == "" || l.ProjectID != p.ID {
			t.Fatalf("lock %+v lacks ids", l)
		}
	}
	firstIDs := map[string]string{}
	for _, tm := range got.Templates {
		firstIDs[tm.Name] = tm.ID
	}
	firstLock := got.Locks[0].ID
	want := Policy{
		Templates: []Template{
			{Name: "a-empty", Rules: []Rule{}},
			{Name: "hr-read", Rules: []Rule{
				{Object: "pg/public/employees", Actions: []string{"read"}, Columns: []string{"id", "full_name", "department_id"}, Effect: EffectAllow},
				{Object: "pg/public/*", Actions: []string{"read"}, Effect: EffectAllow},
				{Object: "pg/public/salaries", Actions: []string{"read", "update"}, Effect: EffectDeny},
			}},
			{Name: "ops", Rules: []Rule{
				{Object: "pg", Actions: []string{"delete", "create"}, Effect: EffectAllow},
				{Object: "mi/app", Actions: []string{"read"}, Effect: EffectAllow},
			}},
		},
		Bindings: []Binding{
			{Role: "admin", Templates: []string{"hr-read", "ops"}},
			{Role: "hr-analyst", Templates: []string{"hr-read"}},
		},
		Scopes: []Scope{
			{Role: "admin", Object: "pg/*/*", Filter: "owner=eq.{identity}"},
			{Role: "hr-analyst", Object: "pg/public/employees", Filter: "department_id=eq.{claims.department_id}"},
		},
		Locks: []Lock{
			{Pattern: "mi/app", Mask: "-r--"},
			{Pattern: "pg", Mask: "crud"},
			{Pattern: "pg/public/audit_log", Mask: "-r--"},
		},
	}
	if !reflect.DeepEqual(strip(got), want) {
		t.Fatalf("Policy =\n%#v\nwant\n%#v", got, want)
	}
	// The locks are the same rows Locks lists.
	if locks := must[[]Lock](t)(s.Locks(ctx, p.ID)); len(locks) != 3 || locks[0].ID != firstLock {
		t.Fatalf("Locks = %+v", locks)
	}

	// Replacing again: kept names keep their ids, the rest goes.
	again := Policy{
		Templates: []Template{{Name: "hr-read", Rules: []Rule{{Object: "pg/public/*", Actions: []string{"read"}}}}},
		Bindings:  []Binding{{Role: "x", Templates: []string{"hr-read"}}},
		Locks:     []Lock{{Pattern: "mi/app", Mask: "----"}},
	}
	if err := s.ReplacePolicy(ctx, p.ID, again); err != nil {
		t.Fatal(err)
	}
	got = must[Policy](t)(s.Policy(ctx, p.ID))
	if len(got.Templates) != 1 || got.Templates[0].ID != firstIDs["hr-read"] || len(got.Templates[0].Rules) != 1 {
		t.Fatalf("templates after second replace: %+v", got.Templates)
	}
	if len(got.Locks) != 1 || got.Locks[0].ID != firstLock || got.Locks[0].Mask != "----" {
		t.Fatalf("locks after second replace: %+v", got.Locks)
	}
	if len(got.Scopes) != 0 || len(got.Bindings) != 1 || got.Bindings[0].Role != "x" {
		t.Fatalf("after second replace: %+v", got)
	}

	// The other project was never touched.
	other := must[Policy](t)(s.Policy(ctx, q.ID))
	wantOther, _ := normPolicy(examplePolicy())
	if !reflect.DeepEqual(strip(other), wantOther) {
		t.Fatalf("other project = %#v", other)
	}

	// An empty policy clears everything.
	if err := s.ReplacePolicy(ctx, p.ID, Policy{}); err != nil {
		t.Fatal(err)
	}
	got = must[Policy](t)(s.Policy(ctx, p.ID))
	if len(got.Templates)+len(got.Bindings)+len(got.Scopes)+len(got.Locks) != 0 {
		t.Fatalf("after clearing: %+v", got)
	}
}

func TestReplacePolicyInvalid(t *testing.T) { eachBackend(t, testReplacePolicyInvalid) }

func testReplacePolicyInvalid(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "a")
	if err := s.ReplacePolicy(ctx, p.ID, examplePolicy()); err != nil {
		t.Fatal(err)
	}
	want := must[Policy](t)(s.Policy(ctx, p.ID))
	tests := []struct {
		name   string
		change func(*Policy)
		naming string // text the message must contain
	}{
		{"unknown template", func(p *Policy) { p.Bindings[0].Templates = []string{"hr-read", "nope"} }, `"nope"`},
		{"empty binding", func(p *Policy) { p.Bindings[0].Templates = nil }, `"hr-analyst"`},
		{"template twice in binding", func(p *Policy) { p.Bindings[0].Templates = []string{"hr-read", "hr-read"} }, `"hr-read"`},
		{"role bound twice", func(p *Policy) { p.Bindings = append(p.Bindings, p.Bindings[0]) }, `"hr-analyst"`},
		{"duplicate template", func(p *Policy) { p.Templates = append(p.Templates, Template{Name: "hr-read"}) }, `"hr-read"`},
		{"empty template name", func(p *Policy) { p.Templates[0].Name = "" }, "template name"},
		{"bad action", func(p *Policy) { p.Templates[0].Rules[1].Actions = []string{"write"} }, `"write"`},
		{"no action", func(p *Policy) { p.Templates[0].Rules[1].Actions = nil }, "rule 2"},
		{"action twice", func(p *Policy) { p.Templates[0].Rules[1].Actions = []string{"read", "read"} }, `"read"`},
		{"bad effect", func(p *Policy) { p.Templates[0].Rules[0].Effect = "maybe" }, `"maybe"`},
		{"empty columns", func(p *Policy) { p.Templates[0].Rules[0].Columns = []string{} }, "column list"},
		{"column twice", func(p *Policy) { p.Templates[0].Rules[0].Columns = []string{"id", "id"} }, `"id"`},
		{"four segments", func(p *Policy) { p.Templates[0].Rules[0].Object = "pg/a/b/c" }, `"pg/a/b/c"`},
		{"empty segment", func(p *Policy) { p.Templates[0].Rules[0].Object = "pg//t" }, `"pg//t"`},
		{"bad glob", func(p *Policy) { p.Templates[0].Rules[0].Object = "pg/[" }, `"pg/["`},
		{"bad lock pattern", func(p *Policy) { p.Locks[0].Pattern = "pg/" }, `"pg/"`},
		{"bad lock mask", func(p *Policy) { p.Locks[0].Mask = "rw" }, `"rw"`},
		{"lock twice", func(p *Policy) { p.Locks = append(p.Locks, Lock{Pattern: "pg/public/audit_log", Mask: "----"}) }, `"pg/public/audit_log"`},
		{"scope twice", func(p *Policy) { p.Scopes = append(p.Scopes, p.Scopes[0]) }, `"hr-analyst"`},
		{"empty filter", func(p *Policy) { p.Scopes[0].Filter = "" }, "empty filter"},
		{"control in filter", func(p *Policy) { p.Scopes[0].Filter = "a=eq.\n1" }, "control"},
		{"bad scope object", func(p *Policy) { p.Scopes[0].Object = "" }, "scope object"},
		{"bad role", func(p *Policy) { p.Scopes[0].Role = " x" }, `" x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := examplePolicy()
			tt.change(&in)
			before := seq(t, s)
			err := s.ReplacePolicy(ctx, p.ID, in)
			wantKind(t, err, fault.Invalid)
			if msg := fault.As(err).Message; !strings.Contains(msg, tt.naming) {
				t.Errorf("message %q does not name %s", msg, tt.naming)
			}
			if after := seq(t, s); after != before {
				t.Errorf("a refused replace moved the change counter")
			}
			if got := must[Policy](t)(s.Policy(ctx, p.ID)); !reflect.DeepEqual(got, want) {
				t.Errorf("a refused replace changed the policy: %+v", got)
			}
		})
	}
}

func TestLockPatternsOfOneToThreeSegments(t *testing.T) {
	eachBackend(t, testLockPatternsOfOneToThreeSegments)
}

func testLockPatternsOfOneToThreeSegments(t *testing.T) {
	s, _ := newStore(t)
	_, p, _ := tenant(t, s, "a")
	for _, pat := range []string{"pg", "pg/public", "pg/public/t", "*", "*/*"} {
		if _, err := s.AddLock(t.Context(), Lock{ProjectID: p.ID, Pattern: pat, Mask: "-r--"}); err != nil {
			t.Errorf("AddLock(%q): %v", pat, err)
		}
	}
}

func TestUpdateIdentity(t *testing.T) { eachBackend(t, testUpdateIdentity) }

func testUpdateIdentity(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, main := tenant(t, s, "a")
	_, q, foreign := tenant(t, s, "b")
	_ = q
	other := must[Space](t)(s.CreateSpace(ctx, p.ID, "other", false))
	id := must[Identity](t)(s.CreateIdentity(ctx, Identity{ProjectID: p.ID, SpaceID: main.ID, Name: "bob",
		Kind: KindUser, Roles: []string{"a"}, KeyType: "crud", Enabled: true}))

	before := seq(t, s)
	up := id
	up.Name, up.ProjectID = "ignored", "ignored"
	up.Kind, up.SpaceID, up.Roles, up.KeyType, up.Enabled = KindService, other.ID, []string{"a", "b", "a"}, "-r--", false
	up.Claims = map[string]any{"department_id": 6}
	got := must[Identity](t)(s.UpdateIdentity(ctx, up))
	if after := seq(t, s); after != before+1 {
		t.Fatalf("counter %d -> %d", before, after)
	}
	if got.Name != "bob" || got.ProjectID != p.ID || got.Kind != KindService || got.SpaceID != other.ID ||
		!reflect.DeepEqual(got.Roles, []string{"a", "b"}) || got.KeyType != "-r--" || got.Enabled ||
		got.Claims["department_id"] != float64(6) || !got.CreatedAt.Equal(id.CreatedAt) {
		t.Fatalf("UpdateIdentity = %+v", got)
	}
	if read := must[Identity](t)(s.Identity(ctx, p.ID, "bob")); !reflect.DeepEqual(read, got) {
		t.Fatalf("read back %+v, want %+v", read, got)
	}

	bad := []struct {
		name   string
		change func(*Identity)
		want   fault.Kind
	}{
		{"unknown id", func(i *Identity) { i.ID = "nope" }, fault.NotFound},
		{"space of another project", func(i *Identity) { i.SpaceID = foreign.ID }, fault.NotFound},
		{"bad kind", func(i *Identity) { i.Kind = "robot" }, fault.Invalid},
		{"bad key_type", func(i *Identity) { i.KeyType = "rw" }, fault.Invalid},
		{"bad role", func(i *Identity) { i.Roles = []string{""} }, fault.Invalid},
		{"bad claims", func(i *Identity) { i.Claims = map[string]any{"f": func() {}} }, fault.Invalid},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			in := got
			tt.change(&in)
			before := seq(t, s)
			_, err := s.UpdateIdentity(ctx, in)
			wantKind(t, err, tt.want)
			if seq(t, s) != before {
				t.Error("a refused update moved the counter")
			}
		})
	}
}
