package ma

import (
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
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

// mariaDB is the syntax of MariaDB 10.5 and later; mySQL that of MySQL and
// older MariaDB, which have no INSERT … RETURNING.
var (
	mariaDB = sqlgen.Syntax{
		Placeholder: "?",
		QuoteOpen:   '`',
		QuoteClose:  '`',
		QuoteEscape: '`',
		CheckIdent:  checkIdent,
		True:        "TRUE",
		False:       "FALSE",
		LikeTail:    binCollation + likeEscape,
		NoLimit:     noLimit,
		Returning:   " RETURNING *",
		Upsert:      sqlgen.UpsertOnDuplicateKey,
		Engine:      "MariaDB",
		// DELETE … RETURNING; UPDATE has none.
		DeleteReturning: true,
		MaxArgs:         sqlgen.Limit{Max: maxParams, Msg: "statement has %d values, MariaDB and MySQL accept at most %d"},
	}
	mySQL = withoutReturning(mariaDB)
)

func withoutReturning(s sqlgen.Syntax) sqlgen.Syntax {
	s.Returning = ""
	s.DeleteReturning = false
	return s
}

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
// catalog (the engine has done that). LIKE is case-sensitive whatever the
// column's collation; ILIKE lowers both sides and compares them exactly:
// case-insensitive but accent-sensitive, as PostgreSQL's ILIKE.
//
// An update that answers its rows (query.Plan.Return) is no one statement:
// MariaDB has no UPDATE … RETURNING, and Source reads the rows back by
// primary key in the update's transaction (see updateReturning).
//
// An upsert that merges under a row scope (the plan's Where) guards each
// assignment of ON DUPLICATE KEY UPDATE with the scope and answers, last,
// whether each returned row is inside it (see renderScopedMerge); one that
// keeps duplicates for a read-scoped caller answers the same column
// (renderScopedIgnore).
func (d Dialect) Render(p *query.Plan) (dialects.Stmt, error) {
	if p != nil && p.Action == query.Update && p.Return {
		return dialects.Stmt{}, fault.New(fault.Unsupported, "return=rows on update is not one statement on MariaDB (it has no UPDATE … RETURNING): the source reads the updated rows back by primary key")
	}
	if scopedMerge(p) {
		return d.renderScopedMerge(p)
	}
	if scopedIgnore(p) && !d.NoReturning {
		return d.renderScopedIgnore(p)
	}
	if d.NoReturning {
		return mySQL.Render(p)
	}
	return mariaDB.Render(p)
}

// checkIdent reports why name cannot be an identifier, or nil.
func checkIdent(name string) error {
	if err := sqlgen.CheckIdent(name); err != nil {
		return err
	}
	switch {
	case !utf8.ValidString(name):
		return fault.New(fault.Invalid, "identifier is not valid UTF-8")
	case utf8.RuneCountInString(name) > maxIdentLen:
		return fault.New(fault.Invalid, "identifier %q is longer than %d characters", name, maxIdentLen)
	}
	return nil
}

var _ dialects.Dialect = Dialect{}
