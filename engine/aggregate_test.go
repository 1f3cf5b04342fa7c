package engine

import (
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// TestValidateAggregate: an aggregate read is checked against the table as
// the caller sees it, and its having values are coerced to the result
// columns' kinds; every refusal is Invalid with its own message.
func TestValidateAggregate(t *testing.T) {
	table := &dialects.Table{Name: "t", Columns: []dialects.Column{
		{Name: "id", Kind: dialects.KindInt}, {Name: "region", Kind: dialects.KindString},
		{Name: "qty", Kind: dialects.KindInt}, {Name: "price", Kind: dialects.KindDecimal},
		{Name: "doc", Kind: dialects.KindJSON}, {Name: "tags", Kind: dialects.KindArray},
	}}
	count := query.Aggregate{Func: query.AggCount, Alias: "n"}
	cond := func(col string, op query.Op, args ...any) *query.Cond {
		return &query.Cond{Column: col, Op: op, Args: args}
	}

	ok := &query.Plan{Action: query.Read, GroupBy: []string{"region"},
		Aggregates: []query.Aggregate{count, {Func: query.AggAvg, Column: "price", Alias: "mean"}, {Func: query.AggMax, Column: "qty", Alias: "top"}},
		Having:     query.And{cond("n", query.Gt, "2"), cond("mean", query.Lt, "9.5"), cond("top", query.In, "1", "2"), cond("region", query.Eq, "north")},
		Order:      []query.Order{{Column: "n", Desc: true}, {Column: "region"}}}
	if err := validate(ok, table); err != nil {
		t.Fatal(err)
	}
	h := ok.Having.(query.And)
	if h[0].(*query.Cond).Args[0] != int64(2) || h[1].(*query.Cond).Args[0] != "9.5" || h[2].(*query.Cond).Args[1] != int64(2) || h[3].(*query.Cond).Args[0] != "north" {
		t.Fatalf("having values not coerced to the result kinds: %#v", h)
	}
	if ok.Columns != nil {
		t.Fatalf("an aggregate read got a projection: %v", ok.Columns)
	}

	for _, c := range []struct {
		name string
		plan query.Plan
		want string
	}{
		{"update", query.Plan{Action: query.Update, Aggregates: []query.Aggregate{count}}, "only a read can aggregate"},
		{"columns", query.Plan{Columns: []string{"id"}, Aggregates: []query.Aggregate{count}}, "an aggregate read has no column list: it answers its group columns and aggregates"},
		{"group without aggregate", query.Plan{GroupBy: []string{"region"}}, "group by and having need at least one aggregate"},
		{"unknown group", query.Plan{GroupBy: []string{"nope"}, Aggregates: []query.Aggregate{count}}, `unknown column "nope"`},
		{"group twice", query.Plan{GroupBy: []string{"region", "region"}, Aggregates: []query.Aggregate{count}}, `column "region" is grouped twice`},
		{"group json", query.Plan{GroupBy: []string{"doc"}, Aggregates: []query.Aggregate{count}}, `column "doc" is json and cannot be grouped`},
		{"sum without column", query.Plan{Aggregates: []query.Aggregate{{Func: query.AggSum, Alias: "s"}}}, "sum needs a column"},
		{"unknown column", query.Plan{Aggregates: []query.Aggregate{{Func: query.AggMin, Column: "nope", Alias: "m"}}}, `unknown column "nope"`},
		{"avg of text", query.Plan{Aggregates: []query.Aggregate{{Func: query.AggAvg, Column: "region", Alias: "a"}}}, `avg needs a numeric column, "region" is string`},
		{"max of array", query.Plan{Aggregates: []query.Aggregate{{Func: query.AggMax, Column: "tags", Alias: "m"}}}, `max needs an ordered column, "tags" is array`},
		{"unknown function", query.Plan{Aggregates: []query.Aggregate{{Func: "median", Column: "qty", Alias: "m"}}}, `unknown aggregate function "median"`},
		{"no alias", query.Plan{Aggregates: []query.Aggregate{{Func: query.AggCount}}}, "aggregate count() needs a name"},
		{"alias is a column", query.Plan{Aggregates: []query.Aggregate{{Func: query.AggCount, Alias: "qty"}}}, `aggregate name "qty" is already a column name`},
		{"alias twice", query.Plan{Aggregates: []query.Aggregate{count, count}}, `aggregate name "n" is already a column name`},
		{"having on a row column", query.Plan{Aggregates: []query.Aggregate{count}, Having: cond("qty", query.Gt, "1")}, `having "qty": only group columns and aggregate names may be tested`},
		{"having array op", query.Plan{GroupBy: []string{"tags"}, Aggregates: []query.Aggregate{count}, Having: cond("tags", query.ArrayContains, "x")}, `having "tags": acontains is not supported`},
		{"having bad value", query.Plan{Aggregates: []query.Aggregate{count}, Having: cond("n", query.Eq, "many")}, `filter "n": "many" is not an integer`},
		{"order by a row column", query.Plan{Aggregates: []query.Aggregate{count}, Order: []query.Order{{Column: "qty"}}}, `order "qty": an aggregate read is ordered by its group columns and aggregate names`},
		{"where on a hidden column", query.Plan{Aggregates: []query.Aggregate{count}, Where: cond("secret", query.Eq, "1")}, `unknown column "secret"`},
	} {
		p := c.plan
		if p.Action == 0 {
			p.Action = query.Read
		}
		err := validate(&p, table)
		if fault.KindOf(err) != fault.Invalid || fault.As(err).Message != c.want {
			t.Errorf("%s: %v, want Invalid %q", c.name, err, c.want)
		}
	}
}
