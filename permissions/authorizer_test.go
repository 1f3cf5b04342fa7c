package permissions

import (
	"reflect"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

func testPolicy() map[string]store.Policy {
	return map[string]store.Policy{"p1": {
		Templates: []store.Template{
			{Name: "hr-read", Rules: []store.Rule{
				{Object: "pg/public/employees", Actions: []string{"read"}, Columns: []string{"id", "full_name", "department_id"}},
				{Object: "pg/public/*", Actions: []string{"read"}, Columns: []string{"id"}},
				{Object: "pg/public/salaries", Actions: []string{"read", "update"}, Effect: store.EffectDeny},
			}},
			{Name: "hr-write", Rules: []store.Rule{
				{Object: "pg/public/employees", Actions: []string{"create", "update", "read"}},
			}},
			{Name: "notes", Rules: []store.Rule{{Object: "mi/app", Actions: []string{"read", "create", "update", "delete"}}}},
		},
		Bindings: []store.Binding{
			{Role: "hr-analyst", Templates: []string{"hr-read"}},
			{Role: "hr-manager", Templates: []string{"hr-write"}},
			{Role: "writer", Templates: []string{"notes"}},
		},
		Scopes: []store.Scope{
			{Role: "hr-analyst", Object: "pg/public/employees", Filter: "department_id=eq.{claims.department_id}"},
			{Role: "writer", Object: "mi/app/notes", Filter: "owner=eq.{identity}"},
		},
	}}
}

func TestDecide(t *testing.T) {
	a, err := NewAuthorizer()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Load(testPolicy()); err != nil {
		t.Fatal(err)
	}
	type want struct {
		hidden, allowed bool
		cols            []string
		scoped          int
	}
	cases := []struct {
		roles  []string
		object string
		action query.Action
		want   want
	}{
		{[]string{"hr-analyst"}, "pg/public/employees", query.Read, want{false, true, []string{"department_id", "full_name", "id"}, 1}},
		{[]string{"hr-analyst"}, "pg/public/employees", query.Update, want{false, false, nil, 0}},
		{[]string{"hr-analyst"}, "pg/public/departments", query.Read, want{false, true, []string{"id"}, 0}},
		{[]string{"hr-analyst"}, "pg/public/salaries", query.Read, want{true, false, nil, 0}},
		{[]string{"hr-analyst"}, "pg/other/x", query.Read, want{true, false, nil, 0}},
		{[]string{"hr-analyst", "hr-manager"}, "pg/public/employees", query.Read, want{false, true, nil, 0}},
		{[]string{"hr-manager"}, "pg/public/employees", query.Update, want{false, true, nil, 0}},
		{[]string{"admin"}, "pg/public/salaries", query.Delete, want{false, true, nil, 0}},
		{[]string{"admin", "hr-analyst"}, "pg/public/salaries", query.Read, want{false, false, nil, 0}}, // deny wins
		{[]string{"writer"}, "mi/app/notes", query.Delete, want{false, true, nil, 1}},
		{nil, "mi/app/notes", query.Read, want{true, false, nil, 0}},
	}
	for _, tc := range cases {
		d, err := a.Decide("p1", tc.roles, tc.object, tc.action)
		if err != nil {
			t.Fatal(err)
		}
		got := want{d.Hidden, d.Allowed, d.Columns, len(d.Scopes)}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v %s %s: got %+v, want %+v", tc.roles, tc.object, tc.action, got, tc.want)
		}
	}
	// Admin works in a project without any policy.
	d, _ := a.Decide("other", []string{"admin"}, "pg/x/y", query.Read)
	if !d.Allowed {
		t.Fatal("admin refused in a project without policy")
	}
	// A bad policy is refused and the old one stays.
	bad := testPolicy()
	p := bad["p1"]
	p.Bindings = append(p.Bindings, store.Binding{Role: "x", Templates: []string{"nope"}})
	bad["p1"] = p
	if err := a.Load(bad); err == nil {
		t.Fatal("unknown template accepted")
	}
	if d, _ := a.Decide("p1", []string{"writer"}, "mi/app/notes", query.Read); !d.Allowed {
		t.Fatal("old policy lost")
	}
}

func TestScopeInstantiate(t *testing.T) {
	f, err := ParseScope("department_id=eq.{claims.department_id}&owner=in.{identity},x&name=like.{claims.prefix}*")
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.Instantiate(Vars{Identity: "alice", Claims: map[string]any{"department_id": float64(6), "prefix": "a_b"}})
	if err != nil {
		t.Fatal(err)
	}
	want := query.And{
		&query.Cond{Column: "department_id", Op: query.Eq, Args: []any{"6"}},
		&query.Cond{Column: "owner", Op: query.In, Args: []any{"alice", "x"}},
		&query.Cond{Column: "name", Op: query.Like, Args: []any{`a\_b%`}},
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("got %#v", e)
	}
	if _, err := f.Instantiate(Vars{Identity: "alice"}); err == nil {
		t.Fatal("missing claim did not fail closed")
	}
	g, _ := ParseScope("dept=in.{claims.depts}")
	e, err = g.Instantiate(Vars{Claims: map[string]any{"depts": []any{float64(1), float64(2)}}})
	if err != nil || !reflect.DeepEqual(e, &query.Cond{Column: "dept", Op: query.In, Args: []any{"1", "2"}}) {
		t.Fatalf("array claim: %#v %v", e, err)
	}
	for _, bad := range []string{"", "dept", "dept=eq.{user}", "dept=zz.1", "=eq.1", "dept=eq.{claims.}"} {
		if _, err := ParseScope(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"department_id=eq.{claims.department_id}", "owner=eq.{identity}&x=in.1,2", "a=like.{space}*", "a=not.eq.{org}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sf, err := ParseScope(s)
		if err != nil {
			return
		}
		e, err := sf.Instantiate(Vars{Identity: "i", Space: "s", Org: "o", Project: "p", Claims: map[string]any{}})
		if err != nil {
			return // a claim the vars lack: fail closed
		}
		n := 0
		_ = query.Walk(e, func(c *query.Cond) error {
			n++
			for _, a := range c.Args {
				if s, ok := a.(string); ok && varRef.MatchString(s) && knownVar(varRef.FindStringSubmatch(s)[1]) {
					t.Fatalf("variable left in %q", s)
				}
			}
			return nil
		})
		if n != len(sf.conds) {
			t.Fatalf("%d conditions for %d terms", n, len(sf.conds))
		}
	})
}

// FuzzSubstitute checks the hand-written scan against the regular
// expression that defines a variable reference.
func FuzzSubstitute(f *testing.F) {
	for _, s := range []string{"{identity}", "a{claims.x}b{space}", "{", "}{", "{bad name}", "{{identity}}", "{claims.missing}", "x*{identity}"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	v := Vars{Identity: "al*ce", Space: "main", Claims: map[string]any{"x": "1_%"}}
	f.Fuzz(func(t *testing.T, s string, like bool) {
		var missing bool
		want := varRef.ReplaceAllStringFunc(s, func(ref string) string {
			val, ok := v.lookup(ref[1 : len(ref)-1])
			if !ok {
				missing = true
			}
			if like {
				val = query.LikePattern(strings.ReplaceAll(val, "*", `\*`))
			}
			return val
		})
		got, err := v.substitute(s, like)
		if missing != (err != nil) || (err == nil && got != want) {
			t.Fatalf("%q like=%v: got %q %v, want %q missing=%v", s, like, got, err, want, missing)
		}
	})
}
