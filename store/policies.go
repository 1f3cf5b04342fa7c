package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/fault"
)

// Actions of a template rule, in CRUD order.
const (
	ActionCreate = "create"
	ActionRead   = "read"
	ActionUpdate = "update"
	ActionDelete = "delete"
	// ActionSchema lets a role change a table's definition (the mini-app
	// schema_* tools), on top of the create/update/delete right those
	// tools also need. It grants no row access of its own.
	ActionSchema = "schema"
)

// maxFilterLen bounds a scope filter; a filter is a handful of terms.
const maxFilterLen = 4096

// ErrStaleVersion is the cause of the fault.Conflict that ReplacePolicyAt
// returns when the policy is no longer at the version the caller read.
var ErrStaleVersion = errors.New("store: stale policy version")

// Policy returns the permission state of a project in a deterministic
// order (byte order of the keys, the same on every backend): templates by
// name with their rules by position, bindings by role with template names
// sorted, scopes by role then object, locks by pattern. Every slice is
// non-nil; a rule without a column list has nil Columns and every rule has
// its Effect set. It reads one consistent snapshot. An unknown project is
// fault.NotFound.
func (s *Store) Policy(ctx context.Context, projectID string) (Policy, error) {
	p, _, err := s.VersionedPolicy(ctx, projectID)
	return p, err
}

// VersionedPolicy is Policy with the version of the policy read in the
// same snapshot. Every write of a project's policy advances its version
// (ReplacePolicy, ReplacePolicyAt, AddLock, RemoveLock); a caller that
// edits what it read writes it back with ReplacePolicyAt and that version,
// so an edit made in between, by any server, is never overwritten.
func (s *Store) VersionedPolicy(ctx context.Context, projectID string) (Policy, int64, error) {
	const op = "store: read policy"
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Policy{}, 0, dbErr(err, op)
	}
	defer tx.Rollback()
	var version int64
	switch err := tx.QueryRowContext(ctx, `SELECT policy_version FROM projects WHERE id = ?`, projectID).Scan(&version); {
	case errors.Is(err, sql.ErrNoRows):
		return Policy{}, 0, fault.New(fault.NotFound, "project id %q not found", projectID)
	case err != nil:
		return Policy{}, 0, dbErr(err, op)
	}
	p, err := readPolicy(ctx, tx, projectID)
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) {
			return Policy{}, 0, err
		}
		return Policy{}, 0, dbErr(err, op)
	}
	return p, version, nil
}

// bumpPolicy advances the policy version of a project inside a write
// transaction. With at > 0 it does so only while the version is at: the
// comparison and the increment are one UPDATE, which holds the project's
// row until the transaction ends, so two writers of one version cannot
// both pass (on PostgreSQL the second waits, then finds the version moved).
// It returns the new version; a moved version is fault.Conflict wrapping
// ErrStaleVersion.
func bumpPolicy(ctx context.Context, tx *sql.Tx, projectID string, at int64) (int64, error) {
	q, args := `UPDATE projects SET policy_version = policy_version + 1 WHERE id = ?`, []any{projectID}
	if at > 0 {
		q, args = q+` AND policy_version = ?`, append(args, at)
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	var now int64
	switch err := tx.QueryRowContext(ctx, `SELECT policy_version FROM projects WHERE id = ?`, projectID).Scan(&now); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, fault.New(fault.NotFound, "project id %q not found", projectID)
	case err != nil:
		return 0, err
	}
	if n == 0 {
		return 0, StaleVersion(at, now)
	}
	return now, nil
}

// StaleVersion is the error of a write of the policy at version at when it
// is at version now: fault.Conflict wrapping ErrStaleVersion.
func StaleVersion(at, now int64) error {
	return fault.Wrap(fault.Conflict, ErrStaleVersion,
		"the policy of this project changed since version %d (it is at version %d now): read it again and retry", at, now)
}

