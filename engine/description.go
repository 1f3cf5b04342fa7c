package engine

import (
	"context"

	"github.com/littlebitlabs/minimal/auth"
)

// Description is a table as one caller may see it: the columns some held
// action may use, with their types, keys and foreign keys, and the
// caller's actions. It is built once (Describe), from Access, and both
// faces render it as it is: the REST description route and the MCP tool
// meta_describe_table answer the same document for the same token.
type Description struct {
	Type   string `json:"type"`
	Schema string `json:"schema"`
	Table  string `json:"table"`
	// Actions are those the caller holds on the table (read, create,
	// update, delete), key_type, locks, templates and scopes applied.
	Actions []string `json:"actions"`
	// RowScoped are the held actions that a row scope narrows.
	RowScoped []string `json:"row_scoped"`
	// PrimaryKey names the key's columns the caller sees, in table order.
	PrimaryKey []string            `json:"primary_key"`
	Columns    []ColumnDescription `json:"columns"`
}

// ColumnDescription is a column of a Description.
type ColumnDescription struct {
	Name string `json:"name"`
	// Type is the database's own type name; Kind the neutral one.
	Type       string `json:"type"`
	Kind       string `json:"kind"`
	Nullable   bool   `json:"nullable"`
	PrimaryKey bool   `json:"primary_key"`
	// HasDefault: the database can fill the column (default, identity,
	// generated); Default is the expression when the database tells it.
	HasDefault bool    `json:"has_default"`
	Default    *string `json:"default"`
	// References is the column a single-column foreign key on this column
	// points at, when the dialect tells (PostgreSQL, MariaDB/MySQL, SQL
	// Server) and the caller may see that table and column; nil otherwise,
	// so a hidden table or column is absent here as everywhere.
	References *ColumnRef `json:"references"`
	// Actions are those the caller may use the column in.
	Actions []string `json:"actions"`
}

// ColumnRef names a column of a table of the same database.
type ColumnRef struct {
	Table  string `json:"table"`
	Column string `json:"column"`
}

// Describe describes a table of a project's database as the principal may
// see it. A table it may not see is a NotFound, exactly as a missing one;
// an unregistered database is the NotFound of Access.
func (e *Engine) Describe(ctx context.Context, p *auth.Principal, typ, schema, table string) (Description, error) {
	ts, err := e.Access(ctx, p, typ, schema)
	if err != nil {
		return Description{}, err
	}
	for _, t := range ts {
		if t.Name == table {
			return describe(t, ts), nil
		}
	}
	return Description{}, errNoTable
}

// describe builds t's description: every column some held action may use,
// in table order. A foreign key is kept only when its target column is one
// the caller sees in db, the database's visible tables.
func describe(t TableAccess, db []TableAccess) Description {
	d := Description{Type: t.Type, Schema: t.Schema, Table: t.Name, Actions: []string{},
		RowScoped: []string{}, PrimaryKey: []string{}, Columns: []ColumnDescription{}}
	uses := map[string][]string{}
	for _, g := range t.Actions {
		d.Actions = append(d.Actions, g.Action.String())
		if g.Scoped {
			d.RowScoped = append(d.RowScoped, g.Action.String())
		}
		for _, c := range g.Columns {
			uses[c.Name] = append(uses[c.Name], g.Action.String())
		}
	}
	for _, c := range t.Columns {
		e := ColumnDescription{Name: c.Name, Type: c.DBType, Kind: c.Kind.String(), Nullable: c.Nullable,
			PrimaryKey: c.PrimaryKey, HasDefault: c.HasDefault, Actions: uses[c.Name]}
		if e.Actions == nil {
			e.Actions = []string{}
		}
		if c.Default != "" {
			def := c.Default
			e.Default = &def
		}
		if c.RefTable != "" && visibleColumn(db, c.RefTable, c.RefColumn) {
			e.References = &ColumnRef{Table: c.RefTable, Column: c.RefColumn}
		}
		if c.PrimaryKey {
			d.PrimaryKey = append(d.PrimaryKey, c.Name)
		}
		d.Columns = append(d.Columns, e)
	}
	return d
}

// visibleColumn reports whether the caller sees a column of a table of db.
func visibleColumn(db []TableAccess, table, column string) bool {
	for _, t := range db {
		if t.Name == table {
			for _, c := range t.Columns {
				if c.Name == column {
					return true
				}
			}
		}
	}
	return false
}
