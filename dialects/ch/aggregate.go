package ch

import (
	"maps"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/query"
)

// withAggregates returns the table's info with the result columns of an
// aggregate read added under their aliases, typed as ClickHouse types its
// aggregates, so that a having condition on an aggregate binds its values
// as a condition on a column does (a Decimal sum compares with a Decimal,
// not a String).
func (ti *tableInfo) withAggregates(p *query.Plan) *tableInfo {
	out := &tableInfo{cols: make(map[string]*colInfo, len(ti.cols)+len(p.Aggregates))}
	maps.Copy(out.cols, ti.cols)
	for _, a := range p.Aggregates {
		if t := aggregateType(a.Func, ti.cols[a.Column]); t != nil {
			out.cols[a.Alias] = &colInfo{typ: t}
		} else {
			delete(out.cols, a.Alias)
		}
	}
	return out
}

// aggregateType is the type of an aggregate's result over a column (nil:
// unknown, bound as it comes): count is UInt64; sum widens to Int64,
// UInt64, Float64 or Decimal(38, S); avg is Float64, or Decimal(38, S) of
// a decimal; min and max keep the column's type. Over a Nullable column
// the result is Nullable.
func aggregateType(f query.AggFunc, src *colInfo) *colType {
	if f == query.AggCount {
		return parseType("UInt64")
	}
	if src == nil {
		return nil
	}
	t := src.typ
	var base string
	switch {
	case f == query.AggMin || f == query.AggMax:
		return t
	case strings.HasPrefix(t.name, "Decimal"):
		base = "Decimal(38, " + strconv.Itoa(t.scale) + ")"
	case f == query.AggAvg || strings.HasPrefix(t.name, "Float"):
		base = "Float64"
	case strings.HasPrefix(t.name, "UInt"):
		base = "UInt64"
	case strings.HasPrefix(t.name, "Int"):
		base = "Int64"
	default:
		return nil
	}
	if t.nullable {
		base = "Nullable(" + base + ")"
	}
	return parseType(base)
}
