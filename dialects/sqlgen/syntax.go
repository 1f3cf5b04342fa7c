package sqlgen

import (
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Syntax describes how one engine spells what the engines write
// differently. Most fields are flags or strings whose zero value is the
// standard SQL form. A dialect keeps its Syntax in a package variable and
// never changes it after init, so one value serves concurrent renders.
type Syntax struct {
	// Placeholder is written for every bound value: "?" alone, or, when
	// Numbered, followed by the value's 1-based position ("$1", "@p1").
	Placeholder string
	Numbered    bool

	// QuoteOpen and QuoteClose enclose an identifier. QuoteEscape is
	// written before every QuoteClose and every QuoteEscape in a name: the
	// closing quote itself, to double it, or a backslash.
	QuoteOpen, QuoteClose, QuoteEscape byte
	// CheckIdent refuses a name the engine cannot take, before it is
	// quoted; nil applies CheckIdent (empty or NUL) only.
	CheckIdent func(name string) error

	// True and False are the constant conditions written for an empty AND
	// and OR, and for x IN () and x NOT IN () (a syntax error as such).
	True, False string

	// BitBooleans marks an engine without IS TRUE: a boolean test compares
	// the column with 1 or 0 and adds IS NOT NULL, so that the test is
	// two-valued, as IS TRUE is, and NOT (…) of it keeps the NULL rows.
	BitBooleans bool

	// ILike is the case-insensitive LIKE operator (" ILIKE "); empty writes
	// LOWER(column) LIKE LOWER(pattern), which with a binary collation in
	// LikeTail is case-insensitive and accent-sensitive like ILIKE.
	ILike string
	// LikeTail follows a LIKE pattern: its ESCAPE clause for the
	// backslash the query package escapes with, and a collation if any.
	LikeTail string
	// LikeArg adapts a pattern's bound value to the engine's pattern
	// grammar; the SQL text does not change. Nil binds the pattern as is.
	LikeArg func(pattern any) any

	// PushNot never writes NOT around a condition: it is pushed down to
	// the comparisons (De Morgan), for engines whose NULL logic breaks
	// NOT (…). The dialect's CondWriter must then write negated
	// conditions; the standard writer refuses them.
	PushNot bool

	// NullsLargest writes NULLS LAST after ASC and NULLS FIRST after DESC,
	// so NULL sorts as if larger than any value, as in PostgreSQL.
	NullsLargest bool

	// OffsetFetch pages with ORDER BY … OFFSET n ROWS FETCH NEXT m ROWS
	// ONLY (ordered by (SELECT NULL) when the plan has no order) instead
	// of LIMIT m OFFSET n.
	OffsetFetch bool
	// NoLimit is written as the LIMIT of a read with an offset and no
	// limit, for engines that have no OFFSET without LIMIT; NoLimitArg is
	// bound there instead when not nil. With neither, OFFSET stands alone.
	NoLimit    string
	NoLimitArg any

	// NullKeyword writes a nil insert or update value as NULL instead of
	// binding it, for engines whose NULL parameter carries a type of its
	// own that not every column converts from.
	NullKeyword bool

	// Output is written after an insert's column list (" OUTPUT
	// INSERTED.*"), Returning after its values (" RETURNING *").
	Output, Returning string
	// DefaultValues writes an insert without column values as DEFAULT
	// VALUES, one row only; without it the column and value lists are
	// written empty: () VALUES ().
	DefaultValues bool
	// OmitDefaultColumns leaves out of an insert every column that is
	// DEFAULT in all rows, which means the same, for engines that refuse
	// the DEFAULT keyword for some columns (generated keys).
	OmitDefaultColumns bool
	// Engine names the engine in errors about what it does not support.
	Engine string

	// Upsert is the engine's conflict clause (UpsertNone refuses upserts).
	Upsert UpsertStyle
	// WriteReturning marks an engine whose UPDATE and DELETE take a
	// RETURNING list (query.Plan.Return); without it such a plan is
	// refused.
	WriteReturning bool
	// DeleteReturning marks an engine whose DELETE alone takes a
	// RETURNING list (MariaDB).
	DeleteReturning bool

	// Mutations writes updates and deletes as ALTER TABLE … UPDATE and
	// ALTER TABLE … DELETE (ClickHouse). A mutation's WHERE is always
	// written, and its condition is made never NULL (ifNull(…, 0)): a
	// mutation does not drop rows whose condition is NULL as a SELECT does.
	Mutations bool

	// CountRows is written for a count of rows in an aggregate read;
	// empty writes count(*).
	CountRows string
	// AvgTail is written after avg's column, inside the call: " * 1.0"
	// where the average of an integer column would be an integer.
	AvgTail string

	// MaxArgs bounds the values one statement binds; MaxRows the rows of
	// one insert.
	MaxArgs, MaxRows Limit

	// Verify refuses a finished statement the driver would mishandle; nil
	// accepts every statement.
	Verify func(st dialects.Stmt) error
}

// Limit is a bound the engine sets on one statement; a statement past it
// is refused as TooLarge before it reaches the server.
type Limit struct {
	// Max is the largest count allowed; 0 means no limit.
	Max int
	// Msg is the error's format, given the count and Max, in that order.
	Msg string
}

// exceeded returns the TooLarge error for n past the limit, or nil.
func (l Limit) exceeded(n int) error {
	if l.Max > 0 && n > l.Max {
		return fault.New(fault.TooLarge, l.Msg, n, l.Max)
	}
	return nil
}

// Render turns a validated plan into one statement. Every request value
// becomes a bound argument; identifiers are quoted, never checked against a
// catalog (the engine has done that).
func (s *Syntax) Render(p *query.Plan) (dialects.Stmt, error) {
	var b Builder
	b.Init(s, nil)
	return b.Render(p)
}

// CheckIdent reports why name cannot be an identifier in any engine (it is
// empty or holds a NUL byte), or nil. A Syntax.CheckIdent adds the engine's
// own limits to it.
func CheckIdent(name string) error {
	switch {
	case name == "":
		return fault.New(fault.Invalid, "empty identifier")
	case strings.IndexByte(name, 0) >= 0:
		return fault.New(fault.Invalid, "identifier contains a NUL byte")
	}
	return nil
}
