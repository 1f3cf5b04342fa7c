package ch

import (
	"regexp"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
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

// syntax is ClickHouse's: backslash escapes in identifiers, 1 and 0 for
// true and false, NOT pushed down to the comparisons (see
// builder.WriteCond), NULLs sorted as PostgreSQL sorts them, no OFFSET
// without LIMIT (18.x fails on a limit near 2^63, so "no limit" is 2^62
// rows), updates and deletes as mutations, and count() for a count of
// rows.
//
// A mutation's condition is wrapped in ifNull(…, 0). A SELECT drops a row
// whose condition is NULL, but a mutation on 18.x does not look at the
// NULL: an UPDATE's if() and a DELETE's NOT take the value under it
// (whatever the column held before it became NULL), and change or delete
// rows the filter does not match. With NOT pushed down, NULL and false
// mean the same, so the condition is made never NULL.
var syntax = sqlgen.Syntax{
	Placeholder:  "?",
	QuoteOpen:    '`',
	QuoteClose:   '`',
	QuoteEscape:  '\\',
	True:         "1",
	False:        "0",
	PushNot:      true,
	NullsLargest: true,
	NoLimitArg:   int64(1 << 62),
	Mutations:    true,
	Engine:       "ClickHouse",
	CountRows:    "count()",
	MaxRows:      sqlgen.Limit{Max: maxInsertRows, Msg: "insert has %d rows, ClickHouse inserts at most %d in one statement here"},
	Verify:       checkParams,
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

// builder is the shared builder with what ClickHouse renders its own way:
// comparisons (NOT pushed down, values typed by column), inserts and the
// new values of updates.
type builder struct {
	sqlgen.Builder
	info *tableInfo
}

// newBuilder returns a builder for a table; info is nil for the type-blind
// Render.
func newBuilder(info *tableInfo) *builder {
	b := &builder{info: info}
	b.Init(&syntax, b)
	return b
}

// render renders a plan; info is nil for the type-blind Render.
func render(p *query.Plan, info *tableInfo) (dialects.Stmt, error) {
	if info != nil && p != nil && p.IsAggregate() {
		info = info.withAggregates(p)
	}
	return newBuilder(info).Render(p)
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
	b := newBuilder(info)
	b.GuardUnfiltered(p)
	if p.Action == query.Update && len(p.Set) == 0 {
		b.Fail(fault.New(fault.Invalid, "update needs at least one column to set"))
	}
	b.Str("SELECT count() FROM ")
	b.Table(p)
	check := p.Action == query.Update
	if p.Where != nil {
		b.Str(" WHERE ")
		b.MutationCond(p.Where)
	}
	if check {
		if p.Where != nil {
			b.Str(" AND ")
		} else {
			b.Str(" WHERE ")
		}
		b.Str("NOT ignore(")
		b.List(len(p.Set), func(i int) {
			b.Str("if(")
			if p.Where != nil {
				b.MutationCond(p.Where)
			} else {
				b.Str("1")
			}
			b.Str(", ")
			b.WriteSetValue(p.Set[i])
			b.Str(", ")
			b.Ident(p.Set[i].Column)
			b.Str(")")
		})
		b.Str(")")
	}
	return b.Stmt()
}

// paramsPattern is how clickhouse-go recognizes a server-side query
// parameter ({name:Type}); a statement that matches it would not have its
// ? placeholders filled.
var paramsPattern = regexp.MustCompile("{.+:.+}")

// checkParams refuses a statement clickhouse-go would take for one with
// server-side parameters.
func checkParams(st dialects.Stmt) error {
	if len(st.Args) > 0 && paramsPattern.MatchString(st.SQL) {
		return fault.New(fault.Unsupported, "an identifier or default with {…:…} in it cannot be used with bound values")
	}
	return nil
}

// column returns what is known of a column, nil when rendering type-blind
// or when the column is not in the table info.
func (b *builder) column(name string) *colInfo {
	if b.info == nil {
		return nil
	}
	return b.info.cols[name]
}

// value binds v for column col, typed when the column's type is known.
func (b *builder) value(col string, v any, u use) {
	c := b.column(col)
	if _, ok := v.(query.Default); ok || c == nil {
		b.Arg(v)
		return
	}
	bv, err := bindValue(col, c.typ, v, u)
	if err != nil {
		b.Fail(err)
		return
	}
	b.Str(bv.pre)
	b.Arg(bv.arg)
	b.Str(bv.post)
}

// defaultValue writes what a DEFAULT cell stands for in a column: its
// default expression, or else the type's default value (NULL for a
// Nullable column). Only known with the column's type.
func (b *builder) defaultValue(col string, forUpdate bool) {
	c := b.column(col)
	if c == nil {
		b.Fail(fault.New(fault.Unsupported, "DEFAULT for column %q needs the table's column types (ClickHouse has no DEFAULT keyword in a SELECT or a mutation)", col))
		return
	}
	t := c.typ
	switch {
	case c.defaultExpr != "" && (c.defaultKind == "DEFAULT" || c.defaultKind == "MATERIALIZED"):
		b.Str("CAST((" + c.defaultExpr + ") AS " + t.castType() + ")")
	case forUpdate:
		b.Str("defaultValueOfArgumentType(")
		b.Ident(col)
		b.Str(")")
	case t.nullable:
		b.Str("CAST(NULL AS " + t.castType() + ")")
	case t.name == "Array":
		b.Str("CAST([] AS " + t.castType() + ")")
	default:
		b.Str("assumeNotNull(CAST(NULL AS Nullable(" + t.base + ")))")
	}
}

// WriteInsert writes INSERT INTO t (cols) SELECT …, … UNION ALL SELECT …, …: one
// statement, so ClickHouse writes the rows as one block, and a form every
// server version since 1.1 accepts. A column that is DEFAULT in every row is
// left out, and ClickHouse fills it itself per row (its default expression,
// or its type's default value); a DEFAULT cell in a column that has values
// in other rows is rendered as that column's default, which needs the
// table's column types.
func (b *builder) WriteInsert(p *query.Plan) {
	keep, ok := b.InsertColumns(p)
	if !ok {
		return
	}
	if len(keep) == 0 {
		b.Fail(fault.New(fault.Unsupported, "ClickHouse cannot insert a row without any column value"))
		return
	}
	b.Str("INSERT INTO ")
	b.Table(p)
	b.Str(" (")
	b.Columns(p.Columns, keep)
	b.Str(")")
	for r, row := range p.Rows {
		if r > 0 {
			b.Str(" UNION ALL")
		}
		b.Str(" SELECT ")
		b.List(len(keep), func(k int) {
			i := keep[k]
			if _, def := row[i].(query.Default); def {
				b.defaultValue(p.Columns[i], false)
			} else {
				b.value(p.Columns[i], row[i], inWrite)
			}
		})
	}
}

// WriteSetValue writes the new value of one column of an update. With the
// column's type known it is materialized: 18.x fails to mutate a Nullable
// column with a constant Nullable value (if() rejects the pair), and a
// full column of the same value is what the mutation computes anyway.
func (b *builder) WriteSetValue(a query.Assign) {
	typed := b.column(a.Column) != nil
	if typed {
		b.Str("materialize(")
	}
	if _, def := a.Value.(query.Default); def {
		b.defaultValue(a.Column, true)
	} else {
		b.value(a.Column, a.Value, inWrite)
	}
	if typed {
		b.Str(")")
	}
}

// negated maps a comparison to its negation, where SQL's NULL rules let
// one stand for NOT the other.
var negated = map[query.Op]query.Op{
	query.Eq: query.Ne, query.Ne: query.Eq,
	query.Gt: query.Le, query.Le: query.Gt,
	query.Ge: query.Lt, query.Lt: query.Ge,
	query.IsNull: query.IsNotNull, query.IsNotNull: query.IsNull,
}

// nullable reports whether a column may hold NULL; unknown columns may.
func (b *builder) nullable(col string) bool {
	c := b.column(col)
	return c == nil || c.typ.nullable
}

// WriteCond writes one comparison, negated when neg is true. ClickHouse before
// 20.x does not follow SQL's three-valued logic (NULL AND 0 is NULL, so
// NOT (NULL AND 0) is not true), so NOT is never written around a
// condition: the syntax pushes it down to the comparisons (De Morgan), and
// they are negated here one by one with the same NULL rules PostgreSQL
// has. Once no NOT is left above them, treating a NULL comparison as false
// gives the SQL answer, which every ClickHouse version computes. top is
// true where no parentheses are needed around a compound condition.
func (b *builder) WriteCond(c *query.Cond, neg, top bool) {
	op := c.Op
	if n, ok := negated[op]; ok && neg {
		op, neg = n, false
	}
	if sym, ok := sqlgen.Comparison(op); ok {
		if b.Need(c, 1) {
			b.Ident(c.Column)
			b.Str(sym)
			b.value(c.Column, c.Args[0], inFilter)
		}
		return
	}
	switch op {
	case query.IsNull, query.IsNotNull:
		if b.Need(c, 0) {
			b.Ident(c.Column)
			if op == query.IsNull {
				b.Str(" IS NULL")
			} else {
				b.Str(" IS NOT NULL")
			}
		}
	case query.IsTrue, query.IsFalse:
		if b.Need(c, 0) {
			b.boolTest(c.Column, op == query.IsTrue, neg, top)
		}
	case query.Like, query.ILike:
		if b.Need(c, 1) {
			b.like(c, op == query.ILike, neg)
		}
	case query.In, query.NotIn:
		b.in(c, (op == query.In) != neg, top)
	case query.Between:
		if b.Need(c, 2) {
			b.between(c, neg, top)
		}
	default:
		b.Fail(fault.New(fault.Unsupported, "operator %q is not supported", string(c.Op)))
	}
}

// boolTest writes col = 1 (isTrue) or col = 0, or its negation.
func (b *builder) boolTest(col string, isTrue, neg, top bool) {
	want, other := "1", "0"
	if !isTrue {
		want, other = "0", "1"
	}
	if !neg {
		b.Ident(col)
		b.Str(" = " + want)
		return
	}
	// IS NOT TRUE / IS NOT FALSE hold for NULL too.
	if !b.nullable(col) {
		b.Ident(col)
		b.Str(" = " + other)
		return
	}
	b.Open(top)
	b.Ident(col)
	b.Str(" IS NULL OR ")
	b.Ident(col)
	b.Str(" = " + other)
	b.Close(top)
}

// like writes LIKE, or ILIKE as LIKE on both sides lowered, or their
// negation.
func (b *builder) like(c *query.Cond, ilike, neg bool) {
	pat, ok := c.Args[0].(string)
	if !ok && b.info != nil {
		b.Fail(fault.New(fault.Invalid, "filter %q: a like pattern must be text", c.Column))
		return
	}
	if b.info != nil && strings.IndexByte(pat, 0) >= 0 {
		// The server cuts the pattern at a NUL: it would match more.
		// (Checked with the values, like the other checks of bound
		// values; the type-blind Render keeps its SQL free of them.)
		b.Fail(fault.New(fault.Invalid, "filter %q: a like pattern cannot hold a NUL byte in ClickHouse", c.Column))
		return
	}
	// ClickHouse's LIKE escapes with a backslash, as the pattern grammar
	// does; it has no ESCAPE clause. ILIKE came in 20.6, and lower() is
	// ASCII only: both sides are lowered as UTF-8.
	if ilike {
		b.Str("lowerUTF8(")
	}
	b.likeTarget(c.Column)
	if ilike {
		b.Str(")")
	}
	if neg {
		b.Str(" NOT LIKE ")
	} else {
		b.Str(" LIKE ")
	}
	if ilike {
		b.Str("lowerUTF8(")
		b.Arg(c.Args[0])
		b.Str(")")
	} else {
		b.Arg(c.Args[0])
	}
}

// likeTarget writes the column a LIKE applies to: LIKE takes only String,
// so FixedString and Enum columns are read as their text.
func (b *builder) likeTarget(col string) {
	if c := b.column(col); c != nil {
		switch c.typ.name {
		case "FixedString", "Enum8", "Enum16":
			b.Str("toString(")
			b.Ident(col)
			b.Str(")")
			return
		}
	}
	b.Ident(col)
}

// in writes IN (in is true) or NOT IN.
func (b *builder) in(c *query.Cond, in, top bool) {
	if len(c.Args) == 0 {
		// x IN () is a syntax error; its meaning is constant.
		if in {
			b.Str("0")
		} else {
			b.Str("1")
		}
		return
	}
	// ClickHouse answers NULL NOT IN (…) with true; SQL with NULL.
	guard := !in && b.nullable(c.Column)
	if guard {
		b.Open(top)
	}
	b.InList(c, in, func(v any) { b.value(c.Column, v, inFilter) })
	if guard {
		b.Str(" AND ")
		b.Ident(c.Column)
		b.Str(" IS NOT NULL")
		b.Close(top)
	}
}

// between writes BETWEEN, or its negation as two comparisons.
func (b *builder) between(c *query.Cond, neg, top bool) {
	if !neg {
		b.Ident(c.Column)
		b.Str(" BETWEEN ")
		b.value(c.Column, c.Args[0], inFilter)
		b.Str(" AND ")
		b.value(c.Column, c.Args[1], inFilter)
		return
	}
	b.Open(top)
	b.Ident(c.Column)
	b.Str(" < ")
	b.value(c.Column, c.Args[0], inFilter)
	b.Str(" OR ")
	b.Ident(c.Column)
	b.Str(" > ")
	b.value(c.Column, c.Args[1], inFilter)
	b.Close(top)
}

// The parts of a statement ClickHouse writes its own way.
var (
	_ sqlgen.CondWriter     = (*builder)(nil)
	_ sqlgen.InsertWriter   = (*builder)(nil)
	_ sqlgen.SetValueWriter = (*builder)(nil)
	_ dialects.Dialect      = Dialect{}
)
