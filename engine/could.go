package engine

import (
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
)

// Need is what a tool asks of its caller: the decision whether a listing
// offers the tool (Could).
type Need struct {
	// Action is the row action the tool runs (0: none of its own; with
	// Type, any action there will do).
	Action query.Action
	// Type narrows the need to the project's registered databases of that
	// type ("mi"); "" is any table of the project.
	Type string
	// Admin: the tool needs the admin role (it writes files on the server).
	Admin bool
	// Schema: the tool changes table definitions, which needs the schema
	// action (permissions.Authorizer.Permits).
	Schema bool
}

// Could reports whether the principal could succeed with a tool that needs
// n: its key_type allows the action, it holds the admin role when Admin is
// set, and its roles are granted the action (and the schema action when
// Schema is set) on at least one object of the project, or with Type of
// one of its registered databases of that type. Locks, deny rules and row
// scopes are left to the call, which still goes through the pipeline.
func (e *Engine) Could(p *auth.Principal, n Need) bool {
	if n.Action != 0 && permissions.CheckKeyType(p.KeyType, []query.Action{n.Action}, p.Roles) != nil {
		return false
	}
	if n.Admin && !permissions.IsAdmin(p.Roles) {
		return false
	}
	if n.Type == "" {
		return n.Action == 0 || e.CanAnywhere(p, n.Action)
	}
	mask := p.KeyType & query.MaskAll
	if n.Action != 0 {
		mask = n.Action.Bit()
	}
	for _, s := range e.cat.list(p.ProjectID) {
		if s.db.Type != n.Type {
			continue
		}
		under := n.Type + "/" + s.db.Schema
		if mask != 0 && e.authz.AnywhereUnder(p.ProjectID, p.Roles, mask, false, under) &&
			(!n.Schema || e.authz.AnywhereUnder(p.ProjectID, p.Roles, 0, true, under)) {
			return true
		}
	}
	return false
}
