package ma

import (
	"strings"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// maxParams is the most placeholders one prepared statement may hold: the
// protocol counts them in 16 bits and the server refuses more (error 1390).
const maxParams = 65535

// maxIdentLen is the identifier length, in characters, of MariaDB and MySQL.
// The server refuses longer names; the renderer refuses them first so the
// caller gets an Invalid error instead of a server error.
const maxIdentLen = 64

// likeEscape is the escape clause of LIKE. The query package escapes
// patterns with '\'; the escape character is written as the hex literal
// X'5C' because the string literal '\\' means one backslash only while the
// session's sql_mode lacks NO_BACKSLASH_ESCAPES, and '\' only while it has
// it. X'5C' is one backslash in both modes.
const likeEscape = ` ESCAPE X'5C'`

// binCollation makes LIKE compare code points exactly (case- and
// accent-sensitive), as PostgreSQL's LIKE does, whatever the column's
// collation. It applies to the bound pattern, so the connection character
// set must be utf8mb4 (the driver's default).
const binCollation = " COLLATE utf8mb4_bin"

// noLimit stands for "no LIMIT" when only an OFFSET is wanted: MySQL has no
// OFFSET without LIMIT, and documents this number for the purpose.
const noLimit = "18446744073709551615"

// Dialect renders plans for MariaDB and MySQL: identifiers in backticks,
// values as ? placeholders, LIMIT ? OFFSET ? paging and, by default,
// INSERT … RETURNING * (MariaDB 10.5 and later). The zero value is the
// MariaDB form; Source picks the form from the server's version.
type Dialect struct {
	// NoReturning renders inserts without RETURNING, for MySQL and MariaDB
	// before 10.5. Source then reads the inserted rows back by primary key,
	// from LAST_INSERT_ID() for generated keys.
	NoReturning bool
}

// Name returns the type code "ma".
func (Dialect) Name() string { return "ma" }

// Render turns a validated plan into one statement. Every request value
// becomes a bound argument; identifiers are quoted, never checked against a
// catalog (the engine has done that).
func (d Dialect) Render(p *query.Plan) (dialects.Stmt, error) {
	if p == nil {
		return dialects.Stmt{}, fault.New(fault.Invalid, "no plan to render")
	}
	var b builder
	switch p.Action {
	case query.Read:
		b.read(p)
	case query.Insert:
		b.insert(p, !d.NoReturning)
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
		return dialects.Stmt{}, fault.New(fault.TooLarge, "statement has %d values, MariaDB and MySQL accept at most %d", len(b.args), maxParams)
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
	b.sb.WriteByte('?')
}

// value writes v as a placeholder, or DEFAULT for query.Default.
func (b *builder) value(v any) {
	if _, ok := v.(query.Default); ok {
		b.str("DEFAULT")
		return
	}
	b.arg(v)
}

// checkIdent reports why name cannot be an identifier, or nil.
func checkIdent(name string) error {
	switch {
	case name == "":
		return fault.New(fault.Invalid, "empty identifier")
	case strings.IndexByte(name, 0) >= 0:
		return fault.New(fault.Invalid, "identifier contains a NUL byte")
	case !utf8.ValidString(name):
		return fault.New(fault.Invalid, "identifier is not valid UTF-8")
	case utf8.RuneCountInString(name) > maxIdentLen:
		return fault.New(fault.Invalid, "identifier %q is longer than %d characters", name, maxIdentLen)
	}
	return nil
}

// ident writes a backtick-quoted identifier with embedded backticks doubled.
func (b *builder) ident(name string) {
	if err := checkIdent(name); err != nil {
		b.fail(err)
		return
	}
	b.sb.WriteByte('`')
	if strings.IndexByte(name, '`') < 0 {
		b.sb.WriteString(name)
	} else {
		b.sb.WriteString(strings.ReplaceAll(name, "`", "``"))
	}
	b.sb.WriteByte('`')
}

// table writes `database`.`table`, or just `table` when the plan names no
// schema.
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
		if o.Desc {
			b.str(" DESC")
		} else {
			b.str(" ASC")
		}
	}
	if p.Limit < 0 || p.Offset < 0 {
		b.fail(fault.New(fault.Invalid, "page size and page number must not be negative"))
		return
	}
	// With a limit both clauses are always written, so every page of a query
	// shares one prepared statement.
	if p.Limit > 0 {
		b.str(" LIMIT ")
		b.arg(p.Limit)
		b.str(" OFFSET ")
		b.arg(p.Offset)
	} else if p.Offset > 0 {
		b.str(" LIMIT " + noLimit + " OFFSET ")
		b.arg(p.Offset)
	}
}

func (b *builder) insert(p *query.Plan, returning bool) {
	if len(p.Rows) == 0 {
		b.fail(fault.New(fault.Invalid, "insert needs at least one row"))
		return
	}
	b.str("INSERT INTO ")
	b.table(p)
	b.str(" (")
	for i, c := range p.Columns {
		if i > 0 {
			b.str(", ")
		}
		b.ident(c)
	}
	b.str(") VALUES ")
	for r, row := range p.Rows {
		if len(row) != len(p.Columns) {
			b.fail(fault.New(fault.Invalid, "insert row %d has %d values for %d columns", r, len(row), len(p.Columns)))
			return
		}
		if r > 0 {
			b.str(", ")
		}
		b.str("(")
		for i, v := range row {
			if i > 0 {
				b.str(", ")
			}
			b.value(v)
		}
		b.str(")")
	}
	if returning {
		b.str(" RETURNING *")
	}
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
		b.list([]query.Expr(x), " AND ", "TRUE", top)
	case *query.And:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.list([]query.Expr(*x), " AND ", "TRUE", top)
	case query.Or:
		b.list([]query.Expr(x), " OR ", "FALSE", top)
	case *query.Or:
		if x == nil {
			b.fail(fault.New(fault.Invalid, "empty condition in filter"))
			return
		}
		b.list([]query.Expr(*x), " OR ", "FALSE", top)
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

// tests that take no value.
var unaryOps = map[query.Op]string{
	query.IsNull:    " IS NULL",
	query.IsNotNull: " IS NOT NULL",
	query.IsTrue:    " IS TRUE",
	query.IsFalse:   " IS FALSE",
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
	if sym, ok := unaryOps[c.Op]; ok {
		if need(0) {
			b.ident(c.Column)
			b.str(sym)
		}
		return
	}
	switch c.Op {
	case query.Like:
		// Case-sensitive whatever the column's collation.
		if need(1) {
			b.ident(c.Column)
			b.str(" LIKE ")
			b.arg(c.Args[0])
			b.str(binCollation + likeEscape)
		}
	case query.ILike:
		// Both sides lower-cased and compared exactly: case-insensitive
		// but accent-sensitive, as PostgreSQL's ILIKE, whatever the
		// column's collation.
		if need(1) {
			b.str("LOWER(")
			b.ident(c.Column)
			b.str(") LIKE LOWER(")
			b.arg(c.Args[0])
			b.str(")" + binCollation + likeEscape)
		}
	case query.In, query.NotIn:
		if len(c.Args) == 0 {
			// x IN () is a syntax error; its meaning is constant.
			if c.Op == query.In {
				b.str("FALSE")
			} else {
				b.str("TRUE")
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

var _ dialects.Dialect = Dialect{}
