package permissions

import (
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, object string
		want            bool
	}{
		{"pg/public/audit_log", "pg/public/audit_log", true},
		{"pg/public/audit_log", "pg/public/audit", false},
		{"pg/public/*", "pg/public/x", true},
		{"pg/public", "pg/public/x", true},
		{"pg", "pg/public/x", true},
		{"ma", "pg/public/x", false},
		{"*/*/secret*", "mi/app/secrets", true},
		{"pg/pub", "pg/public/x", false},
		{"pg/public/x/y", "pg/public/x", false},
		{"pg/[", "pg/public/x", false},
	}
	for _, tc := range cases {
		if got := Match(tc.pattern, tc.object); got != tc.want {
			t.Errorf("Match(%q, %q) = %v", tc.pattern, tc.object, got)
		}
	}
}

func TestCheckMask(t *testing.T) {
	ro := query.MaskRead
	locks := []Lock{{Pattern: "pg/public/audit_log", Mask: ro}}
	if _, err := CheckMask(query.MaskAll, locks, "pg/public/audit_log", query.Read, nil); err != nil {
		t.Fatal(err)
	}
	_, err := CheckMask(query.MaskAll, locks, "pg/public/audit_log", query.Delete, []string{"admin"})
	if fault.KindOf(err) != fault.Forbidden || err.Error() != "this table is locked for delete, got [admin]" {
		t.Fatalf("got %v", err)
	}
	if _, err := CheckMask(query.MaskAll, locks, "pg/public/other", query.Delete, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckMask(ro, nil, "pg/public/other", query.Insert, []string{"r"}); fault.KindOf(err) != fault.Forbidden || err.Error() != "insufficient permissions for this operation on this table, got [r]" {
		t.Fatalf("read-only key_type on an insert: %v", err)
	}
}

func TestValidPattern(t *testing.T) {
	for _, p := range []string{"pg", "pg/public", "pg/public/*", "*/*/a?c"} {
		if err := ValidPattern(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", "pg//x", "a/b/c/d", "pg/[", "/x"} {
		if err := ValidPattern(p); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}
