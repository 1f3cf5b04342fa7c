package mi

import (
	"context"
	"strconv"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
)

// CheckValues decides each test with SQLite's own comparisons on the JSON
// document the write would store: the test's values are encoded as Write
// encodes a row, and the condition is rendered as Read renders a filter on
// stored rows (json_extract of the document); see dialects.ValueChecker.
func (s *Source) CheckValues(ctx context.Context, t *dialects.Table, tests []dialects.ValueTest) ([]bool, error) {
	_, tdb, err := s.table(ctx, t.Name)
	if err != nil {
		return nil, err
	}
	var r renderer
	for i, ts := range tests {
		if len(ts.Columns) != len(ts.Row) || ts.Expr == nil {
			return nil, fault.New(fault.Internal, "value test %d: %d columns, %d values", i, len(ts.Columns), len(ts.Row))
		}
		obj := make(map[string]any, len(ts.Columns))
		for k, c := range ts.Columns {
			if isBuiltin(c) {
				return nil, fault.New(fault.Invalid, "a row scope on %q cannot hold a written value: the table sets it", c)
			}
			obj[c] = ts.Row[k]
		}
		data, err := encodeJSON(obj)
		if err != nil {
			return nil, fault.Wrap(fault.Invalid, err, "value cannot be stored as JSON")
		}
		if i > 0 {
			r.sb.WriteString(" UNION ALL ")
		}
		r.sb.WriteString("SELECT " + strconv.Itoa(i) + " FROM (SELECT ? AS data) AS v")
		r.args = append(r.args, data)
		if err := r.where(ts.Expr); err != nil {
			return nil, err
		}
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	held, err := sqlgen.QueryChecks(ctx, tdb.db, dialects.Stmt{SQL: r.sb.String(), Args: r.args}, len(tests))
	if err != nil {
		return nil, storageErr(ctx, err)
	}
	return held, nil
}
