package permissions

import (
	"reflect"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/query"
)

// TestDecisionKey: the key Decide writes on the stack is the one it built
// as a string before (project, roles joined by commas, object and action,
// NUL between them), so every decision is cached under the same terms.
func TestDecisionKey(t *testing.T) {
	for _, roles := range [][]string{nil, {"admin"}, {"a", "b"}, {"hr-analyst", "hr-manager", "writer"}} {
		for _, act := range allActions {
			want := "p1" + "\x00" + strings.Join(roles, ",") + "\x00" + "pg/public/employees" + "\x00" + act.String()
			if got := string(decisionKey(nil, "p1", roles, "pg/public/employees", act)); got != want {
				t.Errorf("%v %s: key %q, want %q", roles, act, got, want)
			}
		}
	}
}

// TestDecideCached: every decision answered from the cache is the one
// decided afresh for the same terms, and a decision found costs no
// allocation.
func TestDecideCached(t *testing.T) {
	a, err := NewAuthorizer()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Load(testPolicy()); err != nil {
		t.Fatal(err)
	}
	rolesets := [][]string{nil, {"admin"}, {"hr-analyst"}, {"hr-analyst", "hr-manager"}, {"hr-manager"}, {"writer"}}
	objects := []string{"pg/public/employees", "pg/public/salaries", "pg/public/departments", "mi/app/notes", "pg/other/x"}
	for round := range 2 {
		for _, roles := range rolesets {
			for _, obj := range objects {
				for _, act := range allActions {
					got, err := a.Decide("p1", roles, obj, act)
					if err != nil {
						t.Fatal(err)
					}
					fresh, err := a.st.decide("p1", roles, strings.Join(roles, ","), obj, act)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, fresh) {
						t.Errorf("round %d, %v %s %s: cached %+v, decided %+v", round, roles, obj, act, got, fresh)
					}
				}
			}
		}
	}
	roles := []string{"hr-analyst", "hr-manager"}
	if n := testing.AllocsPerRun(100, func() { _, _ = a.Decide("p1", roles, "pg/public/employees", query.Read) }); n != 0 {
		t.Errorf("a cached decision allocates %v times", n)
	}
}

// TestAuthorizeTo: AuthorizeTo writes what Authorize answers, and leaves
// the caller's grant as it was on a refusal.
func TestAuthorizeTo(t *testing.T) {
	a, err := NewAuthorizer()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Load(testPolicy()); err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"department_id": 6}
	for _, roles := range [][]string{{"admin"}, {"hr-analyst"}, {"hr-manager"}, {"writer"}, {"nobody"}} {
		for _, obj := range []string{"pg/public/employees", "pg/public/salaries", "mi/app/notes"} {
			for _, act := range allActions {
				s := Subject{ProjectID: "p1", Roles: roles, KeyType: query.MaskAll, Vars: Vars{Identity: "ann", Claims: claims}}
				want, wantErr := a.Authorize(s, obj, act)
				before := Grant{Mask: 3, Columns: []string{"x"}, Roles: []string{"y"}}
				g := before
				err := a.AuthorizeTo(s, obj, act, &g)
				if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
					t.Errorf("%v %s %s: error %v, Authorize's %v", roles, obj, act, err, wantErr)
					continue
				}
				if err != nil {
					if !reflect.DeepEqual(g, before) {
						t.Errorf("%v %s %s: a refusal changed the grant to %+v", roles, obj, act, g)
					}
					continue
				}
				if !reflect.DeepEqual(g, *want) {
					t.Errorf("%v %s %s: grant %+v, Authorize's %+v", roles, obj, act, g, *want)
				}
			}
		}
	}
}
