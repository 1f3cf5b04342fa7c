package engine

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
)

// grant is what the permission gates leave a plan: the source, the table as
// the caller may see it (view), the full table (for scope columns), and the
// instantiated row scope (nil = unscoped).
type grant struct {
	src   dialects.Source
	table *dialects.Table
	view  *dialects.Table
	// names are the names of view's columns, in order, when the catalog
	// holds them (view is the whole table); nil otherwise.
	names []string
	scope query.Expr
	roles []string
}

// authorize resolves the table and applies the one decision of the gates
// (permissions.Authorize: lock mask, template, row scope). A table the
// caller holds no action on answers exactly like a table that does not
// exist, before the catalog is asked; any other refusal comes after the
// table is found, so a missing table is a 404 whatever the caller holds.
//
// tr, when not nil, records each gate's decision for `policy explain`.
func (e *Engine) authorize(ctx context.Context, p *auth.Principal, plan *query.Plan, object string, tr *Explanation) (*grant, error) {
	g := new(grant)
	if err := e.authorizeTo(ctx, p, plan, object, tr, g); err != nil {
		return nil, err
	}
	return g, nil
}

// authorizeTo is authorize writing the grant into g, which Execute keeps
// in its frame. On an error g is left as it was.
func (e *Engine) authorizeTo(ctx context.Context, p *auth.Principal, plan *query.Plan, object string, tr *Explanation, g *grant) error {
	var ag permissions.Grant
	err := e.authz.AuthorizeTo(p.Subject(), object, plan.Action, &ag)
	var ref *permissions.Refused
	if err != nil {
		if ref = asRefused(err); ref == nil {
			return err
		}
	}
	if ref != nil && ref.Gate == permissions.GateHidden {
		tr.gate("visibility", "hidden", "%s", ref.Detail)
		e.refused(ctx, tr, GateHidden)
		return errNoTable
	}
	s := e.cat.get(p.ProjectID, plan.Type, plan.Schema)
	if s == nil {
		tr.gate("catalog", "not found", "no database %s/%s is registered", plan.Type, plan.Schema)
		return errNoTable
	}
	src, k, err := s.table(ctx, plan.Table, e.cfg.RefreshInterval, e.cfg.MissRefresh, e.cfg.ConnectTimeout)
	tbl := k.t
	if err != nil {
		tr.gate("catalog", "not found", "%s", fault.As(err).Message)
		return err
	}
	if ref != nil {
		// The gates before the refusing one passed.
		if ref.Gate != permissions.GateLock {
			tr.gate("1 lock mask", "pass", "key_type %s AND locks = %s", p.KeyType, ref.Mask)
		}
		if ref.Gate == permissions.GateScope {
			traceColumns(tr, p, plan.Action, ref.Columns)
		}
		tr.gate(gateNames[ref.Gate], "refuse", "%s", ref.Detail)
		e.refused(ctx, tr, ref.Gate)
		return ref.Err
	}
	tr.gate("1 lock mask", "pass", "key_type %s AND locks = %s", p.KeyType, ag.Mask)
	traceColumns(tr, p, plan.Action, ag.Columns)
	if ag.Scope == nil {
		tr.gate("3 row scope", "pass", "unscoped")
		*g = grant{src: src, table: tbl, roles: p.Roles}
		g.view, g.names = view(k, ag.Columns)
		return nil
	}
	// Scope values are coerced against the full table: a scope may use a
	// column the caller cannot see. A scope naming a column the table lacks
	// refuses the call (fail closed).
	if err := query.Walk(ag.Scope, func(c *query.Cond) error { return coerceCond(c, tbl) }); err != nil {
		e.log.WarnContext(ctx, "row scope does not fit the table; refusing", "object", object, "err", err)
		tr.gate("3 row scope", "refuse", "scope does not fit the table: %s", fault.As(err).Message)
		e.refused(ctx, tr, GateScope)
		return permissions.Refusal(p.Roles)
	}
	tr.gate("3 row scope", "pass", "rows limited to %s", query.Format(ag.Scope))
	*g = grant{src: src, table: tbl, scope: ag.Scope, roles: p.Roles}
	g.view, g.names = view(k, ag.Columns)
	return nil
}

