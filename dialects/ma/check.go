package ma

import (
	"context"
	"regexp"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
)

// CheckValues decides each test with the server's own conversion and
// comparisons; see dialects.ValueChecker. MariaDB and MySQL CAST only to a
// few types, so each column type is mapped to the CAST that converts like a
// strict-mode insert into it does (castTarget).
func (s *Source) CheckValues(ctx context.Context, t *dialects.Table, tests []dialects.ValueTest) ([]bool, error) {
	if s.closed.Load() {
		return nil, fault.New(fault.Unavailable, "database source is closed")
	}
	kind := func(col string) dialects.Kind {
		if c, ok := t.Column(col); ok {
			return c.Kind
		}
		return dialects.KindOther
	}
	var b sqlgen.Builder
	b.Init(&mariaDB, nil)
	adapted := make([]dialects.ValueTest, len(tests))
	for i, ts := range tests {
		e, _ := adaptExpr(ts.Expr, kind)
		adapted[i] = dialects.ValueTest{Columns: ts.Columns, Row: ts.Row, Expr: e}
	}
	b.ValueChecks(adapted, func(col string, v any) {
		c, ok := t.Column(col)
		if !ok {
			b.Fail(fault.New(fault.Internal, "value check: no column %q in %s", col, t.Name))
			return
		}
		v, _ = adaptValue(c.Kind, v)
		b.Str("CAST(")
		b.Arg(v)
		b.Str(" AS " + castTarget(c.DBType) + ")")
	})
	st, err := b.Stmt()
	if err != nil {
		return nil, err
	}
	qctx, cancel := s.bound(ctx)
	defer cancel()
	held, err := sqlgen.QueryChecks(qctx, s.db, st, len(tests))
	if err != nil {
		return nil, s.err(qctx, err)
	}
	return held, nil
}

// precision is the "(p,s)" or "(n)" of a column type.
var precision = regexp.MustCompile(`^\(\d+(,\d+)?\)`)

// castTarget is the CAST type that converts a value as storing it in a
// column of type colType (information_schema COLUMN_TYPE) does: integers
// round (DECIMAL(65,0); SIGNED would truncate 6.5 to 6 where the column
// stores 7), decimals round to their scale, temporal types keep their
// fractional digits, and text compares as text.
func castTarget(colType string) string {
	ct := strings.ToLower(strings.TrimSpace(colType))
	name, rest, _ := strings.Cut(ct, "(")
	name = strings.Fields(name + " ")[0]
	args := ""
	if rest != "" {
		args = precision.FindString("(" + rest)
	}
	switch name {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "bit", "bool", "boolean":
		return "DECIMAL(65,0)"
	case "decimal", "numeric", "dec", "fixed":
		if args == "" {
			return "DECIMAL(10,0)"
		}
		return "DECIMAL" + args
	case "float":
		return "FLOAT"
	case "double", "real":
		return "DOUBLE"
	case "date":
		return "DATE"
	case "datetime", "timestamp":
		return "DATETIME" + args
	case "time":
		return "TIME" + args
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return "BINARY"
	}
	return "CHAR"
}
