package sqlgen

import (
	"slices"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// UpsertStyle is how an engine writes an insert's conflict clause
// (query.Plan.OnConflict).
type UpsertStyle uint8

// The upsert styles.
const (
	// UpsertNone: the engine has no upsert; a plan with one is refused.
	UpsertNone UpsertStyle = iota
	// UpsertOnConflict writes ON CONFLICT (keys) DO UPDATE SET c =
	// EXCLUDED.c … WHERE scope, or DO NOTHING (PostgreSQL, SQLite).
	UpsertOnConflict
	// UpsertOnDuplicateKey writes ON DUPLICATE KEY UPDATE c = VALUES(c)
	// (MariaDB, MySQL): the engine finds the conflict on any unique key,
	// and cannot limit the update to rows satisfying a condition, so a
	// plan whose Where limits the update is refused.
	UpsertOnDuplicateKey
)

// upsert writes the conflict clause of an insert that has one.
func (b *Builder) upsert(p *query.Plan) {
	if len(p.OnConflict) == 0 {
		return
	}
	// Merged: the insert's columns that are not conflict keys.
	var merged []string
	if p.Resolution != query.ResolveIgnore {
		for _, c := range p.Columns {
			if !slices.Contains(p.OnConflict, c) {
				merged = append(merged, c)
			}
		}
	}
	switch b.s.Upsert {
	case UpsertOnConflict:
		b.Str(" ON CONFLICT (")
		b.List(len(p.OnConflict), func(i int) { b.Ident(p.OnConflict[i]) })
		b.Str(")")
		if len(merged) == 0 {
			b.Str(" DO NOTHING")
			return
		}
		b.Str(" DO UPDATE SET ")
		b.List(len(merged), func(i int) {
			b.Ident(merged[i])
			b.Str(" = EXCLUDED.")
			b.Ident(merged[i])
		})
		b.qualify = p // the existing row's columns, not EXCLUDED's
		b.Where(p.Where)
		b.qualify = nil
	case UpsertOnDuplicateKey:
		if p.Where != nil && len(merged) > 0 {
			b.Fail(fault.New(fault.Unsupported, "%s cannot limit an upsert's update to the rows of a row scope: merge upserts are refused for scoped callers (resolution=ignore is accepted)", b.s.Engine))
			return
		}
		b.Str(" ON DUPLICATE KEY UPDATE ")
		if len(merged) == 0 {
			// Keeps the row as it is: unlike INSERT IGNORE, every other
			// error still fails the statement.
			b.Ident(p.OnConflict[0])
			b.Str(" = ")
			b.Ident(p.OnConflict[0])
			return
		}
		b.List(len(merged), func(i int) {
			b.Ident(merged[i])
			b.Str(" = VALUES(")
			b.Ident(merged[i])
			b.Str(")")
		})
	default:
		b.Fail(fault.New(fault.Unsupported, "upsert (on_conflict) is not supported by %s", b.s.Engine))
	}
}

// returning writes an update's or delete's RETURNING list, the plan's
// Columns, when the plan asks for its rows (query.Plan.Return).
func (b *Builder) returning(p *query.Plan) {
	if !p.Return {
		return
	}
	ok := b.s.WriteReturning || p.Action == query.Delete && b.s.DeleteReturning
	if !ok || len(p.Columns) == 0 {
		b.Fail(fault.New(fault.Unsupported, "return=rows on %s is not supported by %s", p.Action, b.s.Engine))
		return
	}
	b.Str(" RETURNING ")
	b.Columns(p.Columns, nil)
}
