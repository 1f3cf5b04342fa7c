package ms

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
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

// T-SQL has no boolean literals; these predicates stand for TRUE and FALSE.
const (
	sqlTrue  = "1=1"
	sqlFalse = "1=0"
)

// syntax is SQL Server's: bit columns for booleans (no IS TRUE), ILIKE as
// LOWER() on both sides, OFFSET … FETCH paging, OUTPUT INSERTED.*, and
// inserts that leave out the columns DEFAULT in every row: SQL Server
// refuses DEFAULT for an IDENTITY column (error 339), and the engine sends
// DEFAULT for a generated key the caller gave as null or left out. AVG of
// an integer column is an integer in T-SQL: the column is multiplied by
// 1.0 first, so the mean keeps its fraction as elsewhere.
var syntax = sqlgen.Syntax{
	Placeholder:        "@p",
	Numbered:           true,
	QuoteOpen:          '[',
	QuoteClose:         ']',
	QuoteEscape:        ']',
	CheckIdent:         checkIdent,
	True:               sqlTrue,
	False:              sqlFalse,
	BitBooleans:        true,
	LikeTail:           binaryCollation + ` ESCAPE '\'`,
	LikeArg:            likeArg,
	OffsetFetch:        true,
	NullKeyword:        true,
	Output:             " OUTPUT INSERTED.*",
	DefaultValues:      true,
	OmitDefaultColumns: true,
	AvgTail:            " * 1.0",
	Engine:             "SQL Server",
	MaxArgs:            sqlgen.Limit{Max: maxParams, Msg: "statement has %d values, SQL Server accepts at most %d"},
	MaxRows:            sqlgen.Limit{Max: maxInsertRows, Msg: "insert has %d rows, SQL Server accepts at most %d in one statement"},
}

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
// (nvarchar) that SQL Server will not convert to every column type. LIKE
// compares code point by code point, like PostgreSQL's LIKE; ILIKE lowers
// both sides first, whatever the column's collation says.
//
// An upsert is a MERGE (see renderMerge); an update or delete that answers
// its rows has an OUTPUT list (see renderOutput).
func (Dialect) Render(p *query.Plan) (dialects.Stmt, error) {
	if p != nil {
		switch {
		case p.Action == query.Insert && len(p.OnConflict) > 0:
			return renderMerge(p)
		case p.Return && (p.Action == query.Update || p.Action == query.Delete):
			return renderOutput(p)
		}
	}
	return syntax.Render(p)
}

// checkIdent reports why name cannot be an SQL Server identifier, or nil.
func checkIdent(name string) error {
	if err := sqlgen.CheckIdent(name); err != nil {
		return err
	}
	if !utf8.ValidString(name) {
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