// asRefused is the refusal err holds, or nil. A function of its own, so
// that an authorization without error does not allocate errors.As's
// target.
func asRefused(err error) *permissions.Refused {
	var ref *permissions.Refused
	if errors.As(err, &ref) {
		return ref
	}
	return nil
}

// gateNames are the gates as `policy explain` names them.
var gateNames = map[permissions.Gate]string{
	permissions.GateLock:     "1 lock mask",
	permissions.GateTemplate: "2 template",
	permissions.GateScope:    "3 row scope",
}

// traceColumns records gate 2's pass with the columns it grants.
func traceColumns(tr *Explanation, p *auth.Principal, action query.Action, cols []string) {
	if tr == nil {
		return // no explanation is built: box nothing for it
	}
	if cols == nil {
		tr.gate("2 template", "pass", "roles %v may %s every column", p.Roles, action)
	} else {
		tr.gate("2 template", "pass", "roles %v may %s columns %v", p.Roles, action, cols)
	}
}

// valueTestsPerCall bounds the tests of one CheckValues statement, so that
// a large insert stays within every engine's limit of bound values.
const valueTestsPerCall = 200

// applyScope ANDs the row scope into reads, updates and deletes, and holds
// inserted rows and the new values of an update to it. Whether a written
// value satisfies a scope condition is decided by the database, with its own
// conversion to the column's type and its own comparison (a
// dialects.ValueChecker): a text column compares "06" and "6" as text, a
// numeric(6,2) column rounds 999.999 to 1000.00 before comparing. Go only
// does the AND/OR logic around those answers.
//
// An insert is refused unless every row satisfies the scope. An update whose
// new values leave the scope for every row is refused; otherwise it touches
// only the rows that stay inside (the decided scope is ANDed into its WHERE).
func (g *grant) applyScope(ctx context.Context, plan *query.Plan) error {
	if g.scope == nil {
		return nil
	}
	switch plan.Action {
	case query.Read, query.Delete:
		plan.Where = andWhere(plan.Where, g.scope)
	case query.Update:
		set := make(map[string]any, len(plan.Set))
		for _, a := range plan.Set {
			set[a.Column] = a.Value
		}
		var (
			conds []*query.Cond
			tests []dialects.ValueTest
		)
		err := query.Walk(g.scope, func(c *query.Cond) error {
			v, ok := set[c.Column]
			if !ok {
				return nil
			}
			if _, def := v.(query.Default); def {
				// The database's default is not known here: fail closed.
				return permissions.Refusal(g.roles)
			}
			conds = append(conds, c)
			tests = append(tests, dialects.ValueTest{Columns: []string{c.Column}, Row: []any{v}, Expr: c})
			return nil
		})
		if err != nil {
			return err
		}
		held, err := g.checkValues(ctx, tests)
		if err != nil {
			return err
		}
		after, t := query.Fold(g.scope, func(c *query.Cond) (query.Tri, bool) {
			for i, x := range conds {
				if x == c {
					if held[i] {
						return query.True, true
					}
					return query.False, true
				}
			}
			return query.Unknown, false
		})
		if t == query.False {
			return permissions.Refusal(g.roles)
		}
		plan.Where = andWhere(plan.Where, g.scope)
		if t == query.Unknown {
			// Rows whose new values would leave the scope are not touched.
			plan.Where = andWhere(plan.Where, after)
		}
	case query.Insert:
		var cols []string
		_ = query.Walk(g.scope, func(c *query.Cond) error {
			if !slices.Contains(cols, c.Column) {
				cols = append(cols, c.Column)
			}
			return nil
		})
		at := make([]int, len(cols))
		for k, c := range cols {
			// A scope column the insert leaves to the database: its value is
			// not known here, fail closed.
			if at[k] = slices.Index(plan.Columns, c); at[k] < 0 {
				return permissions.Refusal(g.roles)
			}
		}
		tests := make([]dialects.ValueTest, len(plan.Rows))
		for r, row := range plan.Rows {
			vals := make([]any, len(cols))
			for k, i := range at {
				if _, def := row[i].(query.Default); def {
					return permissions.Refusal(g.roles)
				}
				vals[k] = row[i]
			}
			tests[r] = dialects.ValueTest{Columns: cols, Row: vals, Expr: g.scope}
		}
		held, err := g.checkValues(ctx, tests)
		if err != nil {
			return err
		}
		if slices.Contains(held, false) {
			return permissions.Refusal(g.roles)
		}
	}
	return nil
}

