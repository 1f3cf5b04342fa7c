package permissions

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/persist"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

//go:embed model.conf
var modelText string

// AdminRole is the built-in role that every project grants all actions on
// every object, unscoped, with every column. Locks and deny rules still
// apply to it.
const AdminRole = "admin"

const adminTemplate = "tpl:*builtin-admin"

var allActions = [...]query.Action{query.Insert, query.Read, query.Update, query.Delete}

// Decision is what gates 2 and 3 grant a caller for one action on one
// object. Columns nil grants every column. Scopes nil means unscoped;
// otherwise a row must satisfy, for at least one entry, every filter of
// that entry (roles OR-ed, a role's filters AND-ed).
type Decision struct {
	// Hidden: the caller holds no action at all on the object.
	Hidden bool
	// Allowed: the template gate lets the action through.
	Allowed bool
	Columns []string
	Scopes  [][]*ScopeFilter
}

// Authorizer answers gates 2 and 3 from the policies of every project. It
// is rebuilt by Load whenever the control-plane store's policies change;
// decisions are cached until then.
type Authorizer struct {
	mu    sync.RWMutex
	st    *state
	cache map[string]*Decision
}

type state struct {
	enf      *casbin.Enforcer
	projects map[string]*projectPolicy
}

type projectPolicy struct {
	rules  []roleRule
	scopes map[string][]scopeEntry // by role
	locks  []Lock
}

type roleRule struct {
	role    string
	pattern string
	actions query.Mask
	columns []string
	deny    bool
	schema  bool // the rule lists store.ActionSchema
}

type scopeEntry struct {
	pattern string
	filter  *ScopeFilter
}

// NewAuthorizer builds an Authorizer with no policies: only the built-in
// admin role has access.
func NewAuthorizer() (*Authorizer, error) {
	a := &Authorizer{}
	if err := a.Load(nil); err != nil {
		return nil, err
	}
	return a, nil
}

// Load replaces every project's policy. It validates everything first; on
// error the previous policy stays in force.
func (a *Authorizer) Load(policies map[string]store.Policy) error {
	st := &state{projects: map[string]*projectPolicy{}}
	for pid, p := range policies {
		pp, err := compile(p)
		if err != nil {
			return fmt.Errorf("project %s: %w", pid, err)
		}
		st.projects[pid] = pp
	}
	m, err := model.NewModelFromString(modelText)
	if err != nil {
		return fmt.Errorf("permissions: casbin model: %w", err)
	}
	enf, err := casbin.NewEnforcer(m, &adapter{policies: policies})
	if err != nil {
		return fmt.Errorf("permissions: casbin enforcer: %w", err)
	}
	enf.EnableAutoSave(false)
	enf.AddFunction("objMatch", func(args ...any) (any, error) {
		obj, _ := args[0].(string)
		pat, _ := args[1].(string)
		return Match(pat, obj), nil
	})
	rm := enf.GetRoleManager()
	enf.AddFunction("anyRole", func(args ...any) (any, error) {
		roles, _ := args[0].(string)
		tpl, _ := args[1].(string)
		dom, _ := args[2].(string)
		for _, r := range strings.Split(roles, ",") {
			if r == "" {
				continue
			}
			if r == AdminRole && tpl == adminTemplate {
				return true, nil
			}
			if ok, _ := rm.HasLink(r, tpl, dom); ok {
				return true, nil
			}
		}
		return false, nil
	})
	st.enf = enf
	a.mu.Lock()
	a.st, a.cache = st, map[string]*Decision{}
	a.mu.Unlock()
	return nil
}

