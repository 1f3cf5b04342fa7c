package sqlgen

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// A dialect whose statements differ in shape, not only in spelling, embeds
// a Builder in its own builder and takes over a part by implementing one of
// these interfaces; the parts it does not implement stay standard. Its
// builder holds what the parts need (a table's column types, say), which
// is why they are methods and not Syntax fields.
type (
	// CondWriter writes one comparison. neg is true under an odd number
	// of NOTs (only with Syntax.PushNot); top is true where the condition
	// needs no parentheses of its own.
	CondWriter interface {
		WriteCond(c *query.Cond, neg, top bool)
	}
	// InsertWriter writes a whole insert statement.
	InsertWriter interface {
		WriteInsert(p *query.Plan)
	}
	// SetValueWriter writes the new value of one column of an update.
	SetValueWriter interface {
		WriteSetValue(a query.Assign)
	}
)

// Builder accumulates SQL text and bound arguments. The first error sticks
// and later writes are ignored, so render code reads straight through and
// checks once, in Stmt. Init names its Syntax before any other method.
type Builder struct {
	sb   strings.Builder
	args []any
	err  error
	s    *Syntax
	ext  any
	// qualify, when set, is the table whose name each column of a
	// condition is written after (an upsert's update condition, where a
	// bare name would be ambiguous).
	qualify *query.Plan
	// mute, while set, binds values without writing any text: a read
	// whose text is kept (renderRead) binds its values through the same
	// code that wrote the text.
	mute bool
}

// Init makes b, empty, write s's syntax, with ext (the dialect's own
// builder that embeds b, or nil) in place of the parts it implements a
// writer interface for.
func (b *Builder) Init(s *Syntax, ext any) {
	b.s, b.ext = s, ext
}

// Render writes p's statement and returns it, as Stmt does.
func (b *Builder) Render(p *query.Plan) (dialects.Stmt, error) {
	if p == nil {
		return dialects.Stmt{}, fault.New(fault.Invalid, "no plan to render")
	}
	switch p.Action {
	case query.Read:
		return b.renderRead(p)
	case query.Insert:
		if w, ok := b.ext.(InsertWriter); ok {
			if len(p.OnConflict) > 0 {
				return dialects.Stmt{}, fault.New(fault.Unsupported, "upsert (on_conflict) is not supported by %s", b.s.Engine)
			}
			w.WriteInsert(p)
		} else {
			b.Insert(p)
		}
	case query.Update:
		b.Update(p)
	case query.Delete:
		b.Delete(p)
	default:
		return dialects.Stmt{}, fault.New(fault.Unsupported, "action %s is not supported", p.Action)
	}
	return b.Stmt()
}

// Stmt returns what was written, or the first error: a failed write, too
// many values for Syntax.MaxArgs, or Syntax.Verify's refusal.
func (b *Builder) Stmt() (dialects.Stmt, error) {
	return b.stmt(b.sb.String())
}

// stmt is Stmt of the text sql.
func (b *Builder) stmt(sql string) (dialects.Stmt, error) {
	if b.err != nil {
		return dialects.Stmt{}, b.err
	}
	if err := b.s.MaxArgs.exceeded(len(b.args)); err != nil {
		return dialects.Stmt{}, err
	}
	args := b.args
	if len(args) == 0 {
		args = nil // grow's room is no argument
	}
	st := dialects.Stmt{SQL: sql, Args: args}
	if b.s.Verify != nil {
		if err := b.s.Verify(st); err != nil {
			return dialects.Stmt{}, err
		}
	}
	return st, nil
}

// Fail records err unless an earlier error is recorded.
func (b *Builder) Fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// Str writes SQL text as it is; it must never hold a request value.
func (b *Builder) Str(s string) {
	if !b.mute {
		b.sb.WriteString(s)
	}
}

// Arg binds v and writes its placeholder. DEFAULT is not a value: it is
// refused here, and written by Value where it belongs.
func (b *Builder) Arg(v any) {
	if _, ok := v.(query.Default); ok {
		b.Fail(fault.New(fault.Invalid, "DEFAULT is only allowed as an insert or update value"))
		return
	}
	b.args = append(b.args, v)
	if b.mute {
		return
	}
	b.sb.WriteString(b.s.Placeholder)
	if b.s.Numbered {
		b.sb.WriteString(strconv.Itoa(len(b.args)))
	}
}

