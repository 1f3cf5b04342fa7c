package permissions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// Subject is who asks, as the gates see a verified token: its project,
// roles (sorted), key_type, and the values row scopes may name.
type Subject struct {
	ProjectID string
	Roles     []string
	KeyType   query.Mask
	Vars      Vars
}

// Gate names the gate that refused a call.
type Gate string

// The gates, in the order Authorize runs them.
const (
	// GateHidden: the caller holds no action at all on the object, which
	// answers like a missing table.
	GateHidden Gate = "hidden"
	// GateLock: the key_type, or the key_type AND the matching locks, do
	// not allow the action (gate 1).
	GateLock Gate = "lock"
	// GateTemplate: no template allows the action, or one denies it, or
	// the operation needs every row and column and the grant is narrower
	// (gate 2).
	GateTemplate Gate = "template"
	// GateScope: the row scope cannot be instantiated for the caller, or
	// the operation cannot honour one (gate 3).
	GateScope Gate = "scope"
)

// Refused is the error of Authorize: Err is what the caller is answered
// (a 403, or the 404 of a hidden table), Gate and Detail say which gate
// refused and why, for `policy explain` and the refusal metrics. Errors
// of the fault package see through it to Err.
type Refused struct {
	Gate   Gate
	Detail string
	Err    *fault.Error
	// Mask and Columns are what the gates before the refusing one found:
	// the effective mask (once gate 1 ran) and the template's column list
	// (once gate 2 passed; nil is every column).
	Mask    query.Mask
	Columns []string
}

func (r *Refused) Error() string { return r.Err.Error() }

// Unwrap returns the answer.
func (r *Refused) Unwrap() error { return r.Err }

// Grant is what the gates leave a caller for one action on one object.
type Grant struct {
	// Mask is the key_type AND every matching lock.
	Mask query.Mask
	// Columns the caller may use, sorted; nil is every column.
	Columns []string
	// Scope is the row scope instantiated for the caller (scopes of
	// several roles OR-ed), its values as the filter grammar gives them;
	// nil is unscoped.
	Scope query.Expr
	// Roles name the caller in a refusal.
	Roles []string
}

// errHidden is the answer of a hidden table: the same as a missing one.
var errHidden = fault.New(fault.NotFound, "table not found")

// Authorize is the one decision of the three gates for one CRUD action on
// an object "type/schema/table": the object must not be hidden, gate 1
// (key_type, then key_type AND the locks), gate 2 (templates, with their
// column lists) and gate 3 (row scopes, instantiated for s). Every face
// and every road — Auto API plans, custom APIs, the mini-app tools, the
// admin API — decides through it or through the other entry points of
// this file; none decides a role or a mask itself.
func (a *Authorizer) Authorize(s Subject, object string, action query.Action) (*Grant, error) {
	g := new(Grant)
	if err := a.AuthorizeTo(s, object, action, g); err != nil {
		return nil, err
	}
	return g, nil
}

// AuthorizeTo is Authorize writing the grant into g, which the caller may
// keep where it likes (in its frame: no allocation). On a refusal g is
// left as it was.
func (a *Authorizer) AuthorizeTo(s Subject, object string, action query.Action, g *Grant) error {
	d, err := a.Decide(s.ProjectID, s.Roles, object, action)
	if err != nil {
		return err
	}
	if d.Hidden {
		return &Refused{Gate: GateHidden, Err: errHidden,
			Detail: fmt.Sprintf("no role holds any action on %s: answers 404 like a missing table", object)}
	}
	eff, err := CheckMask(s.KeyType, a.Locks(s.ProjectID), object, action, s.Roles)
	if err != nil {
		detail := fmt.Sprintf("key_type %s does not allow %s", s.KeyType, action)
		if s.KeyType.Allows(action) {
			detail = fmt.Sprintf("key_type %s AND locks = %s: %s is locked", s.KeyType, eff, action)
		}
		return &Refused{Gate: GateLock, Detail: detail, Err: fault.As(err), Mask: eff}
	}
	if !d.Allowed {
		return &Refused{Gate: GateTemplate, Err: Refusal(s.Roles), Mask: eff,
			Detail: fmt.Sprintf("no allow rule for %s on %s for roles %v, or a deny rule matched", action, object, s.Roles)}
	}
	if d.Scopes == nil {
		*g = Grant{Mask: eff, Columns: d.Columns, Roles: s.Roles}
		return nil
	}
	var or query.Or
	for _, group := range d.Scopes {
		var and query.And
		for _, f := range group {
			x, err := f.Instantiate(s.Vars)
			if err != nil {
				return &Refused{Gate: GateScope, Detail: fault.As(err).Message, Err: Refusal(s.Roles), Mask: eff, Columns: d.Columns}
			}
			and = append(and, x)
		}
		or = append(or, and)
	}
	*g = Grant{Mask: eff, Columns: d.Columns, Scope: or, Roles: s.Roles}
	return nil
}

// AuthorizeSchema decides the right to change an object's definition
// (store.ActionSchema): gate 2 only, which the built-in admin role holds
// unless a deny rule takes it away.
func (a *Authorizer) AuthorizeSchema(s Subject, object string) error {
	ok, err := a.Permits(s.ProjectID, s.Roles, object, store.ActionSchema)
	if err != nil {
		return err
	}
	if !ok {
		return &Refused{Gate: GateTemplate, Err: Refusal(s.Roles),
			Detail: fmt.Sprintf("no role of %v holds the schema action on %s", s.Roles, object)}
	}
	return nil
}

// AuthorizeAnywhere reports whether the caller could take action on some
// object of its project: its key_type allows it and a role grants it
// somewhere (listings of tools use it; every call is still authorized on
// its own object).
func (a *Authorizer) AuthorizeAnywhere(s Subject, action query.Action) bool {
	return s.KeyType.Allows(action) && a.Anywhere(s.ProjectID, s.Roles, action)
}

// IsAdmin reports whether roles hold the built-in admin role.
func IsAdmin(roles []string) bool { return slices.Contains(roles, AdminRole) }

// AuthorizeAdmin decides a call of the admin API: the admin role, and a
// key_type that allows the call's action (a read-only admin token reads
// only).
func AuthorizeAdmin(s Subject, action query.Action) error {
	if !IsAdmin(s.Roles) || !s.KeyType.Allows(action) {
		return Refusal(s.Roles)
	}
	return nil
}

// RequireAdmin refuses a caller without the admin role: "<what> needs
// role admin, got [roles]".
func RequireAdmin(roles []string, what string) error {
	if IsAdmin(roles) {
		return nil
	}
	return fault.New(fault.Forbidden, "%s needs role %s, got [%s]", what, AdminRole, strings.Join(roles, ", "))
}

// MayCall reports whether roles may call something that allows the roles
// in allowed: one of them is held, or the admin role is.
func MayCall(roles, allowed []string) bool {
	for _, r := range roles {
		if r == AdminRole || slices.Contains(allowed, r) {
			return true
		}
	}
	return false
}