func compile(p store.Policy) (*projectPolicy, error) {
	pp := &projectPolicy{scopes: map[string][]scopeEntry{}}
	tpls := map[string]store.Template{}
	for _, t := range p.Templates {
		tpls[t.Name] = t
	}
	for _, b := range p.Bindings {
		for _, name := range b.Templates {
			t, ok := tpls[name]
			if !ok {
				return nil, fault.New(fault.Invalid, "binding of role %q names unknown template %q", b.Role, name)
			}
			for _, r := range t.Rules {
				if err := ValidPattern(r.Object); err != nil {
					return nil, err
				}
				var m query.Mask
				schema := false
				for _, act := range r.Actions {
					bit, err := actionBit(act)
					if err != nil {
						return nil, err
					}
					m |= bit
					schema = schema || act == store.ActionSchema
				}
				pp.rules = append(pp.rules, roleRule{role: b.Role, pattern: r.Object, actions: m, columns: r.Columns, deny: r.Effect == store.EffectDeny, schema: schema})
			}
		}
	}
	for _, s := range p.Scopes {
		if err := ValidPattern(s.Object); err != nil {
			return nil, err
		}
		f, err := ParseScope(s.Filter)
		if err != nil {
			return nil, err
		}
		pp.scopes[s.Role] = append(pp.scopes[s.Role], scopeEntry{pattern: s.Object, filter: f})
	}
	for _, l := range p.Locks {
		m, err := query.ParseMask(l.Mask)
		if err != nil {
			return nil, err
		}
		pp.locks = append(pp.locks, Lock{Pattern: l.Pattern, Mask: m})
	}
	return pp, nil
}

func actionBit(a string) (query.Mask, error) {
	switch a {
	case "create":
		return query.MaskCreate, nil
	case "read":
		return query.MaskRead, nil
	case "update":
		return query.MaskUpdate, nil
	case "delete":
		return query.MaskDelete, nil
	case store.ActionSchema:
		// No row access: only Permits answers for it.
		return 0, nil
	}
	return 0, fault.New(fault.Invalid, "unknown action %q (create, read, update, delete, schema)", a)
}

// Permits runs the template gate (gate 2) alone for a named action, one of
// the CRUD actions or store.ActionSchema, which is what the mini-app
// schema_* tools check: the built-in admin role holds every action, and a
// matching deny rule overrides every allow. roles must be sorted. Locks
// and row scopes are not considered here.
func (a *Authorizer) Permits(projectID string, roles []string, object, action string) (bool, error) {
	a.mu.RLock()
	st := a.st
	a.mu.RUnlock()
	if action == store.ActionSchema && contains(roles, AdminRole) {
		// The built-in admin template lists the CRUD actions only; admin
		// holds schema too, unless a deny rule takes it away.
		return !st.deniesSchema(projectID, roles, object), nil
	}
	ok, err := st.enf.Enforce(strings.Join(roles, ","), projectID, object, action)
	if err != nil {
		return false, fault.Wrap(fault.Internal, err, "permission check failed")
	}
	return ok, nil
}

// deniesSchema reports whether a deny rule of one of the roles takes the
// schema action on object.
func (st *state) deniesSchema(projectID string, roles []string, object string) bool {
	pp := st.projects[projectID]
	if pp == nil {
		return false
	}
	for _, r := range pp.rules {
		if r.deny && r.schema && contains(roles, r.role) && Match(r.pattern, object) {
			return true
		}
	}
	return false
}

// Locks returns the locks of a project.
func (a *Authorizer) Locks(projectID string) []Lock {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if pp := a.st.projects[projectID]; pp != nil {
		return pp.locks
	}
	return nil
}

// Decide runs gates 2 and 3 (without instantiating scopes) for roles acting
// on an object. roles must be sorted; results are cached until Load.
func (a *Authorizer) Decide(projectID string, roles []string, object string, action query.Action) (*Decision, error) {
	// The key is written into room on the stack and looked up without
	// making it a string: a decision found costs no allocation.
	var room [256]byte
	key := decisionKey(room[:0], projectID, roles, object, action)
	a.mu.RLock()
	d, ok := a.cache[string(key)]
	st := a.st
	a.mu.RUnlock()
	if ok {
		return d, nil
	}
	d, err := st.decide(projectID, roles, strings.Join(roles, ","), object, action)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if a.st == st {
		if len(a.cache) > 100000 {
			a.cache = map[string]*Decision{}
		}
		a.cache[string(key)] = d
	}
	a.mu.Unlock()
	return d, nil
}

