package pg

import (
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// maxParams is the extended protocol's limit of bound values in one
// statement (a uint16 count).
const maxParams = 65535

// maxIdentLen is PostgreSQL's identifier length (NAMEDATALEN-1). Longer
// names are silently truncated by the server, which could address another
// column, so the renderer refuses them.
const maxIdentLen = 63

// syntax is PostgreSQL's: the standard forms, with ILIKE, TRUE and FALSE,
// IS TRUE, LIMIT/OFFSET and RETURNING.
var syntax = sqlgen.Syntax{
	Placeholder:    "$",
	Numbered:       true,
	QuoteOpen:      '"',
	QuoteClose:     '"',
	QuoteEscape:    '"',
	CheckIdent:     checkIdent,
	True:           "TRUE",
	False:          "FALSE",
	ILike:          " ILIKE ",
	LikeTail:       ` ESCAPE '\'`,
	Returning:      " RETURNING *",
	DefaultValues:  true,
	Upsert:         sqlgen.UpsertOnConflict,
	WriteReturning: true,
	Engine:         "PostgreSQL",
	MaxArgs:        sqlgen.Limit{Max: maxParams, Msg: "statement has %d values, PostgreSQL accepts at most %d"},
}

// Dialect renders plans for PostgreSQL: identifiers in double quotes, values
// as $n parameters, LIMIT/OFFSET paging and INSERT … RETURNING *. It holds no
// state; the zero value is ready to use.
type Dialect struct{}

// Name returns the type code "pg".
func (Dialect) Name() string { return "pg" }

// Render turns a validated plan into one statement. Every request value
// becomes a bound argument; identifiers are quoted, never checked against a
// catalog (the engine has done that).
func (Dialect) Render(p *query.Plan) (dialects.Stmt, error) {
	return syntax.Render(p)
}

// checkIdent reports why name cannot be a PostgreSQL identifier, or nil.
func checkIdent(name string) error {
	if len(name) > maxIdentLen {
		return fault.New(fault.Invalid, "identifier %q is longer than %d bytes", name, maxIdentLen)
	}
	return sqlgen.CheckIdent(name)
}

var _ dialects.Dialect = Dialect{}
