package query

// AggFunc is the function of one aggregate of an aggregate read.
type AggFunc string

// The aggregate functions. Every one but count ignores NULL; over no
// value, sum, avg, min and max answer NULL (ClickHouse answers its type's
// default instead, see docs/dialects.md).
const (
	// AggCount counts the rows (Aggregate.Column empty) or the non-null
	// values of a column.
	AggCount AggFunc = "count"
	// AggSum adds a numeric column's values.
	AggSum AggFunc = "sum"
	// AggAvg is the mean of a numeric column's values.
	AggAvg AggFunc = "avg"
	// AggMin is a column's least value.
	AggMin AggFunc = "min"
	// AggMax is a column's greatest value.
	AggMax AggFunc = "max"
)

// Aggregate is one computed column of an aggregate read: Func over Column,
// named Alias in the result.
type Aggregate struct {
	Func AggFunc
	// Column is the column aggregated; empty only for AggCount, which
	// then counts rows.
	Column string
	// Alias names the result column. It must differ from the other result
	// columns and from the table's columns.
	Alias string
}

// IsAggregate reports whether a read plan is an aggregate read: it has
// aggregates, grouping columns or a having condition.
func (p *Plan) IsAggregate() bool {
	return len(p.Aggregates) > 0 || len(p.GroupBy) > 0 || p.Having != nil
}
