package permissions

import (
	"errors"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// TestAuthorize walks every gate of the one decision: each refusal names
// its gate and answers what the caller is told; a pass carries the mask,
// the columns and the instantiated scope.
func TestAuthorize(t *testing.T) {
	a, err := NewAuthorizer()
	if err != nil {
		t.Fatal(err)
	}
	pol := testPolicy()
	p1 := pol["p1"]
	p1.Locks = []store.Lock{{Pattern: "pg/public/employees", Mask: "cr--"}}
	pol["p1"] = p1
	if err := a.Load(pol); err != nil {
		t.Fatal(err)
	}
	ro, _ := query.ParseMask("-r--")
	subj := func(keyType query.Mask, claims map[string]any, roles ...string) Subject {
		return Subject{ProjectID: "p1", Roles: roles, KeyType: keyType, Vars: Vars{Identity: "ann", Claims: claims}}
	}
	dept6 := map[string]any{"department_id": 6}
	cases := []struct {
		name   string
		s      Subject
		object string
		action query.Action
		gate   Gate
		kind   fault.Kind
		msg    string
	}{
		{"hidden", subj(query.MaskAll, dept6, "hr-analyst"), "pg/public/salaries", query.Read, GateHidden, fault.NotFound, "table not found"},
		{"key_type", subj(ro, nil, "hr-manager"), "pg/public/employees", query.Insert, GateLock, fault.Forbidden, "insufficient permissions for this operation on this table, got [hr-manager]"},
		{"lock", subj(query.MaskAll, nil, "hr-manager"), "pg/public/employees", query.Update, GateLock, fault.Forbidden, "this table is locked for update, got [hr-manager]"},
		{"template", subj(query.MaskAll, dept6, "hr-analyst"), "pg/public/employees", query.Insert, GateTemplate, fault.Forbidden, "insufficient permissions for this operation on this table, got [hr-analyst]"},
		{"missing claim", subj(query.MaskAll, nil, "hr-analyst"), "pg/public/employees", query.Read, GateScope, fault.Forbidden, "insufficient permissions for this operation on this table, got [hr-analyst]"},
	}
	for _, c := range cases {
		_, err := a.Authorize(c.s, c.object, c.action)
		var ref *Refused
		if !errors.As(err, &ref) || ref.Gate != c.gate || ref.Detail == "" {
			t.Fatalf("%s: %v (%#v)", c.name, err, ref)
		}
		if fault.KindOf(err) != c.kind || ref.Err.Message != c.msg {
			t.Fatalf("%s: %s %q", c.name, fault.KindOf(err), ref.Err.Message)
		}
	}
	g, err := a.Authorize(subj(query.MaskAll, dept6, "hr-analyst"), "pg/public/employees", query.Read)
	if err != nil {
		t.Fatal(err)
	}
	if g.Mask.String() != "cr--" || len(g.Columns) != 3 || query.Format(g.Scope) != `department_id eq "6"` {
		t.Fatalf("grant: %s %v %s", g.Mask, g.Columns, query.Format(g.Scope))
	}
	g, err = a.Authorize(subj(query.MaskAll, nil, "hr-manager"), "pg/public/employees", query.Insert)
	if err != nil || g.Columns != nil || g.Scope != nil {
		t.Fatalf("unscoped grant: %v %+v", err, g)
	}
	if err := a.AuthorizeSchema(subj(query.MaskAll, nil, "hr-manager"), "pg/public/employees"); fault.KindOf(err) != fault.Forbidden {
		t.Fatalf("schema without the right: %v", err)
	}
	if err := a.AuthorizeSchema(subj(query.MaskAll, nil, AdminRole), "pg/public/employees"); err != nil {
		t.Fatalf("admin's schema right: %v", err)
	}
	if err := AuthorizeAdmin(subj(ro, nil, AdminRole), query.Update); fault.KindOf(err) != fault.Forbidden {
		t.Fatal("a read-only admin token wrote through the admin API")
	}
	if err := AuthorizeAdmin(subj(query.MaskAll, nil, "hr-manager"), query.Read); fault.KindOf(err) != fault.Forbidden {
		t.Fatal("a non-admin read the admin API")
	}
	if !MayCall([]string{"x", AdminRole}, nil) || MayCall([]string{"x"}, []string{"y"}) || !MayCall([]string{"y"}, []string{"y"}) {
		t.Fatal("MayCall")
	}
}
