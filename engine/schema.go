package engine

import (
	"context"
	"errors"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
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
	_, err := e.gates(p, object, action, false)
	return err == nil
}

// AuthorizeRaw runs the gates for an operation on one table that does not
// go through Execute: the mini-app schema_batch, whose query and replace
// ops run SQL on the table's file and whose schema ops rewrite its
// definition. need lists every action the operation may exercise, each a
// CRUD action (gate 1, key_type AND the matching locks, then gate 2, the
// templates) or store.ActionSchema (gate 2). With unbounded, the operation
// runs SQL that no row scope or column list can narrow, so a CRUD action
// granted under a row scope or for some columns only is refused too.
//
// A refusal answers the pipeline's 403 (permissions.Refusal, or
// LockedRefusal when a lock forbids the action), is counted like
// Execute's, and is audited on object with action "write" (as a custom
// API's write). When every gate passes, the caller runs the operation and
// reports it through done (rows touched, outcome), which audits it the
// same way. The table need not exist yet: the gates are the object's.
func (e *Engine) AuthorizeRaw(ctx context.Context, p *auth.Principal, object string, unbounded bool, need ...string) (done func(rows int64, err error), err error) {
	start := time.Now()
	if p == nil {
		return nil, fault.New(fault.Unauthenticated, "missing access token")
	}
	for _, a := range need {
		gate, err := e.gates(p, object, a, unbounded)
		if err != nil {
			if gate != "" {
				e.refused(ctx, nil, gate)
			}
			e.auditOp(ctx, p, rawAction, object, 0, err, start)
			return nil, err
		}
	}
	return func(rows int64, err error) { e.auditOp(ctx, p, rawAction, object, rows, err, start) }, nil
}

// rawAction is the audit log's action of an operation AuthorizeRaw let
// through: like a custom API's writes, it is no single CRUD action.
const rawAction = "write"

// gates decides one named action on an object through the permission
// gates (permissions.Authorize; store.ActionSchema through
// AuthorizeSchema). With unbounded, the operation runs SQL that no row
// scope or column list can narrow, so a grant limited by either is refused
// too. On a refusal it names the gate that refused.
func (e *Engine) gates(p *auth.Principal, object, action string, unbounded bool) (RefusalGate, error) {
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
		if err := e.authz.AuthorizeSchema(p.Subject(), object); err != nil {
			return refusedGate(err), err
		}
		return "", nil
	default:
		return "", fault.New(fault.Internal, "unknown action %q", action)
	}
	g, err := e.authz.Authorize(p.Subject(), object, act)
	if err != nil {
		if gate := refusedGate(err); gate == GateHidden {
			// Not hidden for an operation on the object itself: a refusal.
			return GateTemplate, permissions.Refusal(p.Roles)
		} else if gate != "" {
			return gate, err
		}
		return "", err
	}
	if unbounded && g.Columns != nil {
		return GateTemplate, permissions.Refusal(p.Roles)
	}
	if unbounded && g.Scope != nil {
		return GateScope, permissions.Refusal(p.Roles)
	}
	return "", nil
}

// refusedGate is the gate a permissions.Refused names, "" for another
// error.
func refusedGate(err error) RefusalGate {
	var ref *permissions.Refused
	if errors.As(err, &ref) {
		return ref.Gate
	}
	return ""
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
