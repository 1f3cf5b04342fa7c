package engine

import (
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// validateAggregate checks an aggregate read (query.Plan.IsAggregate)
// against the table as the caller sees it: every aggregated and grouping
// column must be visible, every function must fit its column's kind, the
// aliases must be new names, and Having and Order may name only result
// columns. Having values are coerced to the result column's kind. Where
// has been checked already; the row scope is ANDed into it afterwards, as
// for any read, so only the rows the caller may read are aggregated.
func validateAggregate(p *query.Plan, t *dialects.Table) error {
	if p.Action != query.Read {
		return fault.New(fault.Invalid, "only a read can aggregate")
	}
	if len(p.Columns) > 0 {
		return fault.New(fault.Invalid, "an aggregate read has no column list: it answers its group columns and aggregates")
	}
	if len(p.Aggregates) == 0 {
		return fault.New(fault.Invalid, "group by and having need at least one aggregate")
	}
	result := &dialects.Table{Schema: t.Schema, Name: t.Name}
	seen := map[string]bool{}
	for _, g := range p.GroupBy {
		c, ok := t.Column(g)
		if !ok {
			return unknownColumn(g)
		}
		if seen[g] {
			return fault.New(fault.Invalid, "column %q is grouped twice", g)
		}
		if c.Kind == dialects.KindJSON {
			return fault.New(fault.Invalid, "column %q is json and cannot be grouped", g)
		}
		seen[g] = true
	}
	for _, a := range p.Aggregates {
		src := dialects.KindOther
		switch {
		case a.Column == "" && a.Func != query.AggCount:
			return fault.New(fault.Invalid, "%s needs a column", a.Func)
		case a.Column != "":
			c, ok := t.Column(a.Column)
			if !ok {
				return unknownColumn(a.Column)
			}
			src = c.Kind
		}
		switch a.Func {
		case query.AggCount:
		case query.AggSum, query.AggAvg:
			if src != dialects.KindInt && src != dialects.KindFloat && src != dialects.KindDecimal {
				return fault.New(fault.Invalid, "%s needs a numeric column, %q is %s", a.Func, a.Column, src)
			}
		case query.AggMin, query.AggMax:
			switch src {
			case dialects.KindJSON, dialects.KindArray, dialects.KindBytes:
				return fault.New(fault.Invalid, "%s needs an ordered column, %q is %s", a.Func, a.Column, src)
			}
		default:
			return fault.New(fault.Invalid, "unknown aggregate function %q", string(a.Func))
		}
		if a.Alias == "" {
			return fault.New(fault.Invalid, "aggregate %s(%s) needs a name", a.Func, a.Column)
		}
		if _, clash := t.Column(a.Alias); clash || seen[a.Alias] {
			return fault.New(fault.Invalid, "aggregate name %q is already a column name", a.Alias)
		}
		seen[a.Alias] = true
	}
	result.Columns = dialects.AggregateColumns(t, p)
	if p.Having != nil {
		err := query.Walk(p.Having, func(c *query.Cond) error {
			if !seen[c.Column] {
				return fault.New(fault.Invalid, "having %q: only group columns and aggregate names may be tested", c.Column)
			}
			if c.Op == query.ArrayContains || c.Op == query.ArrayNotContains {
				return fault.New(fault.Invalid, "having %q: %s is not supported", c.Column, c.Op)
			}
			return coerceCond(c, result)
		})
		if err != nil {
			return err
		}
	}
	for _, o := range p.Order {
		if !seen[o.Column] {
			return fault.New(fault.Invalid, "order %q: an aggregate read is ordered by its group columns and aggregate names", o.Column)
		}
	}
	return nil
}