// ReplacePolicy makes p the whole permission state of a project: its
// templates (with their rules), bindings, scopes and locks are replaced in
// one transaction that bumps the change counter once. Template.ID,
// Template.ProjectID, Lock.ID and Lock.ProjectID of p are ignored; a
// template or lock that keeps its name or pattern keeps its id. An empty
// Effect means allow.
//
// p is checked first, as a whole (fault.Invalid naming what is wrong):
// names; actions among create, read, update, delete, schema without repeats;
// effects allow or deny; a column list, when given, non-empty and without
// repeats; object and lock patterns of one to three '/'-separated non-empty
// path.Match globs; masks of four CRUD characters; non-empty scope filters;
// no duplicate template name, binding role, template within a binding,
// (role, object) scope or lock pattern; every binding naming templates of
// p. An unknown project is fault.NotFound. The policy's version advances
// by one, whatever it was: this is last-write-wins, as `minimal apply`
// wants; an edit of what was read uses ReplacePolicyAt.
func (s *Store) ReplacePolicy(ctx context.Context, projectID string, p Policy) error {
	_, err := s.replacePolicy(ctx, projectID, p, 0)
	return err
}

// ReplacePolicyAt is ReplacePolicy applied only while the policy is still
// at version (as VersionedPolicy read it, > 0): the version is compared and
// advanced in the transaction that writes the policy. It returns the new
// version; a policy at another version is left as it is and the answer is
// fault.Conflict wrapping ErrStaleVersion.
func (s *Store) ReplacePolicyAt(ctx context.Context, projectID string, p Policy, version int64) (int64, error) {
	if version <= 0 {
		return 0, fault.New(fault.Invalid, "policy version %d: versions start at 1", version)
	}
	return s.replacePolicy(ctx, projectID, p, version)
}