// checkValues asks the table's database to decide tests, a bounded number
// per statement. A source that cannot decide them refuses every scoped
// write (fail closed).
func (g *grant) checkValues(ctx context.Context, tests []dialects.ValueTest) ([]bool, error) {
	if len(tests) == 0 {
		return nil, nil
	}
	vc, ok := g.src.(dialects.ValueChecker)
	if !ok {
		return nil, fault.New(fault.Forbidden, "this database cannot check written values against a row scope; scoped writes are refused, got [%s]", strings.Join(g.roles, ", "))
	}
	out := make([]bool, 0, len(tests))
	for chunk := range slices.Chunk(tests, valueTestsPerCall) {
		held, err := vc.CheckValues(ctx, g.table, chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, held...)
	}
	return out, nil
}

func andWhere(a, b query.Expr) query.Expr {
	if a == nil {
		return b
	}
	return query.And{a, b}
}

// view is restrict of k's table, with the names of its columns when they
// are the catalog's (cols nil: every column).
func view(k known, cols []string) (*dialects.Table, []string) {
	if cols == nil {
		return k.t, k.names
	}
	return restrict(k.t, cols), nil
}

// restrict returns the table as seen through a column list (nil: all).
func restrict(t *dialects.Table, cols []string) *dialects.Table {
	if cols == nil {
		return t
	}
	v := &dialects.Table{Schema: t.Schema, Name: t.Name, Columns: make([]dialects.Column, 0, len(cols))}
	for _, c := range t.Columns {
		if _, ok := slices.BinarySearch(cols, c.Name); ok {
			v.Columns = append(v.Columns, c)
		}
	}
	return v
}

// project keeps the returned columns the caller may read.
func project(cols []dialects.Column, rows [][]any, visible []string) ([]dialects.Column, [][]any) {
	if visible == nil {
		return cols, rows
	}
	var keep []int
	var out []dialects.Column
	for i, c := range cols {
		if _, ok := slices.BinarySearch(visible, c.Name); ok {
			keep = append(keep, i)
			out = append(out, c)
		}
	}
	prow := make([][]any, len(rows))
	for r, row := range rows {
		nr := make([]any, len(keep))
		for j, i := range keep {
			nr[j] = row[i]
		}
		prow[r] = nr
	}
	return out, prow
}

// Check tells, without running anything, whether the principal's gates
// let it take action on an object "type/schema/table": nil, or the
// refusal (a 403 naming its roles). A hidden object is not refused here:
// whatever acts on it next answers its 404. A refusal is not counted; the
// operation that follows is.
func (e *Engine) Check(p *auth.Principal, object string, action query.Action) error {
	_, err := e.authz.Authorize(p.Subject(), object, action)
	var ref *permissions.Refused
	if errors.As(err, &ref) {
		if ref.Gate == permissions.GateHidden {
			return nil
		}
		return ref.Err
	}
	return err
}

// word tells the caller which column an integrity violation of a write is
// about, when the dialect knew it and the caller's view holds it; otherwise
// err keeps the dialect's words, which name nothing of the database's
// (dialects.Violation).
func (g *grant) word(err error) error {
	var v *dialects.Violation
	if !errors.As(err, &v) || v.Column == "" {
		return err
	}
	if _, ok := g.view.Column(v.Column); !ok {
		return err
	}
	return fault.Wrap(fault.Invalid, err, "%s", v.ColumnMessage(v.Column))
}
