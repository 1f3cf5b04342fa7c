package engine

import (
	"errors"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

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
	s.forget()
}
