package ma

import (
	"context"
	"database/sql"
	"math"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// Estimate answers the optimizer's estimate of the rows a read selects:
// EXPLAIN of the read's own statement, its rows times filtered/100 (the
// share of the examined rows the WHERE keeps), from the table and index
// statistics InnoDB keeps (what information_schema.TABLES.TABLE_ROWS
// shows for a read without a filter). A read the optimizer proves empty
// from a unique key (EXPLAIN answers no rows figure) is estimated as 0.
// Nothing is read.
func (s *Source) Estimate(ctx context.Context, p *query.Plan) (int64, error) {
	p, err := s.plan(p)
	if err != nil {
		return 0, err
	}
	qctx, cancel := s.bound(ctx)
	defer cancel()
	meta, err := s.tableMeta(qctx, p.Table)
	if err != nil {
		return 0, s.err(qctx, err)
	}
	st, err := Dialect{}.Render(adapt(p, meta))
	if err != nil {
		return 0, err
	}
	rs, release, err := s.queryOn(qctx, nil, "EXPLAIN "+st.SQL, st.Args)
	if err != nil {
		return 0, s.err(qctx, err)
	}
	defer release()
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return 0, s.err(qctx, err)
	}
	if !rs.Next() {
		return 0, s.err(qctx, rs.Err())
	}
	vals := make([]sql.NullFloat64, len(cols))
	dest := make([]any, len(cols))
	for i, c := range cols {
		if c == "rows" || c == "filtered" {
			dest[i] = &vals[i]
		} else {
			dest[i] = new(sql.RawBytes)
		}
	}
	if err := rs.Scan(dest...); err != nil {
		return 0, s.err(qctx, err)
	}
	rows, filtered := -1.0, 100.0
	for i, c := range cols {
		switch {
		case c == "rows" && vals[i].Valid:
			rows = vals[i].Float64
		case c == "filtered" && vals[i].Valid:
			filtered = vals[i].Float64
		}
	}
	if rows < 0 {
		// No rows figure: the optimizer proved the read empty from the
		// keys alone ("Impossible WHERE noticed after reading const
		// tables", "no matching row in const table").
		return 0, nil
	}
	return int64(math.Round(rows * filtered / 100)), nil
}

var _ dialects.Estimator = (*Source)(nil)