// Value writes an insert or update value: DEFAULT, NULL with
// Syntax.NullKeyword, or else a placeholder.
func (b *Builder) Value(v any) {
	switch v.(type) {
	case query.Default:
		b.Str("DEFAULT")
	case nil:
		if b.s.NullKeyword {
			b.Str("NULL")
			return
		}
		b.Arg(v)
	default:
		b.Arg(v)
	}
}

// checkIdent applies the Syntax's identifier check.
func (b *Builder) checkIdent(name string) error {
	if b.s.CheckIdent != nil {
		return b.s.CheckIdent(name)
	}
	return CheckIdent(name)
}

// Ident writes a quoted identifier, or fails if the engine cannot take the
// name.
func (b *Builder) Ident(name string) {
	if b.mute {
		return // checked before the text was taken (renderRead)
	}
	if err := b.checkIdent(name); err != nil {
		b.Fail(err)
		return
	}
	s := b.s
	b.sb.WriteByte(s.QuoteOpen)
	from := 0
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == s.QuoteClose || c == s.QuoteEscape {
			b.sb.WriteString(name[from:i])
			b.sb.WriteByte(s.QuoteEscape)
			from = i
		}
	}
	b.sb.WriteString(name[from:])
	b.sb.WriteByte(s.QuoteClose)
}

// Qualify makes every column of the conditions written next follow table
// p's name (its alias, for a plan naming only a Table), as in an upsert's
// update condition where a bare name would be ambiguous; nil ends it.
func (b *Builder) Qualify(p *query.Plan) { b.qualify = p }

// Col writes a column of a condition: its quoted name, after its table's
// when conditions are qualified.
func (b *Builder) Col(name string) {
	if b.qualify != nil {
		b.Table(b.qualify)
		b.Str(".")
	}
	b.Ident(name)
}

// Table writes schema.table, or just table when the plan names no schema.
func (b *Builder) Table(p *query.Plan) {
	if p.Schema != "" {
		b.Ident(p.Schema)
		b.Str(".")
	}
	b.Ident(p.Table)
}

// List writes item(0) to item(n-1), separated by commas.
func (b *Builder) List(n int, item func(i int)) {
	for i := range n {
		if i > 0 {
			b.Str(", ")
		}
		item(i)
	}
}

// Columns writes names[i], for each i in keep, as a list of identifiers; a
// nil keep writes every name.
func (b *Builder) Columns(names []string, keep []int) {
	b.List(count(names, keep), func(k int) { b.Ident(names[at(keep, k)]) })
}

// count is how many of names keep keeps; a nil keep keeps them all.
func count(names []string, keep []int) int {
	if keep == nil {
		return len(names)
	}
	return len(keep)
}

// at is the index of the k-th name keep keeps.
func at(keep []int, k int) int {
	if keep == nil {
		return k
	}
	return keep[k]
}

// Read writes a SELECT with its filter, order and page, or an aggregate
// read (see Aggregate).
func (b *Builder) Read(p *query.Plan) {
	if p.IsAggregate() {
		b.Aggregate(p)
		return
	}
	b.grow(p)
	b.Str("SELECT ")
	if len(p.Columns) == 0 {
		// The engine always fills the projection; * is the neutral fallback.
		b.Str("*")
	}
	b.Columns(p.Columns, nil)
	b.Str(" FROM ")
	b.Table(p)
	b.Where(p.Where)
	b.orderPage(p)
}

// grow makes room, before a read is written, for its text and a few bound
// values, so the statement is written without growing its buffer again
// and again.
func (b *Builder) grow(p *query.Plan) {
	n := 64 + len(p.Schema) + len(p.Table)
	for _, c := range p.Columns {
		n += len(c) + 4
	}
	for _, o := range p.Order {
		n += len(o.Column) + 8
	}
	b.sb.Grow(n)
	if b.args == nil {
		b.args = make([]any, 0, 4)
	}
}

