package ms

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// maxParams is the number of values one statement may bind. SQL Server
// accepts 2100 parameters in a request, and the driver sends every
// parameterized statement through sp_executesql, whose own @stmt and
// @params take two of them.
const maxParams = 2100 - 2

// maxInsertRows is the most rows one INSERT … VALUES list may hold (error
// 10738 beyond it).
const maxInsertRows = 1000

// maxIdentLen is SQL Server's identifier length: sysname is nvarchar(128),
// counted in UTF-16 code units.
const maxIdentLen = 128

// binaryCollation makes LIKE compare code points, as PostgreSQL's LIKE does,
// whatever the column's or the database's collation (which is often case
// and accent insensitive). It is put on the pattern, not on the column, so a
// varchar column is widened to nvarchar with its own code page first and no
// character is lost to Latin1's code page.
const binaryCollation = " COLLATE Latin1_General_100_BIN2"

// Dialect renders plans for SQL Server (2012 and later, Azure SQL):
// identifiers in [brackets], values as @pN parameters, ORDER BY … OFFSET …
// FETCH paging and OUTPUT INSERTED.*. It holds no state; the zero value is
// ready to use.
type Dialect struct{}

// Name returns the type code "ms".
func (Dialect) Name() string { return "ms" }

// Render turns a validated plan into one statement. Every request value
// becomes a bound argument; identifiers are quoted, never checked against a
// catalog (the engine has done that). NULL and DEFAULT in inserts and
// updates are written as keywords: a NULL parameter has a type of its own
// (nvarchar) that SQL Server will not convert to every column type.
func (Dialect) Render(p *query.Plan) (dialects.Stmt, error) {
	if p == nil {
		return dialects.Stmt{}, fault.New(fault.Invalid, "no plan to render")
	}
	var b builder
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
	if b.err != nil {
		return dialects.Stmt{}, b.err
	}
	if len(b.args) > maxParams {
		return dialects.Stmt{}, fault.New(fault.TooLarge, "statement has %d values, SQL Server accepts at most %d", len(b.args), maxParams)
	}
	return dialects.Stmt{SQL: b.sb.String(), Args: b.args}, nil
}

// builder accumulates SQL text and arguments; the first error sticks and
// later writes are ignored, so render code reads straight through.
type builder struct {
	sb   strings.Builder
	args []any
	err  error
}

func (b *builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *builder) str(s string) { b.sb.WriteString(s) }

// arg binds v and writes its placeholder.
func (b *builder) arg(v any) {
	if _, ok := v.(query.Default); ok {
		b.fail(fault.New(fault.Invalid, "DEFAULT is only allowed as an insert or update value"))
		return
	}
	b.args = append(b.args, v)
	b.sb.WriteString("@p")
	b.sb.WriteString(strconv.Itoa(len(b.args)))
}

// value writes an insert or update value: DEFAULT, NULL, or a placeholder.
func (b *builder) value(v any) {
	switch v.(type) {
	case query.Default:
		b.str("DEFAULT")
	case nil:
		b.str("NULL")
	default:
		b.arg(v)
	}
}

// checkIdent reports why name cannot be an SQL Server identifier, or nil.
func checkIdent(name string) error {
	switch {
	case name == "":
		return fault.New(fault.Invalid, "empty identifier")
	case strings.IndexByte(name, 0) >= 0:
		return fault.New(fault.Invalid, "identifier contains a NUL byte")
	case !utf8.ValidString(name):
		return fault.New(fault.Invalid, "identifier is not valid UTF-8")
	}
	n := 0
	for _, r := range name {
		n += utf16.RuneLen(r)
	}
	if n > maxIdentLen {
		return fault.New(fault.Invalid, "identifier %q is longer than %d characters", name, maxIdentLen)
	}
	return nil
}

// ident writes a bracket-quoted identifier with embedded ] doubled.
func (b *builder) ident(name string) {
	if err := checkIdent(name); err != nil {
		b.fail(err)
		return
	}
	b.sb.WriteByte('[')
	if strings.IndexByte(name, ']') < 0 {
		b.sb.WriteString(name)
	} else {
		b.sb.WriteString(strings.ReplaceAll(name, "]", "]]"))
	}
	b.sb.WriteByte(']')
}

