package query

import (
	"net/url"
	"reflect"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

func TestParseLogic(t *testing.T) {
	c := func(col string, op Op, args ...any) *Cond { return &Cond{Column: col, Op: op, Args: args} }
	cases := []struct {
		name, raw string
		want      Expr
	}{
		{"or", "(a.eq.1,b.gt.2)", Or{c("a", Eq, "1"), c("b", Gt, "2")}},
		{"or", "(a.eq.1,and(b.gt.2,c.lt.3))", Or{c("a", Eq, "1"), And{c("b", Gt, "2"), c("c", Lt, "3")}}},
		{"and", "(a.in.(1,2,3),not.or(b.is.null,c.bw.(1,5)))", And{c("a", In, "1", "2", "3"), Not{X: Or{&Cond{Column: "b", Op: IsNull}, c("c", Between, "1", "5")}}}},
		{"or", `(name.eq."a,b)",name.not.eq.x)`, Or{c("name", Eq, "a,b)"), Not{X: c("name", Eq, "x")}}},
		{"or", "(order.eq.1,name.like.Ra*)", Or{c("order", Eq, "1"), c("name", Like, "Ra%")}},
		{"or", "(a.nin.(\"x,y\",z))", Or{c("a", NotIn, "x,y", "z")}},
	}
	for _, tc := range cases {
		got, err := ParseLogic(tc.name, tc.raw)
		if err != nil {
			t.Fatalf("%s=%s: %v", tc.name, tc.raw, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s=%s: got %s, want %s", tc.name, tc.raw, Format(got), Format(tc.want))
		}
	}
	for _, raw := range []string{"", "a.eq.1", "()", "(a.eq.1,)", "(a.eq.1", "(a.eq.1))", "(a.in.1,2)", "(a.xx.1)", "(.eq.1)", `(a.eq."x)`, "(or(a.eq.1)", "(a)"} {
		if _, err := ParseLogic("or", raw); fault.KindOf(err) != fault.Invalid {
			t.Errorf("or=%s: %v, want INVALID", raw, err)
		}
	}
	deep := "(a.eq.1)"
	for range maxLogicDepth + 2 {
		deep = "(or" + deep + ")"
	}
	if _, err := ParseLogic("or", deep); fault.KindOf(err) != fault.Invalid {
		t.Errorf("too deep: %v", err)
	}
}

func TestFromParamsOptions(t *testing.T) {
	p, err := FromParams(Read, url.Values{"ps": {"5"}, "pg": {"0"}, "count": {"exact"}, "agg": {"count(),sum(qty),top:max(qty)"}, "group": {"region,day"}, "or": {"(a.eq.1,b.eq.2)"}, "c": {"eq.3"}}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Aggregate{{AggCount, "", "count"}, {AggSum, "qty", "sum_qty"}, {AggMax, "qty", "top"}}
	if p.Count != CountExact || !reflect.DeepEqual(p.Aggregates, want) || !reflect.DeepEqual(p.GroupBy, []string{"region", "day"}) {
		t.Fatalf("got %+v", p)
	}
	if Format(p.Where) != `c eq "3" AND (a eq "1" OR b eq "2")` {
		t.Errorf("where %s", Format(p.Where))
	}
	p, err = FromParams(Insert, url.Values{"on_conflict": {"id,k"}, "resolution": {"ignore"}}, Limits{})
	if err != nil || !reflect.DeepEqual(p.OnConflict, []string{"id", "k"}) || p.Resolution != ResolveIgnore {
		t.Fatalf("upsert: %+v %v", p, err)
	}
	p, err = FromParams(Update, url.Values{"return": {"rows"}, "a": {"eq.1"}}, Limits{})
	if err != nil || !p.Return {
		t.Fatalf("return: %+v %v", p, err)
	}
	for _, bad := range []struct {
		a Action
		q url.Values
	}{
		{Read, url.Values{"ps": {"1"}, "pg": {"0"}, "count": {"all"}}},
		{Delete, url.Values{"count": {"exact"}}},
		{Read, url.Values{"ps": {"1"}, "pg": {"0"}, "agg": {"median(x)"}}},
		{Read, url.Values{"ps": {"1"}, "pg": {"0"}, "agg": {"sum()"}}},
		{Read, url.Values{"ps": {"1"}, "pg": {"0"}, "group": {"a,a"}}},
		{Update, url.Values{"on_conflict": {"id"}}},
		{Insert, url.Values{"resolution": {"merge"}}},
		{Insert, url.Values{"on_conflict": {"id"}, "resolution": {"merge-duplicates"}}},
		{Read, url.Values{"ps": {"1"}, "pg": {"0"}, "return": {"rows"}}},
		{Delete, url.Values{"return": {"all"}}},
	} {
		if _, err := FromParams(bad.a, bad.q, Limits{}); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%v %v: %v, want INVALID", bad.a, bad.q, err)
		}
	}
}

// FuzzParseLogic checks that a logic tree never panics, that a refusal is
// INVALID, and that every request value lands in a Cond's Args as a string
// and nowhere else: the tree's shape and its column names come from the
// request's structure, never from a value.
func FuzzParseLogic(f *testing.F) {
	for _, s := range []string{"eq.5", `in.("a,b",c)`, "bw.(1,2)", "like.*x*", "is.null", "not.eq.'; DROP TABLE x;--", `eq."\")"`, "eq.)(", "eq.a,and(b.eq.1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		e, err := ParseLogic("or", "(name."+raw+",and(id.eq.1,name."+raw+"))")
		if err != nil {
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("error of kind %v", fault.KindOf(err))
			}
			return
		}
		_ = Walk(e, func(c *Cond) error {
			for _, a := range c.Args {
				if _, ok := a.(string); !ok {
					t.Fatalf("arg of type %T", a)
				}
			}
			return nil
		})
	})
}