// orderPage writes a read's ORDER BY and page.
func (b *Builder) orderPage(p *query.Plan) {
	if b.s.OffsetFetch {
		// OFFSET … FETCH belongs to the ORDER BY, which depends on the
		// page: the page is checked first.
		if b.checkPage(p) {
			b.order(p.Order)
			b.offsetFetch(p)
		}
		return
	}
	b.order(p.Order)
	if b.checkPage(p) {
		b.limitOffset(p)
	}
}

// checkPage refuses a negative page size or number.
func (b *Builder) checkPage(p *query.Plan) bool {
	if p.Limit < 0 || p.Offset < 0 {
		b.Fail(fault.New(fault.Invalid, "page size and page number must not be negative"))
		return false
	}
	return true
}

func (b *Builder) order(order []query.Order) {
	asc, desc := " ASC", " DESC"
	if b.s.NullsLargest {
		asc, desc = " ASC NULLS LAST", " DESC NULLS FIRST"
	}
	if len(order) > 0 {
		b.Str(" ORDER BY ")
	}
	b.List(len(order), func(i int) {
		b.Ident(order[i].Column)
		if order[i].Desc {
			b.Str(desc)
		} else {
			b.Str(asc)
		}
	})
}

// limitOffset writes LIMIT and OFFSET. OFFSET is left out when it is 0,
// so a query has two statements at most: its first page and every later
// page. Both are bound arguments, never literals, so paging does not
// make a statement per page. Leaving a zero OFFSET out matters to
// PostgreSQL: with an OFFSET parameter its plan cache never settles on
// the generic plan (the unknown offset makes the generic plan look
// dearer than a fresh one), so every execution was planned again;
// with LIMIT $n alone the first page and a read by key are planned once.
func (b *Builder) limitOffset(p *query.Plan) {
	switch {
	case p.Limit > 0:
		b.Str(" LIMIT ")
		b.Arg(p.Limit)
		if p.Offset == 0 {
			return
		}
		b.Str(" OFFSET ")
	case p.Offset == 0:
		return
	case b.s.NoLimit != "":
		b.Str(" LIMIT ")
		b.Str(b.s.NoLimit)
		b.Str(" OFFSET ")
	case b.s.NoLimitArg != nil:
		b.Str(" LIMIT ")
		b.Arg(b.s.NoLimitArg)
		b.Str(" OFFSET ")
	default:
		b.Str(" OFFSET ")
	}
	b.Arg(p.Offset)
}

// offsetFetch writes OFFSET … FETCH. OFFSET is written even when it is 0,
// so every page of a query shares one cached plan.
func (b *Builder) offsetFetch(p *query.Plan) {
	if p.Limit == 0 && p.Offset == 0 {
		return
	}
	if len(p.Order) == 0 {
		// A constant order leaves the rows in the database's order, as
		// the plan asked.
		b.Str(" ORDER BY (SELECT NULL)")
	}
	b.Str(" OFFSET ")
	b.Arg(p.Offset)
	b.Str(" ROWS")
	if p.Limit > 0 {
		b.Str(" FETCH NEXT ")
		b.Arg(p.Limit)
		b.Str(" ROWS ONLY")
	}
}

// Insert writes INSERT INTO t (columns) VALUES (…), … with Syntax.Output
// and Syntax.Returning, or DEFAULT VALUES for a row without column values.
func (b *Builder) Insert(p *query.Plan) {
	var keep []int // nil: every column
	if b.s.OmitDefaultColumns {
		var ok bool
		if keep, ok = b.InsertColumns(p); !ok {
			return
		}
		for _, c := range p.Columns {
			if err := b.checkIdent(c); err != nil {
				b.Fail(err) // also the columns keep leaves out
				return
			}
		}
	} else if !b.checkRowCount(p) {
		return
	}
	b.Str("INSERT INTO ")
	b.Table(p)
	if count(p.Columns, keep) == 0 && b.s.DefaultValues {
		if len(p.OnConflict) > 0 {
			b.Fail(fault.New(fault.Invalid, "an upsert needs the values of its conflict columns"))
			return
		}
		if len(p.Rows) > 1 {
			b.Fail(fault.New(fault.Unsupported, "inserting several rows with no column values is not supported by %s", b.s.Engine))
			return
		}
		if len(p.Rows[0]) != len(p.Columns) {
			b.Fail(fault.New(fault.Invalid, "insert row has %d values for 0 columns", len(p.Rows[0])))
			return
		}
		b.Str(b.s.Output)
		b.Str(" DEFAULT VALUES")
		b.Str(b.s.Returning)
		return
	}
	b.Str(" (")
	b.Columns(p.Columns, keep)
	b.Str(")")
	b.Str(b.s.Output)
	b.Str(" VALUES ")
	for r, row := range p.Rows {
		if !b.checkRow(p, r) {
			return
		}
		if r > 0 {
			b.Str(", ")
		}
		b.Str("(")
		b.List(count(p.Columns, keep), func(k int) { b.Value(row[at(keep, k)]) })
		b.Str(")")
	}
	b.upsert(p)
	b.Str(b.s.Returning)
}

