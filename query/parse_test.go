package query

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

func TestParseFilter(t *testing.T) {
	cases := []struct {
		raw  string
		want Expr
	}{
		{"eq.5", &Cond{Column: "c", Op: Eq, Args: []any{"5"}}},
		{"ne.x", &Cond{Column: "c", Op: Ne, Args: []any{"x"}}},
		{"neq.x", &Cond{Column: "c", Op: Ne, Args: []any{"x"}}},
		{"gt.1", &Cond{Column: "c", Op: Gt, Args: []any{"1"}}},
		{"gte.1", &Cond{Column: "c", Op: Ge, Args: []any{"1"}}},
		{"ge.1", &Cond{Column: "c", Op: Ge, Args: []any{"1"}}},
		{"lt.1", &Cond{Column: "c", Op: Lt, Args: []any{"1"}}},
		{"lte.1", &Cond{Column: "c", Op: Le, Args: []any{"1"}}},
		{"le.1", &Cond{Column: "c", Op: Le, Args: []any{"1"}}},
		{"eq.a,b", &Cond{Column: "c", Op: Eq, Args: []any{"a,b"}}},
		{`eq."a,b"`, &Cond{Column: "c", Op: Eq, Args: []any{"a,b"}}},
		{`eq."say \"hi\""`, &Cond{Column: "c", Op: Eq, Args: []any{`say "hi"`}}},
		{"eq.", &Cond{Column: "c", Op: Eq, Args: []any{""}}},
		{"eq.1.5", &Cond{Column: "c", Op: Eq, Args: []any{"1.5"}}},
		{"like.Raf*", &Cond{Column: "c", Op: Like, Args: []any{"Raf%"}}},
		{"ilike.*raf*", &Cond{Column: "c", Op: ILike, Args: []any{"%raf%"}}},
		{"like.100%_\\*", &Cond{Column: "c", Op: Like, Args: []any{`100\%\_*`}}},
		{"li.ab", &Cond{Column: "c", Op: Like, Args: []any{"%ab%"}}},
		{"rli.ab", &Cond{Column: "c", Op: Like, Args: []any{"ab%"}}},
		{"in.1,2,3", &Cond{Column: "c", Op: In, Args: []any{"1", "2", "3"}}},
		{`in."a,b",c`, &Cond{Column: "c", Op: In, Args: []any{"a,b", "c"}}},
		{"nin.1", &Cond{Column: "c", Op: NotIn, Args: []any{"1"}}},
		{"bw.10,20", &Cond{Column: "c", Op: Between, Args: []any{"10", "20"}}},
		{"is.null", &Cond{Column: "c", Op: IsNull}},
		{"is.NULL", &Cond{Column: "c", Op: IsNull}},
		{"is.notnull", &Cond{Column: "c", Op: IsNotNull}},
		{"is.true", &Cond{Column: "c", Op: IsTrue}},
		{"is.false", &Cond{Column: "c", Op: IsFalse}},
		{"not.eq.5", Not{X: &Cond{Column: "c", Op: Eq, Args: []any{"5"}}}},
	}
	for _, tc := range cases {
		got, err := ParseFilter("c", tc.raw)
		if err != nil {
			t.Errorf("%q: %v", tc.raw, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %#v, want %#v", tc.raw, got, tc.want)
		}
	}
}

func TestParseFilterErrors(t *testing.T) {
	cases := []struct{ raw, mention string }{
		{"5", `"5" is not operator.value`},
		{"xx.5", `unknown operator "xx"`},
		{"eq", `operator "eq" has no value`},
		{"bw.1", "bw needs two values"},
		{"bw.1,2,3", "bw needs two values"},
		{"is.maybe", "is.maybe"},
		{`eq."abc`, "unterminated quote"},
		{`eq."a"b`, "text after the closing quote"},
		{`in."a"b`, "expected a comma"},
		{"in.", "empty value list"},
	}
	for _, tc := range cases {
		_, err := ParseFilter("department_id", tc.raw)
		if err == nil {
			t.Errorf("%q: no error", tc.raw)
			continue
		}
		if fault.KindOf(err) != fault.Invalid {
			t.Errorf("%q: kind %v", tc.raw, fault.KindOf(err))
		}
		msg := err.Error()
		if !strings.Contains(msg, `"department_id"`) || !strings.Contains(msg, tc.mention) {
			t.Errorf("%q: message %q should name the parameter and %q", tc.raw, msg, tc.mention)
		}
	}
}

func TestFromParamsRead(t *testing.T) {
	v, _ := url.ParseQuery("fc=id,name&oy=name.ds,id&ps=10&pg=2&department_id=gt.6&name=like.A*&format=csv")
	p, err := FromParams(Read, v, Limits{MaxPageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := &Plan{
		Action:  Read,
		Columns: []string{"id", "name"},
		Order:   []Order{{Column: "name", Desc: true}, {Column: "id"}},
		Limit:   10, Offset: 20,
		Where: And{
			&Cond{Column: "department_id", Op: Gt, Args: []any{"6"}},
			&Cond{Column: "name", Op: Like, Args: []any{"A%"}},
		},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %#v\nwant %#v", p, want)
	}
}

func TestFromParamsErrors(t *testing.T) {
	cases := []struct {
		action  Action
		q, want string
	}{
		{Read, "pg=0", `parameter "ps" is required`},
		{Read, "ps=10", `parameter "pg" is required`},
		{Read, "ps=1000&pg=0", `page size 1000 is over the limit of 100`},
		{Read, "ps=0&pg=0", `parameter "ps" must be at least 1`},
		{Read, "ps=x&pg=0", `"x" is not a whole number`},
		{Read, "ps=10&pg=-1", `parameter "pg" must be at least 0`},
		{Read, "ps=10&pg=0&fc=", `parameter "fc" is empty`},
		{Read, "ps=10&pg=0&fc=a,a", `column "a" is listed twice`},
		{Read, "ps=10&pg=0&oy=a.up", `unknown direction "up"`},
		{Delete, "all=maybe", `parameter "all"`},
		{Read, "ps=10&pg=0&set=a.b", `only valid on an update`},
		{Update, "set=nodot", `is not column.value`},
	}
	for _, tc := range cases {
		v, _ := url.ParseQuery(tc.q)
		_, err := FromParams(tc.action, v, Limits{MaxPageSize: 100})
		if err == nil || !strings.Contains(err.Error(), tc.want) || fault.KindOf(err) != fault.Invalid {
			t.Errorf("%q: got %v, want Invalid mentioning %q", tc.q, err, tc.want)
		}
	}
}

func TestFromParamsDeleteIgnoresPaging(t *testing.T) {
	v, _ := url.ParseQuery("ps=x&pg=y&id=eq.5")
	p, err := FromParams(Delete, v, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Limit != 0 || p.Offset != 0 || p.Where == nil {
		t.Fatalf("unexpected %#v", p)
	}
}

func TestParseSet(t *testing.T) {
	v, _ := url.ParseQuery(`set=name.Bob&set=note.null&set=q."null"&id=eq.1`)
	p, err := FromParams(Update, v, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Assign{{"name", "Bob"}, {"note", nil}, {"q", "null"}}
	if !reflect.DeepEqual(p.Set, want) {
		t.Fatalf("got %#v", p.Set)
	}
}

// FuzzParseFilter checks that the parser never panics, that every request
// value lands in Args and nowhere else, and that the column is kept verbatim.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"eq.5", `in."a,b",c`, "bw.1,2", "like.*x*", "is.null", "not.eq.'; DROP TABLE x;--", `eq."\"`, "li.%_", "", "."} {
		f.Add("col", s)
	}
	f.Fuzz(func(t *testing.T, col, raw string) {
		e, err := ParseFilter(col, raw)
		if err != nil {
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("error of kind %v", fault.KindOf(err))
			}
			return
		}
		n := 0
		_ = Walk(e, func(c *Cond) error {
			n++
			if c.Column != col {
				t.Fatalf("column changed: %q -> %q", col, c.Column)
			}
			for _, a := range c.Args {
				if _, ok := a.(string); !ok {
					t.Fatalf("arg of type %T", a)
				}
			}
			return nil
		})
		if n != 1 {
			t.Fatalf("%d conditions", n)
		}
	})
}

func FuzzFromParams(f *testing.F) {
	f.Add("ps=10&pg=0&fc=a,b&oy=a.ds&x=eq.1")
	f.Add("ps=1&pg=99999999999999999&x=in.1,2")
	f.Fuzz(func(t *testing.T, q string) {
		v, err := url.ParseQuery(q)
		if err != nil {
			return
		}
		p, err := FromParams(Read, v, Limits{MaxPageSize: 1000})
		if err != nil {
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("error of kind %v: %v", fault.KindOf(err), err)
			}
			return
		}
		if p.Limit < 1 || p.Limit > 1000 || p.Offset < 0 {
			t.Fatalf("bad paging %d %d", p.Limit, p.Offset)
		}
	})
}

func TestMask(t *testing.T) {
	for _, s := range []string{"crud", "----", "-r--", "cr--", "c--d", "CRUD"} {
		m, err := ParseMask(s)
		if err != nil {
			t.Fatal(s, err)
		}
		if m.String() != strings.ToLower(s) {
			t.Errorf("%s -> %s", s, m)
		}
	}
	for _, s := range []string{"", "rcud", "crudx", "cr-", "xr--"} {
		if _, err := ParseMask(s); err == nil || fault.KindOf(err) != fault.Invalid {
			t.Errorf("%q: %v", s, err)
		}
	}
	ro, _ := ParseMask("-r--")
	if !ro.Allows(Read) || ro.Allows(Insert) || ro.Allows(Update) || ro.Allows(Delete) {
		t.Error("-r-- allows wrong actions")
	}
}

func FuzzParseMask(f *testing.F) {
	f.Add("crud")
	f.Add("-r--")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMask(s)
		if err != nil {
			return
		}
		back, err := ParseMask(m.String())
		if err != nil || back != m {
			t.Fatalf("%q round trip: %v %v", s, back, err)
		}
	})
}

// BenchmarkFromParams parses the parameters of a read of one row by key.
func BenchmarkFromParams(b *testing.B) {
	params := url.Values{"ps": {"1"}, "pg": {"0"}, "id": {"eq.7"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FromParams(Read, params, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