func (s *Store) replacePolicy(ctx context.Context, projectID string, p Policy, at int64) (int64, error) {
	n, err := normPolicy(p)
	if err != nil {
		return 0, err
	}
	// Ids are made before the transaction so it holds the write lock only
	// for the statements.
	newIDs := make([]string, len(n.Templates)+len(n.Locks))
	for i := range newIDs {
		if newIDs[i], err = newID(); err != nil {
			return 0, err
		}
	}
	rows := make([][]ruleRow, len(n.Templates))
	for i, t := range n.Templates {
		if rows[i], err = encodeRules(t); err != nil {
			return 0, err
		}
	}
	_, stamp := now()
	var version int64
	err = s.write(ctx, "store: replace policy", func(tx *sql.Tx) error {
		if err := projectExists(ctx, tx, projectID); err != nil {
			return err
		}
		v, err := bumpPolicy(ctx, tx, projectID, at)
		if err != nil {
			return err
		}
		version = v
		oldTemplates, err := pairs(ctx, tx, `SELECT name, id FROM templates WHERE project_id = ?`, projectID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM bindings WHERE project_id = ?`, projectID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM template_rules WHERE template_id IN (SELECT id FROM templates WHERE project_id = ?)`, projectID); err != nil {
			return err
		}
		keep := make(map[string]bool, len(n.Templates))
		for _, t := range n.Templates {
			keep[t.Name] = true
		}
		for name, id := range oldTemplates {
			if !keep[name] {
				if _, err := tx.ExecContext(ctx, `DELETE FROM templates WHERE id = ?`, id); err != nil {
					return err
				}
			}
		}
		ids := make(map[string]string, len(n.Templates))
		for i, t := range n.Templates {
			id, ok := oldTemplates[t.Name]
			if !ok {
				id = newIDs[i]
				if _, err := tx.ExecContext(ctx, `INSERT INTO templates (id, project_id, name) VALUES (?, ?, ?)`,
					id, projectID, t.Name); err != nil {
					return err
				}
			}
			ids[t.Name] = id
			for pos, r := range rows[i] {
				if _, err := tx.ExecContext(ctx, `INSERT INTO template_rules (template_id, position, object, actions, columns, effect)
VALUES (?, ?, ?, ?, ?, ?)`, id, pos, r.object, r.actions, r.columns, r.effect); err != nil {
					return err
				}
			}
		}
		for _, b := range n.Bindings {
			for _, name := range b.Templates {
				if _, err := tx.ExecContext(ctx, `INSERT INTO bindings (project_id, role, template_id) VALUES (?, ?, ?)`,
					projectID, b.Role, ids[name]); err != nil {
					return err
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM scopes WHERE project_id = ?`, projectID); err != nil {
			return err
		}
		for _, sc := range n.Scopes {
			if _, err := tx.ExecContext(ctx, `INSERT INTO scopes (project_id, role, object, filter) VALUES (?, ?, ?, ?)`,
				projectID, sc.Role, sc.Object, sc.Filter); err != nil {
				return err
			}
		}
		oldLocks, err := pairs(ctx, tx, `SELECT pattern, mask FROM locks WHERE project_id = ?`, projectID)
		if err != nil {
			return err
		}
		wantLocks := make(map[string]bool, len(n.Locks))
		for i, l := range n.Locks {
			wantLocks[l.Pattern] = true
			mask, ok := oldLocks[l.Pattern]
			switch {
			case !ok:
				_, err = tx.ExecContext(ctx, `INSERT INTO locks (id, project_id, pattern, mask, created_at) VALUES (?, ?, ?, ?, ?)`,
					newIDs[len(n.Templates)+i], projectID, l.Pattern, l.Mask, stamp)
			case mask != l.Mask:
				_, err = tx.ExecContext(ctx, `UPDATE locks SET mask = ? WHERE project_id = ? AND pattern = ?`, l.Mask, projectID, l.Pattern)
			}
			if err != nil {
				return err
			}
		}
		for pattern := range oldLocks {
			if !wantLocks[pattern] {
				if _, err := tx.ExecContext(ctx, `DELETE FROM locks WHERE project_id = ? AND pattern = ?`, projectID, pattern); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return version, nil
}

// ruleRow is a rule in its stored form.
type ruleRow struct {
	object, actions, effect string
	columns                 sql.NullString
}

func encodeRules(t Template) ([]ruleRow, error) {
	out := make([]ruleRow, len(t.Rules))
	for i, r := range t.Rules {
		actions, err := json.Marshal(r.Actions)
		if err != nil {
			return nil, fault.Wrap(fault.Internal, err, "store: encode actions")
		}
		out[i] = ruleRow{object: r.Object, actions: string(actions), effect: r.Effect}
		if r.Columns != nil {
			cols, err := json.Marshal(r.Columns)
			if err != nil {
				return nil, fault.Wrap(fault.Internal, err, "store: encode columns")
			}
			out[i].columns = sql.NullString{String: string(cols), Valid: true}
		}
	}
	return out, nil
}

// readPolicy loads the policy of a project inside q (a transaction, for a
// consistent snapshot).
func readPolicy(ctx context.Context, q querier, projectID string) (Policy, error) {
	p := Policy{Templates: []Template{}, Bindings: []Binding{}, Scopes: []Scope{}, Locks: []Lock{}}
	rows, err := q.QueryContext(ctx, `SELECT id, name FROM templates WHERE project_id = ?`, projectID)
	if err != nil {
		return Policy{}, err
	}
	p.Templates, err = collect(rows, func(r interface{ Scan(...any) error }) (Template, error) {
		t := Template{ProjectID: projectID, Rules: []Rule{}}
		err := r.Scan(&t.ID, &t.Name)
		return t, err
	}, "store: read templates")
	if err != nil {
		return Policy{}, err
	}
	slices.SortFunc(p.Templates, func(a, b Template) int { return strings.Compare(a.Name, b.Name) })
	byID := make(map[string]*Template, len(p.Templates))
	for i := range p.Templates {
		byID[p.Templates[i].ID] = &p.Templates[i]
	}

	type posRule struct {
		template string
		pos      int
		rule     Rule
	}
	rows, err = q.QueryContext(ctx, `SELECT r.template_id, r.position, r.object, r.actions, r.columns, r.effect
FROM template_rules r JOIN templates t ON t.id = r.template_id
WHERE t.project_id = ? ORDER BY r.template_id, r.position`, projectID)
	if err != nil {
		return Policy{}, err
	}
	rules, err := collect(rows, func(r interface{ Scan(...any) error }) (posRule, error) {
		var x posRule
		var actions string
		var columns sql.NullString
		if err := r.Scan(&x.template, &x.pos, &x.rule.Object, &actions, &columns, &x.rule.Effect); err != nil {
			return posRule{}, err
		}
		if err := json.Unmarshal([]byte(actions), &x.rule.Actions); err != nil {
			return posRule{}, fault.Wrap(fault.Internal, err, "store: rule on %q has malformed actions", x.rule.Object)
		}
		if x.rule.Actions == nil {
			x.rule.Actions = []string{}
		}
		if columns.Valid {
			if err := json.Unmarshal([]byte(columns.String), &x.rule.Columns); err != nil {
				return posRule{}, fault.Wrap(fault.Internal, err, "store: rule on %q has malformed columns", x.rule.Object)
			}
			if x.rule.Columns == nil {
				x.rule.Columns = []string{}
			}
		}
		return x, nil
	}, "store: read template rules")
	if err != nil {
		return Policy{}, err
	}
	for _, x := range rules {
		if t := byID[x.template]; t != nil {
			t.Rules = append(t.Rules, x.rule)
		}
	}

	rows, err = q.QueryContext(ctx, `SELECT b.role, t.name FROM bindings b JOIN templates t ON t.id = b.template_id
WHERE b.project_id = ?`, projectID)
	if err != nil {
		return Policy{}, err
	}
	type roleTemplate struct{ role, template string }
	rts, err := collect(rows, func(r interface{ Scan(...any) error }) (roleTemplate, error) {
		var x roleTemplate
		err := r.Scan(&x.role, &x.template)
		return x, err
	}, "store: read bindings")
	if err != nil {
		return Policy{}, err
	}
	slices.SortFunc(rts, func(a, b roleTemplate) int {
		return cmp.Or(strings.Compare(a.role, b.role), strings.Compare(a.template, b.template))
	})
	for _, x := range rts {
		if n := len(p.Bindings); n > 0 && p.Bindings[n-1].Role == x.role {
			p.Bindings[n-1].Templates = append(p.Bindings[n-1].Templates, x.template)
			continue
		}
		p.Bindings = append(p.Bindings, Binding{Role: x.role, Templates: []string{x.template}})
	}

	rows, err = q.QueryContext(ctx, `SELECT role, object, filter FROM scopes WHERE project_id = ?`, projectID)
	if err != nil {
		return Policy{}, err
	}
	p.Scopes, err = collect(rows, func(r interface{ Scan(...any) error }) (Scope, error) {
		var sc Scope
		err := r.Scan(&sc.Role, &sc.Object, &sc.Filter)
		return sc, err
	}, "store: read scopes")
	if err != nil {
		return Policy{}, err
	}
	slices.SortFunc(p.Scopes, func(a, b Scope) int {
		return cmp.Or(strings.Compare(a.Role, b.Role), strings.Compare(a.Object, b.Object))
	})

	rows, err = q.QueryContext(ctx, `SELECT `+lockCols+` FROM locks WHERE project_id = ?`, projectID)
	if err != nil {
		return Policy{}, err
	}
	if p.Locks, err = collect(rows, scanLock, "store: read locks"); err != nil {
		return Policy{}, err
	}
	slices.SortFunc(p.Locks, func(a, b Lock) int { return strings.Compare(a.Pattern, b.Pattern) })
	return p, nil
}

// pairs reads a two-column query into a map from the first column to the
// second.
func pairs(ctx context.Context, q querier, query string, args ...any) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]string)
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// normPolicy checks a policy and returns a normalized copy: effects
// filled in, bindings sorted by role with sorted template names, scopes by
// role and object, locks by pattern, ids and project ids cleared.
func normPolicy(p Policy) (Policy, error) {
	out := Policy{
		Templates: make([]Template, 0, len(p.Templates)),
		Bindings:  make([]Binding, 0, len(p.Bindings)),
		Scopes:    make([]Scope, 0, len(p.Scopes)),
		Locks:     make([]Lock, 0, len(p.Locks)),
	}
	names := make(map[string]bool, len(p.Templates))
	for _, t := range p.Templates {
		if err := checkName("template name", t.Name); err != nil {
			return Policy{}, err
		}
		if names[t.Name] {
			return Policy{}, fault.New(fault.Invalid, "template %q is defined twice", t.Name)
		}
		names[t.Name] = true
		nt := Template{Name: t.Name, Rules: make([]Rule, 0, len(t.Rules))}
		for i, r := range t.Rules {
			nr, err := normRule(r)
			if err != nil {
				return Policy{}, fault.New(fault.Invalid, "template %q, rule %d: %s", t.Name, i+1, fault.As(err).Message)
			}
			nt.Rules = append(nt.Rules, nr)
		}
		out.Templates = append(out.Templates, nt)
	}
	slices.SortFunc(out.Templates, func(a, b Template) int { return strings.Compare(a.Name, b.Name) })

	roles := make(map[string]bool, len(p.Bindings))
	for _, b := range p.Bindings {
		if err := checkName("binding role", b.Role); err != nil {
			return Policy{}, err
		}
		if roles[b.Role] {
			return Policy{}, fault.New(fault.Invalid, "role %q is bound twice; list all its templates in one binding", b.Role)
		}
		roles[b.Role] = true
		if len(b.Templates) == 0 {
			return Policy{}, fault.New(fault.Invalid, "binding of role %q names no template", b.Role)
		}
		ts := slices.Clone(b.Templates)
		slices.Sort(ts)
		for i, name := range ts {
			if !names[name] {
				return Policy{}, fault.New(fault.Invalid, "binding of role %q names unknown template %q", b.Role, name)
			}
			if i > 0 && ts[i-1] == name {
				return Policy{}, fault.New(fault.Invalid, "binding of role %q names template %q twice", b.Role, name)
			}
		}
		out.Bindings = append(out.Bindings, Binding{Role: b.Role, Templates: ts})
	}
	slices.SortFunc(out.Bindings, func(a, b Binding) int { return strings.Compare(a.Role, b.Role) })

	type roleObject struct{ role, object string }
	scopes := make(map[roleObject]bool, len(p.Scopes))
	for _, sc := range p.Scopes {
		if err := checkName("scope role", sc.Role); err != nil {
			return Policy{}, err
		}
		if err := checkPattern("scope object", sc.Object); err != nil {
			return Policy{}, err
		}
		if err := checkFilter(sc); err != nil {
			return Policy{}, err
		}
		k := roleObject{sc.Role, sc.Object}
		if scopes[k] {
			return Policy{}, fault.New(fault.Invalid, "role %q has two scopes on %q", sc.Role, sc.Object)
		}
		scopes[k] = true
		out.Scopes = append(out.Scopes, Scope{Role: sc.Role, Object: sc.Object, Filter: sc.Filter})
	}
	slices.SortFunc(out.Scopes, func(a, b Scope) int {
		return cmp.Or(strings.Compare(a.Role, b.Role), strings.Compare(a.Object, b.Object))
	})

	patterns := make(map[string]bool, len(p.Locks))
	for _, l := range p.Locks {
		if err := checkPattern("lock pattern", l.Pattern); err != nil {
			return Policy{}, err
		}
		if err := checkMask("lock mask", l.Mask); err != nil {
			return Policy{}, err
		}
		if patterns[l.Pattern] {
			return Policy{}, fault.New(fault.Invalid, "lock on %q is given twice", l.Pattern)
		}
		patterns[l.Pattern] = true
		out.Locks = append(out.Locks, Lock{Pattern: l.Pattern, Mask: l.Mask})
	}
	slices.SortFunc(out.Locks, func(a, b Lock) int { return strings.Compare(a.Pattern, b.Pattern) })
	return out, nil
}

// normRule checks one rule and fills in its effect.
func normRule(r Rule) (Rule, error) {
	if err := checkPattern("object", r.Object); err != nil {
		return Rule{}, err
	}
	if len(r.Actions) == 0 {
		return Rule{}, fault.New(fault.Invalid, "no actions (want some of create, read, update, delete)")
	}
	seen := make(map[string]bool, len(r.Actions))
	for _, a := range r.Actions {
		switch a {
		case ActionCreate, ActionRead, ActionUpdate, ActionDelete, ActionSchema:
		default:
			return Rule{}, fault.New(fault.Invalid, "action %q is not one of create, read, update, delete, schema", a)
		}
		if seen[a] {
			return Rule{}, fault.New(fault.Invalid, "action %q is listed twice", a)
		}
		seen[a] = true
	}
	out := Rule{Object: r.Object, Actions: slices.Clone(r.Actions), Effect: r.Effect}
	switch r.Effect {
	case "":
		out.Effect = EffectAllow
	case EffectAllow, EffectDeny:
	default:
		return Rule{}, fault.New(fault.Invalid, "effect %q is not %q or %q", r.Effect, EffectAllow, EffectDeny)
	}
	if r.Columns != nil {
		if len(r.Columns) == 0 {
			return Rule{}, fault.New(fault.Invalid, "column list is empty (omit it to grant every column)")
		}
		cols := make(map[string]bool, len(r.Columns))
		for _, c := range r.Columns {
			if err := checkName("column", c); err != nil {
				return Rule{}, err
			}
			if cols[c] {
				return Rule{}, fault.New(fault.Invalid, "column %q is listed twice", c)
			}
			cols[c] = true
		}
		out.Columns = slices.Clone(r.Columns)
	}
	return out, nil
}

// checkFilter accepts a non-empty scope filter of printable UTF-8. Its
// grammar is the REST filter grammar, which this package does not parse;
// callers (package policy) check it before it gets here.
func checkFilter(sc Scope) error {
	f := sc.Filter
	switch {
	case f == "":
		return fault.New(fault.Invalid, "scope of role %q on %q has an empty filter", sc.Role, sc.Object)
	case len(f) > maxFilterLen:
		return fault.New(fault.Invalid, "scope of role %q on %q: filter is longer than %d bytes", sc.Role, sc.Object, maxFilterLen)
	case !utf8.ValidString(f):
		return fault.New(fault.Invalid, "scope of role %q on %q: filter is not valid UTF-8", sc.Role, sc.Object)
	case strings.IndexFunc(f, unicode.IsControl) >= 0:
		return fault.New(fault.Invalid, "scope of role %q on %q: filter contains control characters", sc.Role, sc.Object)
	}
	return nil
}

// CheckPolicy applies the checks of ReplacePolicy to p without writing, so
// a dry run finds what the real run would refuse.
func CheckPolicy(p Policy) error {
	_, err := normPolicy(p)
	return err
}

// CheckName applies the store's rule for names (identities, roles,
// templates, columns, spaces): non-empty, at most 128 bytes of UTF-8, no
// control characters, no surrounding spaces. what names the value in the
// fault.Invalid message.
func CheckName(what, s string) error { return checkName(what, s) }

// CheckPattern applies the store's rule for object and lock patterns: one
// to three '/'-separated non-empty path.Match globs, type[/schema[/table]].
// what names the value in the fault.Invalid message.
func CheckPattern(what, p string) error { return checkPattern(what, p) }

// CheckAbbr applies the store's rule for org and project abbreviations: a
// lower-case letter, then lower-case letters, digits, '-' or '_', at most
// 32 bytes. what names the value in the fault.Invalid message.
func CheckAbbr(what, s string) error { return checkAbbr(what, s) }