// table writes [schema].[table], or just [table] when the plan names no
// schema (the login's default schema then applies).
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
	if p.Limit < 0 || p.Offset < 0 {
		b.fail(fault.New(fault.Invalid, "page size and page number must not be negative"))
		return
	}
	paged := p.Limit > 0 || p.Offset > 0
	for i, o := range p.Order {
		if i == 0 {
			b.str(" ORDER BY ")
		} else {
			b.str(", ")
		}
		b.ident(o.Column)
		if o.Desc {
			b.str(" DESC")
		} else {
			b.str(" ASC")
		}
	}
	if !paged {
		return
	}
	if len(p.Order) == 0 {
		// OFFSET … FETCH belongs to ORDER BY. A constant order leaves
		// the rows in the database's order, as the plan asked.
		b.str(" ORDER BY (SELECT NULL)")
	}
	// OFFSET is written even when it is 0, so every page of a query shares
	// one cached plan.
	b.str(" OFFSET ")
	b.arg(p.Offset)
	b.str(" ROWS")
	if p.Limit > 0 {
		b.str(" FETCH NEXT ")
		b.arg(p.Limit)
		b.str(" ROWS ONLY")
	}
}

func (b *builder) insert(p *query.Plan) {
	if len(p.Rows) == 0 {
		b.fail(fault.New(fault.Invalid, "insert needs at least one row"))
		return
	}
	if len(p.Rows) > maxInsertRows {
		b.fail(fault.New(fault.TooLarge, "insert has %d rows, SQL Server accepts at most %d in one statement", len(p.Rows), maxInsertRows))
		return
	}
	for r, row := range p.Rows {
		if len(row) != len(p.Columns) {
			b.fail(fault.New(fault.Invalid, "insert row %d has %d values for %d columns", r, len(row), len(p.Columns)))
			return
		}
	}
	for _, c := range p.Columns {
		if err := checkIdent(c); err != nil {
			b.fail(err) // also the columns explicitColumns leaves out
			return
		}
	}
	keep := explicitColumns(p)
	b.str("INSERT INTO ")
	b.table(p)
	if len(keep) == 0 {
		if len(p.Rows) > 1 {
			b.fail(fault.New(fault.Unsupported, "inserting several rows with no column values is not supported by SQL Server"))
			return
		}
		b.str(" OUTPUT INSERTED.* DEFAULT VALUES")
		return
	}
	b.str(" (")
	for i, c := range keep {
		if i > 0 {
			b.str(", ")
		}
		b.ident(p.Columns[c])
	}
	b.str(") OUTPUT INSERTED.* VALUES ")
	for r, row := range p.Rows {
		if r > 0 {
			b.str(", ")
		}
		b.str("(")
		for i, c := range keep {
			if i > 0 {
				b.str(", ")
			}
			b.value(row[c])
		}
		b.str(")")
	}
}

// explicitColumns returns the indexes of the insert's columns that have a
// value other than DEFAULT in at least one row. A column that is DEFAULT in
// every row is left out of the statement, which means the same: SQL Server
// refuses DEFAULT for an IDENTITY column (error 339), and the engine sends
// DEFAULT for a generated key the caller gave as null or left out.
func explicitColumns(p *query.Plan) []int {
	keep := make([]int, 0, len(p.Columns))
	for c := range p.Columns {
		for _, row := range p.Rows {
			if _, def := row[c].(query.Default); !def {
				keep = append(keep, c)
				break
			}
		}
	}
	return keep
}

func (b *builder) update(p *query.Plan) {
	if len(p.Set) == 0 {
		b.fail(fault.New(fault.Invalid, "update needs at least one column to set"))
		return
	}
	b.guardUnfiltered(p)
	b.str("UPDATE ")
	b.table(p)
	b.str(" SET ")
	for i, a := range p.Set {
		if i > 0 {
			b.str(", ")
		}
		b.ident(a.Column)
		b.str(" = ")
		b.value(a.Value)
	}
	b.where(p.Where)
}

func (b *builder) delete(p *query.Plan) {
	b.guardUnfiltered(p)
	b.str("DELETE FROM ")
	b.table(p)
	b.where(p.Where)
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
	b.expr(e, true)
}

// T-SQL has no boolean literals; these predicates stand for TRUE and FALSE.
const (
	sqlTrue  = "1=1"
	sqlFalse = "1=0"
)

// expr writes a condition. top is true where no parentheses are needed
// around an AND/OR list (the WHERE clause itself, or inside NOT (…)).
func (b *builder) expr(e query.Expr, top bool) {
	switch x := e.(type) {
	case *query.Cond:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.cond(x)
	case query.And:
		b.list([]query.Expr(x), " AND ", sqlTrue, top)
	case *query.And:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.list([]query.Expr(*x), " AND ", sqlTrue, top)
	case query.Or:
		b.list([]query.Expr(x), " OR ", sqlFalse, top)
	case *query.Or:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.list([]query.Expr(*x), " OR ", sqlFalse, top)
	case query.Not:
		b.not(x.X)
	case *query.Not:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.not(x.X)
	default:
		b.fail(fault.New(fault.Invalid, "empty or unknown condition in filter"))
	}
}

