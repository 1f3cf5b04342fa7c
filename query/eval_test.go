package query

import "testing"

func TestResidual(t *testing.T) {
	row := map[string]any{"dept": int64(6), "name": "Rafa", "price": "10.50", "ok": true, "gone": nil, "id": Default{}}
	look := func(c string) (any, bool) { v, ok := row[c]; return v, ok }
	cond := func(col string, op Op, args ...any) *Cond { return &Cond{Column: col, Op: op, Args: args} }
	cases := []struct {
		name string
		e    Expr
		want Tri
	}{
		{"eq", cond("dept", Eq, int64(6)), True},
		{"ne", cond("dept", Ne, int64(6)), False},
		{"gt", cond("dept", Gt, int64(5)), True},
		{"le", cond("dept", Le, int64(5)), False},
		{"in", cond("dept", In, int64(1), int64(6)), True},
		{"nin", cond("dept", NotIn, int64(1), int64(6)), False},
		{"bw", cond("dept", Between, int64(6), int64(7)), True},
		{"decimal", cond("price", Eq, "10.5"), True},
		{"decimal gt int", cond("price", Gt, int64(10)), True},
		{"like", cond("name", Like, "Ra%"), True},
		{"like escaped", cond("name", Like, `Ra\%`), False},
		{"ilike", cond("name", ILike, "rA_a"), True},
		{"null compare", cond("gone", Eq, int64(1)), False},
		{"isnull", cond("gone", IsNull), True},
		{"istrue", cond("ok", IsTrue), True},
		{"isfalse on null", cond("gone", IsFalse), False},
		{"unknown column", cond("other", Eq, int64(1)), Unknown},
		{"default is unknown", cond("id", Eq, int64(1)), Unknown},
		{"or one true", Or{cond("dept", Eq, int64(1)), cond("dept", Eq, int64(6))}, True},
		{"or all false", Or{cond("dept", Eq, int64(1)), cond("dept", Eq, int64(2))}, False},
		{"and false wins", And{cond("other", Eq, int64(1)), cond("dept", Eq, int64(2))}, False},
		{"and residual", And{cond("other", Eq, int64(1)), cond("dept", Eq, int64(6))}, Unknown},
		{"not", Not{X: cond("dept", Eq, int64(6))}, False},
		{"mismatched kinds stay undecided", cond("name", Eq, int64(1)), Unknown},
	}
	for _, tc := range cases {
		_, got := Residual(tc.e, look)
		if got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	r, tri := Residual(And{cond("other", Eq, int64(1)), cond("dept", Eq, int64(6))}, look)
	if tri != Unknown || len(r.(And)) != 1 || r.(And)[0].(*Cond).Column != "other" {
		t.Fatalf("residual %#v", r)
	}
}