// decisionKey appends Decide's cache key to dst: the project, the roles
// joined by commas, the object and the action, each after a NUL byte but
// the first.
func decisionKey(dst []byte, projectID string, roles []string, object string, action query.Action) []byte {
	dst = append(dst, projectID...)
	dst = append(dst, 0)
	for i, r := range roles {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, r...)
	}
	dst = append(dst, 0)
	dst = append(dst, object...)
	dst = append(dst, 0)
	return append(dst, action.String()...)
}

func (st *state) decide(projectID string, roles []string, joined, object string, action query.Action) (*Decision, error) {
	d := &Decision{}
	any := false
	for _, act := range allActions {
		ok, err := st.enf.Enforce(joined, projectID, object, act.String())
		if err != nil {
			return nil, fault.Wrap(fault.Internal, err, "permission check failed")
		}
		if ok {
			any = true
			if act == action {
				d.Allowed = true
			}
		}
	}
	d.Hidden = !any
	if !d.Allowed {
		return d, nil
	}
	pp := st.projects[projectID]
	isAdmin := false
	for _, r := range roles {
		if r == AdminRole {
			isAdmin = true
		}
	}
	if isAdmin || pp == nil {
		return d, nil // built-in admin: every column, unscoped
	}

	// Columns: united over the allow rules that grant the action; a rule
	// without a list grants every column.
	bit := action.Bit()
	granting := map[string]bool{}
	var cols []string
	all := false
	for _, r := range pp.rules {
		if r.deny || r.actions&bit == 0 || !Match(r.pattern, object) || !contains(roles, r.role) {
			continue
		}
		granting[r.role] = true
		if r.columns == nil {
			all = true
		} else {
			cols = append(cols, r.columns...)
		}
	}
	if !all {
		d.Columns = sortedUnique(cols)
	}

	// Scopes: a granting role without a matching scope is unscoped and wins.
	for _, r := range roles {
		if !granting[r] {
			continue
		}
		var fs []*ScopeFilter
		for _, s := range pp.scopes[r] {
			if Match(s.pattern, object) {
				fs = append(fs, s.filter)
			}
		}
		if len(fs) == 0 {
			d.Scopes = nil
			return d, nil
		}
		d.Scopes = append(d.Scopes, fs)
	}
	return d, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// adapter feeds casbin the store's policies. Policy is changed only through
// the store (minimal apply, the admin API), so the write half of
// persist.Adapter reports that.
type adapter struct {
	policies map[string]store.Policy
}

func (ad *adapter) LoadPolicy(m model.Model) error {
	for _, act := range allActions {
		if err := persist.LoadPolicyArray([]string{"p", adminTemplate, "*", "*", act.String(), store.EffectAllow}, m); err != nil {
			return err
		}
	}
	for pid, p := range ad.policies {
		for _, t := range p.Templates {
			for _, r := range t.Rules {
				eft := store.EffectAllow
				if r.Effect == store.EffectDeny {
					eft = store.EffectDeny
				}
				for _, act := range r.Actions {
					if err := persist.LoadPolicyArray([]string{"p", "tpl:" + t.Name, pid, r.Object, act, eft}, m); err != nil {
						return err
					}
				}
			}
		}
		for _, b := range p.Bindings {
			for _, name := range b.Templates {
				if err := persist.LoadPolicyArray([]string{"g", b.Role, "tpl:" + name, pid}, m); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

var errReadOnly = fault.New(fault.Unsupported, "permission policy is changed through the control-plane store (minimal apply), not through casbin")

func (ad *adapter) SavePolicy(model.Model) error                              { return errReadOnly }
func (ad *adapter) AddPolicy(string, string, []string) error                  { return errReadOnly }
func (ad *adapter) RemovePolicy(string, string, []string) error               { return errReadOnly }
func (ad *adapter) RemoveFilteredPolicy(string, string, int, ...string) error { return errReadOnly }

var _ persist.Adapter = (*adapter)(nil)

// Anywhere reports whether the roles are granted an action on at least one
// object of the project (deny rules aside): the MCP face lists only the
// tools a caller could ever use.
func (a *Authorizer) Anywhere(projectID string, roles []string, action query.Action) bool {
	return a.AnywhereUnder(projectID, roles, action.Bit(), false, "")
}
