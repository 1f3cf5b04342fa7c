package ms

import (
	"slices"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// The aliases of a MERGE's target and source.
var (
	mergeTarget = &query.Plan{Table: "t"}
	mergeSource = &query.Plan{Table: "s"}
)

// renderMerge writes an upsert (query.Plan.OnConflict) as SQL Server's
// MERGE, holding its range lock until the end (WITH (HOLDLOCK)) so that two
// upserts of the same key cannot both insert:
//
//	MERGE INTO t WITH (HOLDLOCK) AS [t]
//	USING (VALUES (…), …) AS [s] (columns) ON [t].[k] = [s].[k]
//	WHEN MATCHED [AND scope] THEN UPDATE SET [c] = [s].[c], …
//	WHEN NOT MATCHED THEN INSERT (columns) VALUES ([s].[c], …)
//	OUTPUT INSERTED.*;
//
// Resolution ignore leaves out WHEN MATCHED. The plan's Where (the update
// scope) limits the update to the existing rows it holds for, written on
// the target's columns; a conflicting row outside it is left as it is and
// not returned. OUTPUT answers the inserted and the merged rows. A column
// DEFAULT in every row is left out, as in an insert; a column NULL in every
// row is written as NULL where it is used, since a VALUES column of NULLs
// alone is an int, which not every column type converts from; a column
// DEFAULT in some rows only cannot be expressed in the VALUES source and is
// refused.
func renderMerge(p *query.Plan) (dialects.Stmt, error) {
	var b sqlgen.Builder
	b.Init(&syntax, nil)
	keep, ok := b.InsertColumns(p)
	if !ok {
		return b.Stmt()
	}
	var src, nulls []string // source columns; columns NULL in every row
	var srcIdx []int
	for _, c := range keep {
		name := p.Columns[c]
		defaults, null := 0, 0
		for _, row := range p.Rows {
			switch row[c].(type) {
			case query.Default:
				defaults++
			case nil:
				null++
			}
		}
		switch {
		case defaults > 0:
			return dialects.Stmt{}, fault.New(fault.Unsupported, "an upsert on SQL Server cannot take DEFAULT for column %q in some rows and a value in others: send those rows separately", name)
		case null == len(p.Rows) && !slices.Contains(p.OnConflict, name):
			nulls = append(nulls, name)
		default:
			src = append(src, name)
			srcIdx = append(srcIdx, c)
		}
	}
	for _, k := range p.OnConflict {
		if !slices.Contains(src, k) {
			return dialects.Stmt{}, fault.New(fault.Invalid, "an upsert needs the values of its conflict columns: %q has none", k)
		}
	}
	cols := append(slices.Clone(src), nulls...) // the insert's columns
	var merged []string
	if p.Resolution != query.ResolveIgnore {
		for _, c := range cols {
			if !slices.Contains(p.OnConflict, c) {
				merged = append(merged, c)
			}
		}
	}
	value := func(c string) {
		if slices.Contains(nulls, c) {
			b.Str("NULL")
			return
		}
		b.Table(mergeSource)
		b.Str(".")
		b.Ident(c)
	}

	b.Str("MERGE INTO ")
	b.Table(p)
	b.Str(" WITH (HOLDLOCK) AS ")
	b.Table(mergeTarget)
	b.Str(" USING (VALUES ")
	for r, row := range p.Rows {
		if r > 0 {
			b.Str(", ")
		}
		b.Str("(")
		b.List(len(srcIdx), func(i int) { b.Value(row[srcIdx[i]]) })
		b.Str(")")
	}
	b.Str(") AS ")
	b.Table(mergeSource)
	b.Str(" (")
	b.Columns(src, nil)
	b.Str(") ON ")
	for i, k := range p.OnConflict {
		if i > 0 {
			b.Str(" AND ")
		}
		b.Table(mergeTarget)
		b.Str(".")
		b.Ident(k)
		b.Str(" = ")
		value(k)
	}
	if len(merged) > 0 {
		b.Str(" WHEN MATCHED")
		if p.Where != nil {
			b.Str(" AND ")
			b.Qualify(mergeTarget)
			b.Expr(p.Where, false, false)
			b.Qualify(nil)
		}
		b.Str(" THEN UPDATE SET ")
		b.List(len(merged), func(i int) {
			b.Ident(merged[i])
			b.Str(" = ")
			value(merged[i])
		})
	}
	b.Str(" WHEN NOT MATCHED THEN INSERT (")
	b.Columns(cols, nil)
	b.Str(") VALUES (")
	b.List(len(cols), func(i int) { value(cols[i]) })
	b.Str(")")
	b.Str(syntax.Output)
	b.Str(";")
	return b.Stmt()
}

// renderOutput writes an update or delete that answers its rows
// (query.Plan.Return) with an OUTPUT list of the plan's Columns, the
// values after an update (INSERTED) and before a delete (DELETED):
//
//	UPDATE t SET … OUTPUT INSERTED.[c], … WHERE …
//	DELETE FROM t OUTPUT DELETED.[c], … WHERE …
func renderOutput(p *query.Plan) (dialects.Stmt, error) {
	var b sqlgen.Builder
	b.Init(&syntax, nil)
	if len(p.Columns) == 0 {
		return dialects.Stmt{}, fault.New(fault.Invalid, "return=rows needs the columns to return")
	}
	b.GuardUnfiltered(p)
	image := "DELETED."
	if p.Action == query.Update {
		if len(p.Set) == 0 {
			return dialects.Stmt{}, fault.New(fault.Invalid, "update needs at least one column to set")
		}
		image = "INSERTED."
		b.Str("UPDATE ")
		b.Table(p)
		b.Str(" SET ")
		b.List(len(p.Set), func(i int) {
			b.Ident(p.Set[i].Column)
			b.Str(" = ")
			b.Value(p.Set[i].Value)
		})
	} else {
		b.Str("DELETE FROM ")
		b.Table(p)
	}
	b.Str(" OUTPUT ")
	b.List(len(p.Columns), func(i int) {
		b.Str(image)
		b.Ident(p.Columns[i])
	})
	b.Where(p.Where)
	return b.Stmt()
}
