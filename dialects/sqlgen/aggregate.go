package sqlgen

import (
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Aggregate writes an aggregate read: the group columns and each aggregate
// under its alias, from the table filtered by Where, grouped by GroupBy;
// with Having, that SELECT becomes a derived table the having condition
// filters by its column names (aliases are not visible in every engine's
// HAVING). Order and the page apply to the groups.
//
//	SELECT * FROM (SELECT "g", count(*) AS "n" FROM "t" WHERE … GROUP BY "g") AS "a" WHERE "n" > $1 ORDER BY "g" ASC
func (b *Builder) Aggregate(p *query.Plan) {
	if len(p.Columns) > 0 {
		b.Fail(fault.New(fault.Invalid, "an aggregate read has no column list"))
		return
	}
	if len(p.Aggregates) == 0 {
		b.Fail(fault.New(fault.Invalid, "an aggregate read needs at least one aggregate"))
		return
	}
	if p.Having != nil {
		b.Str("SELECT * FROM (")
	}
	b.Str("SELECT ")
	b.List(len(p.GroupBy)+len(p.Aggregates), func(i int) {
		if i < len(p.GroupBy) {
			b.Ident(p.GroupBy[i])
			return
		}
		a := p.Aggregates[i-len(p.GroupBy)]
		b.aggregate(a)
		b.Str(" AS ")
		b.Ident(a.Alias)
	})
	b.Str(" FROM ")
	b.Table(p)
	b.Where(p.Where)
	if len(p.GroupBy) > 0 {
		b.Str(" GROUP BY ")
		b.Columns(p.GroupBy, nil)
	}
	if p.Having != nil {
		b.Str(") AS ")
		b.Ident("a")
		b.Where(p.Having)
	}
	b.orderPage(p)
}

// aggregate writes one aggregate function call.
func (b *Builder) aggregate(a query.Aggregate) {
	switch a.Func {
	case query.AggCount, query.AggSum, query.AggAvg, query.AggMin, query.AggMax:
	default:
		b.Fail(fault.New(fault.Unsupported, "aggregate function %q is not supported", string(a.Func)))
		return
	}
	if a.Column == "" {
		if a.Func != query.AggCount {
			b.Fail(fault.New(fault.Invalid, "%s needs a column", a.Func))
			return
		}
		if b.s.CountRows != "" {
			b.Str(b.s.CountRows)
		} else {
			b.Str("count(*)")
		}
		return
	}
	b.Str(string(a.Func) + "(")
	b.Ident(a.Column)
	if a.Func == query.AggAvg {
		b.Str(b.s.AvgTail)
	}
	b.Str(")")
}
