package mi

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
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

// fileAggregate is an aggregate over table files computed as mini-app-mcp
// computes its query_aggregate: every file attached to one fresh
// connection, each source's rows (filtered by Where) chained with UNION
// ALL, and the aggregate taken over that chain in one statement. Grouped,
// the statement is
//
//	SELECT json_extract(data, ?) AS group_key, COUNT(*), <agg>
//	FROM (<sources>) GROUP BY group_key HAVING <Having>
//
// so Having, a row filter, reads data as SQLite's bare column: the value
// of the group's last row in scan order (files in order, each by rowid),
// or with a min or max aggregate the row that holds the least or greatest
// value. Aggregates are SQLite's own: a sum over text counts it as 0, min
// and max order null < numbers < text.
type fileAggregate struct {
	// Files are the table files, in source order (at most 10, SQLite's
	// attach limit).
	Files []string
	// Where filters each source's rows (nil: all rows).
	Where query.Expr
	// Func and Field are the aggregate: count (no field), or sum, avg, min
	// or max of a field. Grouped, an empty Func counts the group's rows.
	Func  query.AggFunc
	Field string
	// GroupBy is the field the rows are grouped by ("": one answer).
	GroupBy string
	// Having filters the groups (nil: all groups); only with GroupBy.
	Having query.Expr
}

// aggregateFiles runs a fileAggregate. Without GroupBy it answers one row
// holding the aggregate; grouped, one row per group: the key, the row
// count and the aggregate, in SQLite's GROUP BY order. Values are int64,
// float64, string or nil (a blob reads as nil).
//
// Conditions are those of a mini-app ListFilter, rendered as mini-app-mcp
// renders them: eq, in, ilike (its like: SQLite's LIKE, no escape
// character), array_contains and array_not_contains (json_each over the
// field's value), and, or. Numbers are bound as reals and booleans as 1
// or 0, as there; field paths are bound too.
func aggregateFiles(ctx context.Context, a fileAggregate) ([][]any, error) {
	if len(a.Files) == 0 {
		return nil, fault.New(fault.Invalid, "an aggregate needs at least one table file")
	}
	if a.GroupBy == "" && a.Having != nil {
		return nil, fault.New(fault.Invalid, "having needs a group")
	}
	var r renderer
	r.sb.WriteString("SELECT ")
	if a.GroupBy != "" {
		r.fileField(a.GroupBy)
		r.sb.WriteString(" AS group_key, COUNT(*), ")
	}
	switch {
	case a.Func == query.AggCount || a.Func == "" && a.GroupBy != "":
		r.sb.WriteString("COUNT(*)")
	case a.Func == query.AggSum || a.Func == query.AggAvg || a.Func == query.AggMin || a.Func == query.AggMax:
		if a.Field == "" {
			return nil, fault.New(fault.Invalid, "%s needs a field", a.Func)
		}
		r.sb.WriteString(strings.ToUpper(string(a.Func)) + "(")
		r.fileField(a.Field)
		r.sb.WriteByte(')')
	default:
		return nil, fault.New(fault.Unsupported, "aggregate function %q is not supported", string(a.Func))
	}
	r.sb.WriteString(" FROM (")
	for i := range a.Files {
		if i > 0 {
			r.sb.WriteString(" UNION ALL ")
		}
		r.sb.WriteString("SELECT id, data, created_at, updated_at FROM db_" + strconv.Itoa(i) + ".rows")
		if a.Where != nil {
			r.sb.WriteString(" WHERE ")
			if err := r.fileCond(a.Where); err != nil {
				return nil, err
			}
		}
	}
	r.sb.WriteByte(')')
	if a.GroupBy != "" {
		r.sb.WriteString(" GROUP BY group_key")
		if a.Having != nil {
			r.sb.WriteString(" HAVING ")
			if err := r.fileCond(a.Having); err != nil {
				return nil, err
			}
		}
	}
	return runFileAggregate(ctx, a.Files, r.sb.String(), r.args)
}

// AggregateTables runs a dialects.TableAggregate over tables of mi
// sources (this one and others: the drop-in mode's project and user
// scopes are two sources) as mini-app-mcp's query_aggregate runs it: its
// own statement over the table files attached to one connection (see
// fileAggregate), so every answer is upstream's. Each source resolves its
// own table's file; a table of another type is Unsupported, one that is
// not there NotFound.
func (s *Source) AggregateTables(ctx context.Context, tables []dialects.SourceTable, a dialects.TableAggregate) ([][]any, error) {
	fa := fileAggregate{Where: a.Where, Func: a.Func, Field: a.Field, GroupBy: a.GroupBy, Having: a.Having}
	for _, t := range tables {
		src, ok := t.Source.(*Source)
		if !ok {
			return nil, fault.New(fault.Unsupported, "mi: an aggregate over table files takes only mi tables")
		}
		f, err := src.tableFile(ctx, t.Table)
		if err != nil {
			return nil, err
		}
		fa.Files = append(fa.Files, f)
	}
	return aggregateFiles(ctx, fa)
}

