package ma

import (
	"slices"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// inScopeColumn names the last column a scoped merge returns: 1 where the
// row, as the statement left it, is inside the update scope.
const inScopeColumn = "minimal_in_scope"

// scopedMerge reports whether p is an upsert that merges under a row scope
// (query.Plan.Where limits the update part): renderScopedMerge writes it.
func scopedMerge(p *query.Plan) bool {
	return p != nil && p.Action == query.Insert && len(p.OnConflict) > 0 &&
		p.Resolution != query.ResolveIgnore && p.Where != nil && len(mergedColumns(p)) > 0
}

// scopedIgnore reports whether p is an upsert that keeps conflicting rows
// for a caller whose reads are row-scoped (query.Plan.Where is the read
// scope, engine.writeOptions): RETURNING answers the kept rows too, so
// renderScopedIgnore has the statement tell which are inside the scope.
func scopedIgnore(p *query.Plan) bool {
	return p != nil && p.Action == query.Insert && len(p.OnConflict) > 0 &&
		p.Resolution == query.ResolveIgnore && p.Where != nil
}

// renderScopedIgnore writes an upsert that keeps conflicting rows, whose
// RETURNING tells, last, which answered rows are inside the read scope:
//
//	INSERT INTO t (…) VALUES (…) ON DUPLICATE KEY UPDATE k = k
//	RETURNING *, IF(scope, 1, 0) AS minimal_in_scope
//
// Source.insert answers only those, so a kept row the caller may not read
// is not shown.
func (d Dialect) renderScopedIgnore(p *query.Plan) (dialects.Stmt, error) {
	ins := *p
	ins.Where = nil
	body := mariaDB
	body.Returning = ""
	head, err := body.Render(&ins)
	if err != nil {
		return dialects.Stmt{}, err
	}
	var b sqlgen.Builder
	b.Init(&mariaDB, nil)
	returningInScope(&b, mariaDB.Returning, p.Where)
	return joined(head, &b)
}

// returningInScope writes RETURNING (returning) with, last, whether each
// answered row is inside where, as inScopeColumn.
func returningInScope(b *sqlgen.Builder, returning string, where query.Expr) {
	b.Str(returning)
	b.Str(", IF(")
	b.Expr(where, false, true)
	b.Str(", 1, 0) AS ")
	b.Ident(inScopeColumn)
}

// joined is head followed by what b wrote, within MariaDB's limit of
// bound values.
func joined(head dialects.Stmt, b *sqlgen.Builder) (dialects.Stmt, error) {
	tail, err := b.Stmt()
	if err != nil {
		return dialects.Stmt{}, err
	}
	args := append(slices.Clip(head.Args), tail.Args...)
	if len(args) > maxParams {
		return dialects.Stmt{}, fault.New(fault.Invalid, "statement has %d values, MariaDB and MySQL accept at most %d", len(args), maxParams)
	}
	return dialects.Stmt{SQL: head.SQL + tail.SQL, Args: args}, nil
}

// mergedColumns are the columns a merge updates: the insert's columns
// that are not conflict keys.
func mergedColumns(p *query.Plan) []string {
	var out []string
	for _, c := range p.Columns {
		if !slices.Contains(p.OnConflict, c) {
			out = append(out, c)
		}
	}
	return out
}

// renderScopedMerge writes an upsert whose update part is limited by a row
// scope (the plan's Where), which ON DUPLICATE KEY UPDATE has no WHERE
// for, as a guard on every assignment:
//
//	INSERT INTO t (…) VALUES (…) ON DUPLICATE KEY UPDATE
//	  c = IF(scope, VALUES(c), c), …
//	RETURNING *, IF(scope, 1, 0) AS minimal_in_scope
//
// The scope reads the existing row's columns. MariaDB assigns left to
// right and a later assignment sees the columns already assigned, so the
// order matters:
//
//   - A conflicting row outside the scope is never changed, whatever the
//     order: the first guard sees the row as it is and keeps it, so every
//     later guard sees it unchanged too.
//   - For a row inside the scope every guard must hold as well. The
//     columns the scope does not read are assigned first: their guards see
//     the scope's columns as they were. The merged columns the scope reads
//     come last; with one of them, its guard too sees the row as it was.
//     With several, a guard sees some of them already at their new values:
//     that mixed row is inside the scope when each conjunct of the scope
//     (its top-level AND) that reads a merged column reads that column
//     alone, since each such conjunct then holds for the old value (the
//     row was inside the scope) and for the new one (the engine checked
//     the row's values against the whole scope before the plan came here).
//     A scope that ties two merged columns in one conjunct (an OR across
//     them, say) could see a mixed row fail and leave the merge half done:
//     such a plan is refused as Unsupported.
//
// RETURNING answers the inserted row and every conflicting row, changed or
// not: the last column tells which of them are inside the scope after the
// statement; Source.insert answers only those (and counts only those as
// affected), so a row outside the scope is neither changed nor shown.
func (d Dialect) renderScopedMerge(p *query.Plan) (dialects.Stmt, error) {
	merged := mergedColumns(p)
	var reads []string // the columns the scope reads
	_ = query.Walk(p.Where, func(c *query.Cond) error {
		if !slices.Contains(reads, c.Column) {
			reads = append(reads, c.Column)
		}
		return nil
	})
	var first, last []string
	for _, c := range merged {
		if slices.Contains(reads, c) {
			last = append(last, c)
		} else {
			first = append(first, c)
		}
	}
	if len(last) > 1 && !separable(p.Where, last) {
		return dialects.Stmt{}, fault.New(fault.Unsupported, "MariaDB cannot merge into a row under this row scope: it changes %d columns the scope reads together in one condition, which MariaDB's left-to-right assignments would test half-updated; merge these rows as a caller whose scope reads each column in a condition of its own, or use resolution=ignore", len(last))
	}

	syn := mariaDB
	if d.NoReturning {
		syn = mySQL
	}
	ins := *p
	ins.OnConflict, ins.Where = nil, nil
	body := syn
	body.Returning = ""
	head, err := body.Render(&ins)
	if err != nil {
		return dialects.Stmt{}, err
	}

	var b sqlgen.Builder
	b.Init(&syn, nil)
	guard := func() { b.Expr(p.Where, false, true) }
	b.Str(" ON DUPLICATE KEY UPDATE ")
	order := append(first, last...)
	b.List(len(order), func(i int) {
		b.Ident(order[i])
		b.Str(" = IF(")
		guard()
		b.Str(", VALUES(")
		b.Ident(order[i])
		b.Str("), ")
		b.Ident(order[i])
		b.Str(")")
	})
	if syn.Returning != "" {
		returningInScope(&b, syn.Returning, p.Where)
	}
	return joined(head, &b)
}

// separable reports whether every conjunct of where (its top-level AND,
// flattened) that reads one of cols reads no other column.
func separable(where query.Expr, cols []string) bool {
	for _, c := range conjuncts(where) {
		var read []string
		_ = query.Walk(c, func(x *query.Cond) error {
			if !slices.Contains(read, x.Column) {
				read = append(read, x.Column)
			}
			return nil
		})
		if len(read) > 1 && slices.ContainsFunc(read, func(r string) bool { return slices.Contains(cols, r) }) {
			return false
		}
	}
	return true
}

// conjuncts flattens the top-level ANDs of e (and an OR of one item, as
// one role's scope may come).
func conjuncts(e query.Expr) []query.Expr {
	switch x := e.(type) {
	case query.And:
		var out []query.Expr
		for _, it := range x {
			out = append(out, conjuncts(it)...)
		}
		return out
	case *query.And:
		if x != nil {
			return conjuncts(*x)
		}
	case query.Or:
		if len(x) == 1 {
			return conjuncts(x[0])
		}
	case *query.Or:
		if x != nil {
			return conjuncts(*x)
		}
	}
	return []query.Expr{e}
}

// scopeArgs is how many values the guards of a scoped merge bind besides
// its rows' values: the scope's once per merged column and once more for
// RETURNING.
func scopeArgs(p *query.Plan) int {
	if !scopedMerge(p) && !scopedIgnore(p) {
		return 0
	}
	n := 0
	_ = query.Walk(p.Where, func(c *query.Cond) error {
		n += len(c.Args)
		return nil
	})
	if scopedIgnore(p) {
		return n
	}
	return n * (len(mergedColumns(p)) + 1)
}
