package ch

import (
	"regexp"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// maxInsertRows bounds one insert. Rows travel as one INSERT … SELECT …
// UNION ALL SELECT … statement, and ClickHouse analyses every branch: ten
// thousand rows take seconds on an 18.x server.
const maxInsertRows = 10000

// Dialect renders plans for ClickHouse: identifiers in backticks, values as
// ? placeholders that clickhouse-go fills in on the client (it quotes and
// escapes each value itself), LIMIT … OFFSET … paging, inserts as
// INSERT … SELECT … UNION ALL SELECT … (INSERT … VALUES hangs with the
// driver on 18.x servers), updates and deletes as ALTER TABLE … UPDATE /
// DELETE mutations, and no RETURNING. It holds no state; the zero value is
// ready to use.
//
// Render knows nothing of column types, so it binds values as they come.
// The Source renders the same statements with the table's column types
// known, which types values in SQL where ClickHouse needs it (see
// bindValue) and fills DEFAULT cells; Render refuses those.
type Dialect struct{}

// Name returns the type code "ch".
func (Dialect) Name() string { return "ch" }

// Render turns a validated plan into one statement. Every request value
// becomes a bound argument; identifiers are quoted, never checked against a
// catalog (the engine has done that).
func (Dialect) Render(p *query.Plan) (dialects.Stmt, error) {
	return render(p, nil)
}

// tableInfo is what the Source knows of a table when it renders: each
// column's type and default.
type tableInfo struct {
	cols map[string]*colInfo
}

// colInfo is one column of a tableInfo.
type colInfo struct {
	typ         *colType
	defaultKind string // DEFAULT, MATERIALIZED, ALIAS or ""
	defaultExpr string
}

// render renders a plan; info is nil for the type-blind Render.
func render(p *query.Plan, info *tableInfo) (dialects.Stmt, error) {
	if p == nil {
		return dialects.Stmt{}, fault.New(fault.Invalid, "no plan to render")
	}
	b := builder{info: info}
	switch p.Action {
	case query.Read:
		b.read(p)
	case query.Insert:
		b.insert(p)
	case query.Update:
		b.update(p)
	case query.Delete:
		b.delete(p)
	default:
		return dialects.Stmt{}, fault.New(fault.Unsupported, "action %s is not supported", p.Action)
	}
	return b.stmt()
}

// renderCount renders what an update or delete is checked with before its
// mutation is submitted: SELECT count() over the rows it will change. For
// an update it also computes, on those rows, the expression the mutation
// will compute (if(filter, new value, column), which NOT ignore(…) evaluates
// and drops), so that a value the column cannot take, or an expression the
// server cannot mutate with, fails here and not in the background
// mutation, where a failure retries forever and blocks the table's later
// mutations (18.x cannot kill one).
func renderCount(p *query.Plan, info *tableInfo) (dialects.Stmt, error) {
	if p == nil || (p.Action != query.Update && p.Action != query.Delete) {
		return dialects.Stmt{}, fault.New(fault.Invalid, "only an update or delete is counted")
	}
	b := builder{info: info}
	b.guardUnfiltered(p)
	if p.Action == query.Update && len(p.Set) == 0 {
		b.fail(fault.New(fault.Invalid, "update needs at least one column to set"))
	}
	b.str("SELECT count() FROM ")
	b.table(p)
	check := p.Action == query.Update
	if p.Where != nil {
		b.str(" WHERE ")
		b.mutationCond(p.Where)
	}
	if check {
		if p.Where != nil {
			b.str(" AND ")
		} else {
			b.str(" WHERE ")
		}
		b.str("NOT ignore(")
		for i, a := range p.Set {
			if i > 0 {
				b.str(", ")
			}
			b.str("if(")
			if p.Where != nil {
				b.mutationCond(p.Where)
			} else {
				b.str("1")
			}
			b.str(", ")
			b.setValue(a)
			b.str(", ")
			b.ident(a.Column)
			b.str(")")
		}
		b.str(")")
	}
	return b.stmt()
}

// paramsPattern is how clickhouse-go recognizes a server-side query
// parameter ({name:Type}); a statement that matches it would not have its
// ? placeholders filled.
var paramsPattern = regexp.MustCompile("{.+:.+}")

// builder accumulates SQL text and arguments; the first error sticks and
// later writes are ignored, so render code reads straight through.
type builder struct {
	sb   strings.Builder
	args []any
	err  error
	info *tableInfo
}

func (b *builder) stmt() (dialects.Stmt, error) {
	if b.err != nil {
		return dialects.Stmt{}, b.err
	}
	sql := b.sb.String()
	if len(b.args) > 0 && paramsPattern.MatchString(sql) {
		return dialects.Stmt{}, fault.New(fault.Unsupported, "an identifier or default with {…:…} in it cannot be used with bound values")
	}
	return dialects.Stmt{SQL: sql, Args: b.args}, nil
}

func (b *builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *builder) str(s string) { b.sb.WriteString(s) }

// column returns what is known of a column, nil when rendering type-blind
// or when the column is not in the table info.
func (b *builder) column(name string) *colInfo {
	if b.info == nil {
		return nil
	}
	return b.info.cols[name]
}

// arg binds v as it is and writes its placeholder.
func (b *builder) arg(v any) {
	if _, ok := v.(query.Default); ok {
		b.fail(fault.New(fault.Invalid, "DEFAULT is only allowed as an insert or update value"))
		return
	}
	b.args = append(b.args, v)
	b.str("?")
}

// value binds v for column col, typed when the column's type is known.
func (b *builder) value(col string, v any, u use) {
	c := b.column(col)
	if _, ok := v.(query.Default); ok || c == nil {
		b.arg(v)
		return
	}
	bv, err := bindValue(col, c.typ, v, u)
	if err != nil {
		b.fail(err)
		return
	}
	b.str(bv.pre)
	b.args = append(b.args, bv.arg)
	b.str("?")
	b.str(bv.post)
}

// defaultValue writes what a DEFAULT cell stands for in a column: its
// default expression, or else the type's default value (NULL for a
// Nullable column). Only known with the column's type.
func (b *builder) defaultValue(col string, forUpdate bool) {
	c := b.column(col)
	if c == nil {
		b.fail(fault.New(fault.Unsupported, "DEFAULT for column %q needs the table's column types (ClickHouse has no DEFAULT keyword in a SELECT or a mutation)", col))
		return
	}
	t := c.typ
	switch {
	case c.defaultExpr != "" && (c.defaultKind == "DEFAULT" || c.defaultKind == "MATERIALIZED"):
		b.str("CAST((" + c.defaultExpr + ") AS " + t.castType() + ")")
	case forUpdate:
		b.str("defaultValueOfArgumentType(")
		b.ident(col)
		b.str(")")
	case t.nullable:
		b.str("CAST(NULL AS " + t.castType() + ")")
	case t.name == "Array":
		b.str("CAST([] AS " + t.castType() + ")")
	default:
		b.str("assumeNotNull(CAST(NULL AS Nullable(" + t.base + ")))")
	}
}

// ident writes a backquoted identifier, with backslashes and backquotes
// escaped by a backslash.
func (b *builder) ident(name string) {
	switch {
	case name == "":
		b.fail(fault.New(fault.Invalid, "empty identifier"))
		return
	case strings.IndexByte(name, 0) >= 0:
		b.fail(fault.New(fault.Invalid, "identifier contains a NUL byte"))
		return
	}
	b.sb.WriteByte('`')
	if strings.ContainsAny(name, "`\\") {
		name = identEscaper.Replace(name)
	}
	b.sb.WriteString(name)
	b.sb.WriteByte('`')
}

var identEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`")

// table writes `database`.`table`, or just `table` when the plan names no
// database.
func (b *builder) table(p *query.Plan) {
	if p.Schema != "" {
		b.ident(p.Schema)
		b.sb.WriteByte('.')
	}
	b.ident(p.Table)
}

func (b *builder) read(p *query.Plan) {
	b.str("SELECT ")
	if len(p.Columns) == 0 {
		// The engine always fills the projection; * is the neutral fallback.
		b.str("*")
	}
	for i, c := range p.Columns {
		if i > 0 {
			b.str(", ")
		}
		b.ident(c)
	}
	b.str(" FROM ")
	b.table(p)
	b.where(p.Where)
	for i, o := range p.Order {
		if i == 0 {
			b.str(" ORDER BY ")
		} else {
			b.str(", ")
		}
		b.ident(o.Column)
		// NULLs sort as PostgreSQL sorts them: as if larger than any value.
		if o.Desc {
			b.str(" DESC NULLS FIRST")
		} else {
			b.str(" ASC NULLS LAST")
		}
	}
	if p.Limit < 0 || p.Offset < 0 {
		b.fail(fault.New(fault.Invalid, "page size and page number must not be negative"))
		return
	}
	switch {
	case p.Limit > 0:
		b.str(" LIMIT ")
		b.arg(p.Limit)
		b.str(" OFFSET ")
		b.arg(p.Offset)
	case p.Offset > 0:
		// ClickHouse has no OFFSET without LIMIT; 18.x fails on a limit
		// near 2^63, so "no limit" is 2^62 rows.
		b.str(" LIMIT ")
		b.arg(int64(1 << 62))
		b.str(" OFFSET ")
		b.arg(p.Offset)
	}
}

// insert writes INSERT INTO t (cols) SELECT …, … UNION ALL SELECT …, …: one
// statement, so ClickHouse writes the rows as one block, and a form every
// server version since 1.1 accepts. A column that is DEFAULT in every row is
// left out, and ClickHouse fills it itself per row (its default expression,
// or its type's default value); a DEFAULT cell in a column that has values
// in other rows is rendered as that column's default, which needs the
// table's column types.
func (b *builder) insert(p *query.Plan) {
	if len(p.Rows) == 0 {
		b.fail(fault.New(fault.Invalid, "insert needs at least one row"))
		return
	}
	if len(p.Rows) > maxInsertRows {
		b.fail(fault.New(fault.TooLarge, "insert has %d rows, ClickHouse inserts at most %d in one statement here", len(p.Rows), maxInsertRows))
		return
	}
	for r, row := range p.Rows {
		if len(row) != len(p.Columns) {
			b.fail(fault.New(fault.Invalid, "insert row %d has %d values for %d columns", r, len(row), len(p.Columns)))
			return
		}
	}
	keep := make([]int, 0, len(p.Columns))
	for i := range p.Columns {
		for _, row := range p.Rows {
			if _, def := row[i].(query.Default); !def {
				keep = append(keep, i)
				break
			}
		}
	}
	if len(keep) == 0 {
		b.fail(fault.New(fault.Unsupported, "ClickHouse cannot insert a row without any column value"))
		return
	}
	b.str("INSERT INTO ")
	b.table(p)
	b.str(" (")
	for n, i := range keep {
		if n > 0 {
			b.str(", ")
		}
		b.ident(p.Columns[i])
	}
	b.str(")")
	for r, row := range p.Rows {
		if r > 0 {
			b.str(" UNION ALL")
		}
		b.str(" SELECT ")
		for n, i := range keep {
			if n > 0 {
				b.str(", ")
			}
			if _, def := row[i].(query.Default); def {
				b.defaultValue(p.Columns[i], false)
				continue
			}
			b.value(p.Columns[i], row[i], inWrite)
		}
	}
}

// setValue writes the new value of one column of an update. With the
// column's type known it is materialized: 18.x fails to mutate a Nullable
// column with a constant Nullable value (if() rejects the pair), and a
// full column of the same value is what the mutation computes anyway.
func (b *builder) setValue(a query.Assign) {
	typed := b.column(a.Column) != nil
	if typed {
		b.str("materialize(")
	}
	if _, def := a.Value.(query.Default); def {
		b.defaultValue(a.Column, true)
	} else {
		b.value(a.Column, a.Value, inWrite)
	}
	if typed {
		b.str(")")
	}
}

// update writes an ALTER TABLE … UPDATE mutation.
func (b *builder) update(p *query.Plan) {
	if len(p.Set) == 0 {
		b.fail(fault.New(fault.Invalid, "update needs at least one column to set"))
		return
	}
	b.guardUnfiltered(p)
	b.str("ALTER TABLE ")
	b.table(p)
	b.str(" UPDATE ")
	for i, a := range p.Set {
		if i > 0 {
			b.str(", ")
		}
		b.ident(a.Column)
		b.str(" = ")
		b.setValue(a)
	}
	b.mutationWhere(p.Where)
}

// delete writes an ALTER TABLE … DELETE mutation.
func (b *builder) delete(p *query.Plan) {
	b.guardUnfiltered(p)
	b.str("ALTER TABLE ")
	b.table(p)
	b.str(" DELETE")
	b.mutationWhere(p.Where)
}

// mutationWhere writes the WHERE a mutation cannot do without.
func (b *builder) mutationWhere(e query.Expr) {
	b.str(" WHERE ")
	if e == nil {
		b.str("1")
		return
	}
	b.mutationCond(e)
}

// mutationCond writes a mutation's condition as ifNull(…, 0). A SELECT
// drops a row whose condition is NULL, but a mutation on 18.x does not
// look at the NULL: an UPDATE's if() and a DELETE's NOT take the value
// under it (whatever the column held before it became NULL), and change or
// delete rows the filter does not match. With NOT pushed down (see expr),
// NULL and false mean the same, so the condition is made never NULL.
func (b *builder) mutationCond(e query.Expr) {
	b.str("ifNull(")
	b.expr(e, false, true)
	b.str(", 0)")
}

// guardUnfiltered refuses an update or delete of every row unless the plan
// says so with All: the engine checks this first, the renderer makes sure a
// missed check cannot reach the database.
func (b *builder) guardUnfiltered(p *query.Plan) {
	if p.Where == nil && !p.All {
		b.fail(fault.New(fault.Invalid, "%s without a filter needs all=true", p.Action))
	}
}

func (b *builder) where(e query.Expr) {
	if e == nil {
		return
	}
	b.str(" WHERE ")
	b.expr(e, false, true)
}

// expr writes a condition. ClickHouse before 20.x does not follow SQL's
// three-valued logic (NULL AND 0 is NULL, so NOT (NULL AND 0) is not
// true), so NOT is never written around a condition: it is pushed down to
// the comparisons (De Morgan), which are negated one by one with the same
// NULL rules PostgreSQL has. Once no NOT is left above them, treating a
// NULL comparison as false gives the SQL answer, which every ClickHouse
// version computes. neg tells whether e is under an odd number of NOTs;
// top is true where no parentheses are needed around an AND/OR list.
func (b *builder) expr(e query.Expr, neg, top bool) {
	switch x := e.(type) {
	case *query.Cond:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.cond(x, neg, top)
	case query.And:
		b.list([]query.Expr(x), !neg, neg, top)
	case *query.And:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.list([]query.Expr(*x), !neg, neg, top)
	case query.Or:
		b.list([]query.Expr(x), neg, neg, top)
	case *query.Or:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.list([]query.Expr(*x), neg, neg, top)
	case query.Not:
		b.expr(x.X, !neg, top)
	case *query.Not:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.expr(x.X, !neg, top)
	default:
		b.fail(fault.New(fault.Invalid, "empty or unknown condition in filter"))
	}
}

// list writes items joined by AND (and is true) or OR, each negated when
// neg is true. An empty AND is true, an empty OR false.
func (b *builder) list(items []query.Expr, and, neg, top bool) {
	sep, empty := " OR ", "0"
	if and {
		sep, empty = " AND ", "1"
	}
	switch len(items) {
	case 0:
		b.str(empty)
		return
	case 1:
		b.expr(items[0], neg, top)
		return
	}
	if !top {
		b.str("(")
	}
	for i, it := range items {
		if i > 0 {
			b.str(sep)
		}
		b.expr(it, neg, false)
	}
	if !top {
		b.str(")")
	}
}

// comparison operators with one value, and their negations.
var (
	binaryOps = map[query.Op]string{
		query.Eq: " = ",
		query.Ne: " <> ",
		query.Gt: " > ",
		query.Ge: " >= ",
		query.Lt: " < ",
		query.Le: " <= ",
	}
	negated = map[query.Op]query.Op{
		query.Eq: query.Ne, query.Ne: query.Eq,
		query.Gt: query.Le, query.Le: query.Gt,
		query.Ge: query.Lt, query.Lt: query.Ge,
		query.IsNull: query.IsNotNull, query.IsNotNull: query.IsNull,
	}
)

// nullable reports whether a column may hold NULL; unknown columns may.
func (b *builder) nullable(col string) bool {
	c := b.column(col)
	return c == nil || c.typ.nullable
}

// open and close parenthesize a compound condition where it is not the
// whole filter.
func (b *builder) open(top bool) {
	if !top {
		b.str("(")
	}
}

func (b *builder) close(top bool) {
	if !top {
		b.str(")")
	}
}

func (b *builder) cond(c *query.Cond, neg, top bool) {
	need := func(n int) bool {
		if len(c.Args) != n {
			b.fail(fault.New(fault.Invalid, "operator %s on %q needs %d value(s), got %d", c.Op, c.Column, n, len(c.Args)))
			return false
		}
		return true
	}
	op := c.Op
	if n, ok := negated[op]; ok && neg {
		op, neg = n, false
	}
	if sym, ok := binaryOps[op]; ok {
		if need(1) {
			b.ident(c.Column)
			b.str(sym)
			b.value(c.Column, c.Args[0], inFilter)
		}
		return
	}
	switch op {
	case query.IsNull, query.IsNotNull:
		if need(0) {
			b.ident(c.Column)
			if op == query.IsNull {
				b.str(" IS NULL")
			} else {
				b.str(" IS NOT NULL")
			}
		}
	case query.IsTrue, query.IsFalse:
		if !need(0) {
			return
		}
		want := "1"
		if op == query.IsFalse {
			want = "0"
		}
		if !neg {
			b.ident(c.Column)
			b.str(" = " + want)
			return
		}
		// IS NOT TRUE / IS NOT FALSE hold for NULL too.
		other := "0"
		if want == "0" {
			other = "1"
		}
		if !b.nullable(c.Column) {
			b.ident(c.Column)
			b.str(" = " + other)
			return
		}
		b.open(top)
		b.ident(c.Column)
		b.str(" IS NULL OR ")
		b.ident(c.Column)
		b.str(" = " + other)
		b.close(top)
	case query.Like, query.ILike:
		if !need(1) {
			return
		}
		pat, ok := c.Args[0].(string)
		if !ok && b.info != nil {
			b.fail(fault.New(fault.Invalid, "filter %q: a like pattern must be text", c.Column))
			return
		}
		if b.info != nil && strings.IndexByte(pat, 0) >= 0 {
			// The server cuts the pattern at a NUL: it would match more.
			// (Checked with the values, like the other checks of bound
			// values; the type-blind Render keeps its SQL free of them.)
			b.fail(fault.New(fault.Invalid, "filter %q: a like pattern cannot hold a NUL byte in ClickHouse", c.Column))
			return
		}
		// ClickHouse's LIKE escapes with a backslash, as the pattern
		// grammar does; it has no ESCAPE clause. ILIKE came in 20.6, and
		// lower() is ASCII only: both sides are lowered as UTF-8.
		if op == query.ILike {
			b.str("lowerUTF8(")
		}
		b.likeTarget(c.Column)
		if op == query.ILike {
			b.str(")")
		}
		if neg {
			b.str(" NOT LIKE ")
		} else {
			b.str(" LIKE ")
		}
		if op == query.ILike {
			b.str("lowerUTF8(")
			b.arg(c.Args[0])
			b.str(")")
		} else {
			b.arg(c.Args[0])
		}
	case query.In, query.NotIn:
		in := (op == query.In) != neg
		if len(c.Args) == 0 {
			// x IN () is a syntax error; its meaning is constant.
			if in {
				b.str("0")
			} else {
				b.str("1")
			}
			return
		}
		// ClickHouse answers NULL NOT IN (…) with true; SQL with NULL.
		guard := !in && b.nullable(c.Column)
		if guard {
			b.open(top)
		}
		b.ident(c.Column)
		if in {
			b.str(" IN (")
		} else {
			b.str(" NOT IN (")
		}
		for i, v := range c.Args {
			if i > 0 {
				b.str(", ")
			}
			b.value(c.Column, v, inFilter)
		}
		b.str(")")
		if guard {
			b.str(" AND ")
			b.ident(c.Column)
			b.str(" IS NOT NULL")
			b.close(top)
		}
	case query.Between:
		if !need(2) {
			return
		}
		if !neg {
			b.ident(c.Column)
			b.str(" BETWEEN ")
			b.value(c.Column, c.Args[0], inFilter)
			b.str(" AND ")
			b.value(c.Column, c.Args[1], inFilter)
			return
		}
		b.open(top)
		b.ident(c.Column)
		b.str(" < ")
		b.value(c.Column, c.Args[0], inFilter)
		b.str(" OR ")
		b.ident(c.Column)
		b.str(" > ")
		b.value(c.Column, c.Args[1], inFilter)
		b.close(top)
	default:
		b.fail(fault.New(fault.Unsupported, "operator %q is not supported", string(c.Op)))
	}
}

// likeTarget writes the column a LIKE applies to: LIKE takes only String,
// so FixedString and Enum columns are read as their text.
func (b *builder) likeTarget(col string) {
	if c := b.column(col); c != nil {
		switch c.typ.name {
		case "FixedString", "Enum8", "Enum16":
			b.str("toString(")
			b.ident(col)
			b.str(")")
			return
		}
	}
	b.ident(col)
}

var _ dialects.Dialect = Dialect{}