// tableFile is the file of a table of the source, made with mini-app's
// layout if it is not there yet; NotFound without a schema.yaml.
func (s *Source) tableFile(ctx context.Context, name string) (string, error) {
	if _, _, err := s.table(ctx, name); err != nil {
		return "", err
	}
	return filepath.Clean(dbFile(s.dir, name)), nil
}

// runFileAggregate attaches the files to one in-memory connection as
// db_0, db_1, … and runs the statement there.
func runFileAggregate(ctx context.Context, files []string, stmt string, args []any) (out [][]any, err error) {
	db, err := sql.Open("sqlite", "file::memory:?_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, storageErr(ctx, err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, storageErr(ctx, err)
	}
	defer conn.Close()
	for i, f := range files {
		if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS db_"+strconv.Itoa(i), f); err != nil {
			return nil, storageErr(ctx, err)
		}
	}
	rs, err := conn.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, storageErr(ctx, err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, storageErr(ctx, err)
	}
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, storageErr(ctx, err)
		}
		for i, v := range vals {
			switch x := v.(type) {
			case []byte:
				vals[i] = nil // a blob
			case int64, float64, string, nil:
			case bool:
				vals[i] = int64(0)
				if x {
					vals[i] = int64(1)
				}
			default:
				return nil, fault.New(fault.Internal, "mi: unexpected aggregate value %T", v)
			}
		}
		out = append(out, vals)
	}
	return out, storageErr(ctx, rs.Err())
}

// fileField writes a field of the stored document, its path bound.
func (r *renderer) fileField(name string) {
	r.sb.WriteString("json_extract(data, ?)")
	r.args = append(r.args, jsonPath(name))
}

// fileCond writes a ListFilter condition as mini-app-mcp writes it: and
// and or always in parentheses, every field read with json_extract.
func (r *renderer) fileCond(e query.Expr) error {
	var items []query.Expr
	sep := ""
	switch x := e.(type) {
	case query.And:
		items, sep = x, " AND "
	case *query.And:
		if x != nil {
			items, sep = *x, " AND "
		}
	case query.Or:
		items, sep = x, " OR "
	case *query.Or:
		if x != nil {
			items, sep = *x, " OR "
		}
	case *query.Cond:
		if x != nil {
			return r.fileLeaf(x)
		}
	}
	if sep == "" || len(items) == 0 {
		return fault.New(fault.Invalid, "mi: a ListFilter condition cannot be %T", e)
	}
	r.sb.WriteByte('(')
	for i, it := range items {
		if i > 0 {
			r.sb.WriteString(sep)
		}
		if err := r.fileCond(it); err != nil {
			return err
		}
	}
	r.sb.WriteByte(')')
	return nil
}

func (r *renderer) fileLeaf(c *query.Cond) error {
	if len(c.Args) == 0 || (c.Op != query.In && len(c.Args) != 1) {
		return fault.New(fault.Invalid, "operator %s on field %q takes one value", c.Op, c.Column)
	}
	vals := make([]any, len(c.Args))
	for i, v := range c.Args {
		b, err := fileBind(c, v)
		if err != nil {
			return err
		}
		vals[i] = b
	}
	switch c.Op {
	case query.Eq:
		r.fileField(c.Column)
		r.sb.WriteString(" = ?")
	case query.In:
		r.fileField(c.Column)
		r.sb.WriteString(" IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ") + ")")
	case query.ILike:
		if _, ok := c.Args[0].(string); !ok {
			return fault.New(fault.Invalid, "operator %s on field %q needs a text pattern", c.Op, c.Column)
		}
		r.fileField(c.Column)
		r.sb.WriteString(" LIKE ?")
	case query.ArrayContains, query.ArrayNotContains:
		if c.Op == query.ArrayNotContains {
			r.sb.WriteString("NOT ")
		}
		r.sb.WriteString("EXISTS (SELECT 1 FROM json_each(")
		r.fileField(c.Column)
		r.sb.WriteString(") WHERE value = ?)")
	default:
		return fault.New(fault.Unsupported, "operator %q is not a ListFilter operator", c.Op)
	}
	r.args = append(r.args, vals...)
	return nil
}

// fileBind is a ListFilter value as mini-app-mcp binds it: text, a number
// as a real, a boolean as 1 or 0.
func fileBind(c *query.Cond, v any) (any, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case int:
		return float64(x), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, fault.Wrap(fault.Invalid, err, "field %q: value cannot be compared", c.Column)
		}
		return f, nil
	}
	return nil, fault.New(fault.Invalid, "field %q: a ListFilter value is text, a number or a boolean, not %T", c.Column, v)
}
