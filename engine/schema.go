package engine

import (
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// Allowed reports, without running anything, whether the principal may
// take a named action on an object ("type/schema/table"). For the CRUD
// actions (create, read, update, delete) it applies gate 1 (key_type AND
// the matching locks) and gate 2 (the templates); for store.ActionSchema,
// the right to change a table's definition, gate 2 only (the built-in
// admin role holds it unless a deny rule takes it away). Row scopes are
// not applied: whatever touches rows still goes through Execute. An
// unknown action, or a failing check, is not allowed.
func (e *Engine) Allowed(p *auth.Principal, object, action string) bool {
	var act query.Action
	switch action {
	case store.ActionCreate:
		act = query.Insert
	case store.ActionRead:
		act = query.Read
	case store.ActionUpdate:
		act = query.Update
	case store.ActionDelete:
		act = query.Delete
	case store.ActionSchema:
		ok, err := e.authz.Permits(p.ProjectID, p.Roles, object, action)
		return err == nil && ok
	default:
		return false
	}
	if !p.KeyType.Allows(act) || !permissions.EffectiveMask(p.KeyType, e.authz.Locks(p.ProjectID), object).Allows(act) {
		return false
	}
	d, err := e.authz.Decide(p.ProjectID, p.Roles, object, act)
	return err == nil && d.Allowed
}

// Refresh drops the cached table list of one database of the principal's
// project, so the next call looks at the database again instead of
// waiting for the refresh interval: the mini-app schema_* tools call it
// after they add, rewrite or remove a table's schema.yaml.
func (e *Engine) Refresh(p *auth.Principal, typ, schema string) {
	s := e.cat.get(p.ProjectID, typ, schema)
	if s == nil {
		return
	}
	s.mu.Lock()
	s.tables, s.loadedAt, s.tried = nil, time.Time{}, time.Time{}
	s.mu.Unlock()
}
