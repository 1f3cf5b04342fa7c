package mi

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// aggregate renders an aggregate read (query.Plan.IsAggregate). Fields are
// read with json_extract, so SQLite aggregates the JSON values as they are
// stored: integers sum to an integer, any real makes the sum real, avg is
// always real, min and max order NULL < numbers < text; a boolean is 1 or
// 0. Groups are numbered in GROUP BY, so each path is bound once. With
// Having, the grouped SELECT becomes a derived table whose result columns
// the having condition, the order and the page name:
//
//	SELECT * FROM (SELECT json_extract(data, ?) AS "tag", count(*) AS "n" FROM rows GROUP BY 1) WHERE "n" > ?
func (r *renderer) aggregate(p *query.Plan) error {
	if len(p.Columns) > 0 {
		return fault.New(fault.Invalid, "an aggregate read has no column list")
	}
	if len(p.Aggregates) == 0 {
		return fault.New(fault.Invalid, "an aggregate read needs at least one aggregate")
	}
	if p.Limit < 0 || p.Offset < 0 {
		return fault.New(fault.Invalid, "page size and page number must not be negative")
	}
	if p.Having != nil {
		r.sb.WriteString("SELECT * FROM (")
	}
	r.sb.WriteString("SELECT ")
	for i, g := range p.GroupBy {
		if i > 0 {
			r.sb.WriteString(", ")
		}
		if err := r.ref(g); err != nil {
			return err
		}
		if err := r.as(g); err != nil {
			return err
		}
	}
	for i, a := range p.Aggregates {
		if i > 0 || len(p.GroupBy) > 0 {
			r.sb.WriteString(", ")
		}
		switch a.Func {
		case query.AggCount, query.AggSum, query.AggAvg, query.AggMin, query.AggMax:
		default:
			return fault.New(fault.Unsupported, "aggregate function %q is not supported", string(a.Func))
		}
		if a.Column == "" {
			if a.Func != query.AggCount {
				return fault.New(fault.Invalid, "%s needs a column", a.Func)
			}
			r.sb.WriteString("count(*)")
		} else {
			r.sb.WriteString(string(a.Func) + "(")
			if err := r.ref(a.Column); err != nil {
				return err
			}
			r.sb.WriteByte(')')
		}
		if err := r.as(a.Alias); err != nil {
			return err
		}
	}
	r.sb.WriteString(" FROM rows")
	if err := r.where(p.Where); err != nil {
		return err
	}
	for i := range p.GroupBy {
		if i == 0 {
			r.sb.WriteString(" GROUP BY ")
		} else {
			r.sb.WriteString(", ")
		}
		r.sb.WriteString(strconv.Itoa(i + 1))
	}
	// From here on, names are the result's columns.
	r.result = true
	if p.Having != nil {
		r.sb.WriteByte(')')
		if err := r.where(p.Having); err != nil {
			return err
		}
	}
	return r.orderPage(p)
}

// as writes " AS " and name as a quoted identifier.
func (r *renderer) as(name string) error {
	r.sb.WriteString(" AS ")
	return r.ident(name)
}

// ident writes a quoted SQLite identifier.
func (r *renderer) ident(name string) error {
	if err := sqlgen.CheckIdent(name); err != nil {
		return err
	}
	r.sb.WriteByte('"')
	r.sb.WriteString(strings.ReplaceAll(name, `"`, `""`))
	r.sb.WriteByte('"')
	return nil
}

// readAggregate runs an aggregate read in the table file: SQLite computes
// it, and only the groups come back. Cells are SQLite's values: int64,
// float64, string (text, and arrays or objects as their JSON) or nil.
func (s *Source) readAggregate(ctx context.Context, p *query.Plan) (dialects.Rows, error) {
	sc, t, err := s.table(ctx, p.Table)
	if err != nil {
		return nil, err
	}
	st, err := Dialect{}.Render(p)
	if err != nil {
		return nil, err
	}
	cols := dialects.AggregateColumns(&dialects.Table{Name: p.Table, Columns: sc.columns}, p)
	ctx, cancel := s.withTimeout(ctx)
	rs, err := t.db.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		cancel()
		return nil, storageErr(ctx, err)
	}
	r := &aggRows{ctx: ctx, cancel: cancel, rs: rs, cols: cols, vals: make([]any, len(cols)), ptrs: make([]any, len(cols))}
	for i := range r.vals {
		r.ptrs[i] = &r.vals[i]
	}
	return r, nil
}

// aggRows streams the groups of an aggregate read.
type aggRows struct {
	ctx    context.Context
	cancel context.CancelFunc
	rs     *sql.Rows
	cols   []dialects.Column
	vals   []any
	ptrs   []any
	err    error
}

func (r *aggRows) Columns() []dialects.Column { return r.cols }

func (r *aggRows) Next() bool { return r.err == nil && r.rs.Next() }

func (r *aggRows) Values() ([]any, error) {
	clear(r.vals)
	if err := r.rs.Scan(r.ptrs...); err != nil {
		r.err = storageErr(r.ctx, err)
		return nil, r.err
	}
	for i, v := range r.vals {
		if b, ok := v.([]byte); ok {
			r.vals[i] = string(b)
		}
	}
	return r.vals, nil
}

func (r *aggRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return storageErr(r.ctx, r.rs.Err())
}

func (r *aggRows) Close() error {
	err := r.rs.Close()
	r.cancel()
	return storageErr(r.ctx, err)
}

var _ dialects.Rows = (*aggRows)(nil)