func (b *builder) not(x query.Expr) {
	b.str("NOT (")
	b.expr(x, true)
	b.str(")")
}

func (b *builder) list(items []query.Expr, sep, empty string, top bool) {
	switch len(items) {
	case 0:
		b.str(empty)
		return
	case 1:
		b.expr(items[0], top)
		return
	}
	if !top {
		b.str("(")
	}
	for i, it := range items {
		if i > 0 {
			b.str(sep)
		}
		b.expr(it, false)
	}
	if !top {
		b.str(")")
	}
}

// comparison operators with one value.
var binaryOps = map[query.Op]string{
	query.Eq: " = ",
	query.Ne: " <> ",
	query.Gt: " > ",
	query.Ge: " >= ",
	query.Lt: " < ",
	query.Le: " <= ",
}

func (b *builder) cond(c *query.Cond) {
	need := func(n int) bool {
		if len(c.Args) != n {
			b.fail(fault.New(fault.Invalid, "operator %s on %q needs %d value(s), got %d", c.Op, c.Column, n, len(c.Args)))
			return false
		}
		return true
	}
	if sym, ok := binaryOps[c.Op]; ok {
		if need(1) {
			b.ident(c.Column)
			b.str(sym)
			b.arg(c.Args[0])
		}
		return
	}
	switch c.Op {
	case query.IsNull, query.IsNotNull:
		if need(0) {
			b.ident(c.Column)
			if c.Op == query.IsNull {
				b.str(" IS NULL")
			} else {
				b.str(" IS NOT NULL")
			}
		}
	case query.IsTrue, query.IsFalse:
		// bit has no IS TRUE. "= 1" alone would be UNKNOWN on NULL, and
		// NOT (…) of it would drop the NULL rows that NOT (x IS TRUE)
		// keeps; the IS NOT NULL term makes the test two-valued like IS
		// TRUE, and still lets an index on the column be used.
		if need(0) {
			b.str("(")
			b.ident(c.Column)
			if c.Op == query.IsTrue {
				b.str(" = 1 AND ")
			} else {
				b.str(" = 0 AND ")
			}
			b.ident(c.Column)
			b.str(" IS NOT NULL)")
		}
	case query.Like:
		// Case-sensitive, code point by code point, like PostgreSQL's LIKE.
		if need(1) {
			b.ident(c.Column)
			b.str(" LIKE ")
			b.arg(likeArg(c.Args[0]))
			b.str(binaryCollation + ` ESCAPE '\'`)
		}
	case query.ILike:
		// Both sides lower-cased, then compared by code point: case
		// insensitive and accent sensitive, like PostgreSQL's ILIKE,
		// whatever the column's collation says.
		if need(1) {
			b.str("LOWER(")
			b.ident(c.Column)
			b.str(") LIKE LOWER(")
			b.arg(likeArg(c.Args[0]))
			b.str(")" + binaryCollation + ` ESCAPE '\'`)
		}
	case query.In, query.NotIn:
		if len(c.Args) == 0 {
			// x IN () is a syntax error; its meaning is constant.
			if c.Op == query.In {
				b.str(sqlFalse)
			} else {
				b.str(sqlTrue)
			}
			return
		}
		b.ident(c.Column)
		if c.Op == query.In {
			b.str(" IN (")
		} else {
			b.str(" NOT IN (")
		}
		for i, v := range c.Args {
			if i > 0 {
				b.str(", ")
			}
			b.arg(v)
		}
		b.str(")")
	case query.Between:
		if need(2) {
			b.ident(c.Column)
			b.str(" BETWEEN ")
			b.arg(c.Args[0])
			b.str(" AND ")
			b.arg(c.Args[1])
		}
	default:
		b.fail(fault.New(fault.Unsupported, "operator %q is not supported", string(c.Op)))
	}
}

// likeArg adapts a LIKE pattern from the query package (wildcards % and _,
// with %, _ and \ escaped by a backslash) to T-SQL, where [ also opens a
// character class: every [ not already escaped gets a backslash. The SQL
// text stays the same; only the bound value changes.
func likeArg(v any) any {
	s, ok := v.(string)
	if !ok || strings.IndexByte(s, '[') < 0 {
		return v
	}
	var sb strings.Builder
	sb.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch ch {
		case '\\':
			// An escape and the byte it escapes pass through together
			// (a trailing lone backslash is left for the server).
			sb.WriteByte(ch)
			if i+1 < len(s) {
				i++
				sb.WriteByte(s[i])
			}
		case '[':
			sb.WriteString(`\[`)
		default:
			sb.WriteByte(ch)
		}
	}
	return sb.String()
}

var _ dialects.Dialect = Dialect{}