// InsertColumns checks an insert's rows (at least one, at most
// Syntax.MaxRows, each as long as the column list) and returns the indexes
// of the columns that have a value other than DEFAULT in at least one row:
// a column that is DEFAULT in every row can be left out of the statement.
func (b *Builder) InsertColumns(p *query.Plan) (keep []int, ok bool) {
	if !b.checkRowCount(p) {
		return nil, false
	}
	for r := range p.Rows {
		if !b.checkRow(p, r) {
			return nil, false
		}
	}
	keep = make([]int, 0, len(p.Columns))
	for c := range p.Columns {
		for _, row := range p.Rows {
			if _, def := row[c].(query.Default); !def {
				keep = append(keep, c)
				break
			}
		}
	}
	return keep, true
}

// checkRowCount refuses an insert without rows or with more than
// Syntax.MaxRows.
func (b *Builder) checkRowCount(p *query.Plan) bool {
	if len(p.Rows) == 0 {
		b.Fail(fault.New(fault.Invalid, "insert needs at least one row"))
		return false
	}
	if err := b.s.MaxRows.exceeded(len(p.Rows)); err != nil {
		b.Fail(err)
		return false
	}
	return true
}

// checkRow refuses insert row r unless it has a value for every column.
func (b *Builder) checkRow(p *query.Plan, r int) bool {
	if len(p.Rows[r]) != len(p.Columns) {
		b.Fail(fault.New(fault.Invalid, "insert row %d has %d values for %d columns", r, len(p.Rows[r]), len(p.Columns)))
		return false
	}
	return true
}

// Update writes UPDATE t SET … WHERE …, or the ALTER TABLE … UPDATE
// mutation.
func (b *Builder) Update(p *query.Plan) {
	if len(p.Set) == 0 {
		b.Fail(fault.New(fault.Invalid, "update needs at least one column to set"))
		return
	}
	b.GuardUnfiltered(p)
	b.target(p, "UPDATE ", " SET ", " UPDATE ")
	b.List(len(p.Set), func(i int) {
		a := p.Set[i]
		b.Ident(a.Column)
		b.Str(" = ")
		if w, ok := b.ext.(SetValueWriter); ok {
			w.WriteSetValue(a)
		} else {
			b.Value(a.Value)
		}
	})
	b.filter(p.Where)
	b.returning(p)
}

// Delete writes DELETE FROM t WHERE …, or the ALTER TABLE … DELETE
// mutation.
func (b *Builder) Delete(p *query.Plan) {
	b.GuardUnfiltered(p)
	b.target(p, "DELETE FROM ", "", " DELETE")
	b.filter(p.Where)
	b.returning(p)
}

// target writes the table an update or delete acts on, between before and
// after, or with Syntax.Mutations as ALTER TABLE t and mutation.
func (b *Builder) target(p *query.Plan, before, after, mutation string) {
	if b.s.Mutations {
		before, after = "ALTER TABLE ", mutation
	}
	b.Str(before)
	b.Table(p)
	b.Str(after)
}

