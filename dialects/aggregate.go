package dialects

import "github.com/littlebitlabs/minimal/query"

// AggregateKind is the kind of an aggregate's result when it aggregates a
// column of kind src: count is an integer, avg a float (a decimal over a
// decimal column), sum, min and max keep the column's kind. Having values
// are coerced to it, and sources that describe result columns themselves
// (mi) report it.
func AggregateKind(f query.AggFunc, src Kind) Kind {
	switch f {
	case query.AggCount:
		return KindInt
	case query.AggAvg:
		if src == KindDecimal {
			return KindDecimal
		}
		return KindFloat
	}
	return src
}

// AggregateColumns describes the result columns of an aggregate read over
// t: the GroupBy columns as t has them, then each aggregate under its
// alias, of its AggregateKind. A column t lacks is reported of kind other.
func AggregateColumns(t *Table, p *query.Plan) []Column {
	out := make([]Column, 0, len(p.GroupBy)+len(p.Aggregates))
	kind := func(name string) Kind {
		if c, ok := t.Column(name); ok {
			return c.Kind
		}
		return KindOther
	}
	for _, g := range p.GroupBy {
		c := Column{Name: g, Kind: KindOther, Nullable: true}
		if tc, ok := t.Column(g); ok {
			c = *tc
			c.PrimaryKey, c.HasDefault, c.Default = false, false, ""
		}
		out = append(out, c)
	}
	for _, a := range p.Aggregates {
		k := AggregateKind(a.Func, kind(a.Column))
		out = append(out, Column{Name: a.Alias, Kind: k, Nullable: a.Func != query.AggCount})
	}
	return out
}
