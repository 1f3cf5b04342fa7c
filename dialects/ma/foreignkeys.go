package ma

import (
	"context"

	"github.com/littlebitlabs/minimal/dialects"
)

// foreignKeysSQL lists the columns of every foreign key declared in a
// database (KEY_COLUMN_USAGE names the referenced column of each, and
// REFERENTIAL_CONSTRAINTS keeps the rows to foreign keys), constraints in
// byte order of their names and columns in key order.
const foreignKeysSQL = `
SELECT k.TABLE_NAME, k.CONSTRAINT_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_SCHEMA, k.REFERENCED_TABLE_NAME,
       k.REFERENCED_COLUMN_NAME
FROM information_schema.KEY_COLUMN_USAGE k
JOIN information_schema.REFERENTIAL_CONSTRAINTS r ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA
     AND r.TABLE_NAME = k.TABLE_NAME AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME
WHERE k.TABLE_SCHEMA = ? AND k.REFERENCED_TABLE_NAME IS NOT NULL
ORDER BY CAST(k.TABLE_NAME AS BINARY), CAST(k.CONSTRAINT_NAME AS BINARY), k.ORDINAL_POSITION`

// fkColumn is one row of foreignKeysSQL.
type fkColumn struct {
	table, constraint, column, refSchema, refTable, refColumn string
}

// foreignKeys sets RefTable and RefColumn on the columns of tables that a
// single-column foreign key to a table of the same database declares, as
// PostgreSQL's introspection does: a composite key or one into another
// database is not shown; of two keys on one column, the first by name.
func (s *Source) foreignKeys(ctx context.Context, tables []dialects.Table) error {
	rs, release, err := s.rawQuery(ctx, foreignKeysSQL, []any{s.schema})
	if err != nil {
		return err
	}
	defer release()
	defer rs.Close()
	var fks []fkColumn
	for rs.Next() {
		var f fkColumn
		if err := rs.Scan(&f.table, &f.constraint, &f.column, &f.refSchema, &f.refTable, &f.refColumn); err != nil {
			return err
		}
		fks = append(fks, f)
	}
	if err := rs.Err(); err != nil {
		return err
	}
	setForeignKeys(s.schema, tables, fks)
	return nil
}

// setForeignKeys applies the rows of foreignKeysSQL, in its order.
func setForeignKeys(schema string, tables []dialects.Table, fks []fkColumn) {
	byName := make(map[string]*dialects.Table, len(tables))
	for i := range tables {
		byName[tables[i].Name] = &tables[i]
	}
	for i := 0; i < len(fks); {
		j := i + 1
		for j < len(fks) && fks[j].table == fks[i].table && fks[j].constraint == fks[i].constraint {
			j++
		}
		f, single := fks[i], j-i == 1
		i = j
		if !single || f.refSchema != schema {
			continue
		}
		t := byName[f.table]
		if t == nil {
			continue
		}
		if c, ok := t.Column(f.column); ok && c.RefTable == "" {
			c.RefTable, c.RefColumn = f.refTable, f.refColumn
		}
	}
}