// GuardUnfiltered refuses an update or delete of every row unless the plan
// says so with All: the engine checks this first, the renderer makes sure a
// missed check cannot reach the database.
func (b *Builder) GuardUnfiltered(p *query.Plan) {
	if p.Where == nil && !p.All {
		b.Fail(fault.New(fault.Invalid, "%s without a filter needs all=true", p.Action))
	}
}

// filter writes an update's or delete's WHERE: the mutation form with
// Syntax.Mutations, else as Where.
func (b *Builder) filter(e query.Expr) {
	if !b.s.Mutations {
		b.Where(e)
		return
	}
	b.Str(" WHERE ")
	if e == nil {
		b.Str("1")
		return
	}
	b.MutationCond(e)
}

// MutationCond writes a mutation's condition as ifNull(…, 0), so that it
// is never NULL: with NOT pushed down (Syntax.PushNot), NULL and false
// mean the same, and a mutation must not see the NULL.
func (b *Builder) MutationCond(e query.Expr) {
	b.Str("ifNull(")
	b.Expr(e, false, true)
	b.Str(", 0)")
}

// ValueChecks writes the statement behind dialects.ValueChecker: one
// SELECT per test over a derived table of the test's values, each written
// by cast converted to its column's type and named after the column, kept
// by the test's condition, all joined by UNION ALL. It answers the index of
// every test whose row satisfies its condition:
//
//	SELECT 0 FROM (SELECT CAST(? AS numeric(6,2)) AS "amount") AS "v" WHERE "amount" < ? UNION ALL …
//
// The condition is written exactly as a WHERE on the table, so the
// comparisons are the ones the database makes on stored rows.
func (b *Builder) ValueChecks(tests []dialects.ValueTest, cast func(col string, v any)) {
	if len(tests) == 0 {
		b.Fail(fault.New(fault.Internal, "no value test to render"))
		return
	}
	for i, t := range tests {
		if len(t.Columns) == 0 || len(t.Columns) != len(t.Row) || t.Expr == nil {
			b.Fail(fault.New(fault.Internal, "value test %d: %d columns, %d values", i, len(t.Columns), len(t.Row)))
			return
		}
		if i > 0 {
			b.Str(" UNION ALL ")
		}
		b.Str("SELECT " + strconv.Itoa(i) + " FROM (SELECT ")
		b.List(len(t.Columns), func(k int) {
			cast(t.Columns[k], t.Row[k])
			b.Str(" AS ")
			b.Ident(t.Columns[k])
		})
		b.Str(") AS ")
		b.Ident("v")
		b.Where(t.Expr)
	}
}

// CastChecks renders ValueChecks for an engine whose CAST takes any
// column type as declared (PostgreSQL, SQL Server): each value becomes
// CAST(value AS <the column's DBType>).
func CastChecks(s *Syntax, t *dialects.Table, tests []dialects.ValueTest) (dialects.Stmt, error) {
	var b Builder
	b.Init(s, nil)
	b.ValueChecks(tests, func(col string, v any) {
		c, ok := t.Column(col)
		if !ok {
			b.Fail(fault.New(fault.Internal, "value check: no column %q in %s", col, t.Name))
			return
		}
		b.Str("CAST(")
		b.Value(v)
		b.Str(" AS " + c.DBType + ")")
	})
	return b.Stmt()
}

// CheckedIndexes turns the indexes a ValueChecks statement answered into
// one outcome per test.
func CheckedIndexes(n int, answered []int64) ([]bool, error) {
	out := make([]bool, n)
	for _, i := range answered {
		if i < 0 || i >= int64(n) {
			return nil, fault.New(fault.Internal, "value check answered test %d of %d", i, n)
		}
		out[i] = true
	}
	return out, nil
}

// SQLQuerier is a database/sql pool, connection or transaction.
type SQLQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// QueryChecks runs a ValueChecks statement of n tests on a database/sql
// querier and returns each test's outcome; a driver error is returned as
// it is, for the dialect to map.
func QueryChecks(ctx context.Context, q SQLQuerier, st dialects.Stmt, n int) ([]bool, error) {
	rs, err := q.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var got []int64
	for rs.Next() {
		var i int64
		if err := rs.Scan(&i); err != nil {
			return nil, err
		}
		got = append(got, i)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	return CheckedIndexes(n, got)
}
