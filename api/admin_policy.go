package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/policy"
	"github.com/littlebitlabs/minimal/store"
)

// Templates, bindings, locks and scopes are the four sections of a
// project's policy. Each admin call reads the policy (store.Policy),
// changes one item and writes the whole policy back
// (store.ReplacePolicy), so it is checked exactly as `minimal apply`
// checks it and reaches every server through the change counter. Scope
// filters are checked first with policy.CheckFilter, and parsed as the
// engine will parse them.

// ruleJSON is one rule of a template; a rule without columns grants every
// column, and effect defaults to allow.
type ruleJSON struct {
	Object  string   `json:"object"`
	Actions []string `json:"actions"`
	Columns []string `json:"columns,omitempty"`
	Effect  string   `json:"effect,omitempty"`
}

// templateJSON is a permission template as the admin API shows it.
type templateJSON struct {
	ID    string     `json:"id"`
	Name  string     `json:"name"`
	Rules []ruleJSON `json:"rules"`
}

func templateOut(t store.Template) templateJSON {
	out := templateJSON{ID: t.ID, Name: t.Name, Rules: make([]ruleJSON, len(t.Rules))}
	for i, r := range t.Rules {
		out.Rules[i] = ruleJSON{Object: r.Object, Actions: r.Actions, Columns: r.Columns, Effect: r.Effect}
	}
	return out
}

// templateBody creates a template or replaces its rules.
type templateBody struct {
	Name  *string     `json:"name"`
	Rules *[]ruleJSON `json:"rules"`
}

func (b templateBody) rules() []store.Rule {
	if b.Rules == nil {
		return []store.Rule{}
	}
	out := make([]store.Rule, len(*b.Rules))
	for i, r := range *b.Rules {
		out[i] = store.Rule{Object: r.Object, Actions: r.Actions, Columns: r.Columns, Effect: r.Effect}
	}
	return out
}

// bindingJSON gives a role the rules of templates.
type bindingJSON struct {
	Role      string   `json:"role"`
	Templates []string `json:"templates"`
}

func bindingOut(b store.Binding) bindingJSON { return bindingJSON(b) }

type bindingBody struct {
	Role      *string   `json:"role"`
	Templates *[]string `json:"templates"`
}

// lockJSON is an operator's CRUD mask on an object pattern.
type lockJSON struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Mask   string `json:"mask"`
}

type lockBody struct {
	Object *string `json:"object"`
	Mask   *string `json:"mask"`
}

// scopeJSON restricts a role on objects matching a pattern to the rows a
// filter selects.
type scopeJSON struct {
	Role   string `json:"role"`
	Object string `json:"object"`
	Filter string `json:"filter"`
}

func scopeOut(s store.Scope) scopeJSON { return scopeJSON(s) }

type scopeBody struct {
	Role   *string `json:"role"`
	Object *string `json:"object"`
	Filter *string `json:"filter"`
}

// editPolicy applies edit to the policy of a project and writes it back,
// returning the policy as stored. Edits by this process are serialized;
// like two `minimal apply` runs, two servers editing one project's policy
// at the same instant leave the last write.
func (a *admin) editPolicy(ctx context.Context, projectID string, edit func(*store.Policy) error) (store.Policy, error) {
	a.policyMu.Lock()
	defer a.policyMu.Unlock()
	pol, err := a.s.st.Policy(ctx, projectID)
	if err != nil {
		return store.Policy{}, err
	}
	if err := edit(&pol); err != nil {
		return store.Policy{}, err
	}
	if err := a.s.st.ReplacePolicy(ctx, projectID, pol); err != nil {
		return store.Policy{}, err
	}
	return a.s.st.Policy(ctx, projectID)
}

// answerItem writes items[i] as read back after a write, or a 409 when
// another server removed it in between.
func answerItem[T, J any](w http.ResponseWriter, r *http.Request, status int, items []T, i int, out func(T) J) {
	if i < 0 {
		writeError(w, r, fault.New(fault.Conflict, "the item was changed concurrently: read it again"))
		return
	}
	writeJSON(w, status, out(items[i]))
}

// policyOf resolves the project of a request and reads its policy.
func (a *admin) policyOf(r *http.Request) (store.Project, store.Policy, error) {
	_, p, err := a.project(r)
	if err != nil {
		return store.Project{}, store.Policy{}, err
	}
	pol, err := a.s.st.Policy(r.Context(), p.ID)
	return p, pol, err
}

// sameKey refuses a body field that names another item than the path.
func sameKey(field string, body *string, path string) error {
	if body != nil && *body != path {
		return fault.New(fault.Invalid, "field %q is %q but the path names %q", field, *body, path)
	}
	return nil
}

func findTemplate(pol store.Policy, name string) int {
	return slices.IndexFunc(pol.Templates, func(t store.Template) bool { return t.Name == name })
}

func (a *admin) listTemplates(w http.ResponseWriter, r *http.Request) {
	_, pol, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]templateJSON, len(pol.Templates))
	for i, t := range pol.Templates {
		out[i] = templateOut(t)
	}
	writeList(w, out)
}

func (a *admin) createTemplate(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b templateBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Name == nil {
		writeError(w, r, required("name", ""))
		return
	}
	name := *b.Name
	pol, err := a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		if findTemplate(*pol, name) >= 0 {
			return fault.New(fault.Conflict, "template %q already exists", name)
		}
		pol.Templates = append(pol.Templates, store.Template{Name: name, Rules: b.rules()})
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusCreated, pol.Templates, findTemplate(pol, name), templateOut)
}

func (a *admin) getTemplate(w http.ResponseWriter, r *http.Request) {
	_, pol, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	name := pathParam(r, "template")
	i := findTemplate(pol, name)
	if i < 0 {
		writeError(w, r, fault.New(fault.NotFound, "template %q not found", name))
		return
	}
	writeJSON(w, http.StatusOK, templateOut(pol.Templates[i]))
}

// putTemplate replaces the rules of a template.
func (a *admin) putTemplate(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	name := pathParam(r, "template")
	var b templateBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if err := sameKey("name", b.Name, name); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Rules == nil {
		writeError(w, r, required("rules", ""))
		return
	}
	pol, err := a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		i := findTemplate(*pol, name)
		if i < 0 {
			return fault.New(fault.NotFound, "template %q not found", name)
		}
		pol.Templates[i].Rules = b.rules()
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusOK, pol.Templates, findTemplate(pol, name), templateOut)
}

// deleteTemplate removes a template no binding names.
func (a *admin) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	name := pathParam(r, "template")
	_, err = a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		i := findTemplate(*pol, name)
		if i < 0 {
			return fault.New(fault.NotFound, "template %q not found", name)
		}
		var roles []string
		for _, b := range pol.Bindings {
			if slices.Contains(b.Templates, name) {
				roles = append(roles, b.Role)
			}
		}
		if len(roles) > 0 {
			return fault.New(fault.Conflict, "template %q is bound to roles [%s]: change those bindings first", name, strings.Join(roles, ", "))
		}
		pol.Templates = slices.Delete(pol.Templates, i, i+1)
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}

func findBinding(pol store.Policy, role string) int {
	return slices.IndexFunc(pol.Bindings, func(b store.Binding) bool { return b.Role == role })
}

func (a *admin) listBindings(w http.ResponseWriter, r *http.Request) {
	_, pol, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]bindingJSON, len(pol.Bindings))
	for i, b := range pol.Bindings {
		out[i] = bindingOut(b)
	}
	writeList(w, out)
}

func (a *admin) createBinding(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b bindingBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Role == nil {
		writeError(w, r, required("role", ""))
		return
	}
	if b.Templates == nil {
		writeError(w, r, required("templates", ""))
		return
	}
	role := *b.Role
	pol, err := a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		if findBinding(*pol, role) >= 0 {
			return fault.New(fault.Conflict, "role %q is already bound: change its binding instead", role)
		}
		pol.Bindings = append(pol.Bindings, store.Binding{Role: role, Templates: *b.Templates})
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusCreated, pol.Bindings, findBinding(pol, role), bindingOut)
}

func (a *admin) getBinding(w http.ResponseWriter, r *http.Request) {
	_, pol, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	role := pathParam(r, "role")
	i := findBinding(pol, role)
	if i < 0 {
		writeError(w, r, fault.New(fault.NotFound, "role %q has no binding", role))
		return
	}
	writeJSON(w, http.StatusOK, bindingOut(pol.Bindings[i]))
}

// putBinding replaces the templates bound to a role.
func (a *admin) putBinding(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	role := pathParam(r, "role")
	var b bindingBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if err := sameKey("role", b.Role, role); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Templates == nil {
		writeError(w, r, required("templates", ""))
		return
	}
	pol, err := a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		i := findBinding(*pol, role)
		if i < 0 {
			return fault.New(fault.NotFound, "role %q has no binding", role)
		}
		pol.Bindings[i].Templates = *b.Templates
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusOK, pol.Bindings, findBinding(pol, role), bindingOut)
}

func (a *admin) deleteBinding(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	role := pathParam(r, "role")
	_, err = a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		i := findBinding(*pol, role)
		if i < 0 {
			return fault.New(fault.NotFound, "role %q has no binding", role)
		}
		pol.Bindings = slices.Delete(pol.Bindings, i, i+1)
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}

func findLock(pol store.Policy, object string) int {
	return slices.IndexFunc(pol.Locks, func(l store.Lock) bool { return l.Pattern == object })
}

func lockOut(l store.Lock) lockJSON { return lockJSON{ID: l.ID, Object: l.Pattern, Mask: l.Mask} }

func (a *admin) listLocks(w http.ResponseWriter, r *http.Request) {
	_, pol, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]lockJSON, len(pol.Locks))
	for i, l := range pol.Locks {
		out[i] = lockOut(l)
	}
	writeList(w, out)
}

// createLock adds a lock; the engine applies it within its poll interval.
func (a *admin) createLock(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b lockBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Object == nil {
		writeError(w, r, required("object", ""))
		return
	}
	if b.Mask == nil {
		writeError(w, r, required("mask", ""))
		return
	}
	object := *b.Object
	pol, err := a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		if findLock(*pol, object) >= 0 {
			return fault.New(fault.Conflict, "a lock on %q already exists: change its mask instead", object)
		}
		pol.Locks = append(pol.Locks, store.Lock{Pattern: object, Mask: *b.Mask})
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusCreated, pol.Locks, findLock(pol, object), lockOut)
}

func (a *admin) getLock(w http.ResponseWriter, r *http.Request) {
	_, pol, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	object := pathParam(r, "object")
	i := findLock(pol, object)
	if i < 0 {
		writeError(w, r, fault.New(fault.NotFound, "no lock on %q", object))
		return
	}
	writeJSON(w, http.StatusOK, lockOut(pol.Locks[i]))
}

// putLock changes the mask of a lock.
func (a *admin) putLock(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	object := pathParam(r, "object")
	var b lockBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if err := sameKey("object", b.Object, object); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Mask == nil {
		writeError(w, r, required("mask", ""))
		return
	}
	pol, err := a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		i := findLock(*pol, object)
		if i < 0 {
			return fault.New(fault.NotFound, "no lock on %q", object)
		}
		pol.Locks[i].Mask = *b.Mask
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusOK, pol.Locks, findLock(pol, object), lockOut)
}

func (a *admin) deleteLock(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	object := pathParam(r, "object")
	_, err = a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		i := findLock(*pol, object)
		if i < 0 {
			return fault.New(fault.NotFound, "no lock on %q", object)
		}
		pol.Locks = slices.Delete(pol.Locks, i, i+1)
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}

func findScope(pol store.Policy, role, object string) int {
	return slices.IndexFunc(pol.Scopes, func(s store.Scope) bool { return s.Role == role && s.Object == object })
}

// checkScopeFilter checks a filter as `minimal apply` does
// (policy.CheckFilter) and as the engine will compile it.
func checkScopeFilter(filter string) error {
	if err := policy.CheckFilter(filter); err != nil {
		return fieldErr("filter", err)
	}
	if _, err := permissions.ParseScope(filter); err != nil {
		return fieldErr("filter", err)
	}
	return nil
}

func (a *admin) listScopes(w http.ResponseWriter, r *http.Request) {
	_, pol, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]scopeJSON, len(pol.Scopes))
	for i, s := range pol.Scopes {
		out[i] = scopeOut(s)
	}
	writeList(w, out)
}

func (a *admin) createScope(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b scopeBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"role", b.Role}, {"object", b.Object}, {"filter", b.Filter}} {
		if f.v == nil {
			writeError(w, r, required(f.name, ""))
			return
		}
	}
	if err := checkScopeFilter(*b.Filter); err != nil {
		writeError(w, r, err)
		return
	}
	sc := store.Scope{Role: *b.Role, Object: *b.Object, Filter: *b.Filter}
	pol, err := a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		if findScope(*pol, sc.Role, sc.Object) >= 0 {
			return fault.New(fault.Conflict, "role %q already has a scope on %q: change its filter instead", sc.Role, sc.Object)
		}
		pol.Scopes = append(pol.Scopes, sc)
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusCreated, pol.Scopes, findScope(pol, sc.Role, sc.Object), scopeOut)
}

func (a *admin) getScope(w http.ResponseWriter, r *http.Request) {
	_, pol, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	role, object := pathParam(r, "role"), pathParam(r, "object")
	i := findScope(pol, role, object)
	if i < 0 {
		writeError(w, r, fault.New(fault.NotFound, "role %q has no scope on %q", role, object))
		return
	}
	writeJSON(w, http.StatusOK, scopeOut(pol.Scopes[i]))
}

// putScope replaces the filter of a scope.
func (a *admin) putScope(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	role, object := pathParam(r, "role"), pathParam(r, "object")
	var b scopeBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if err := sameKey("role", b.Role, role); err != nil {
		writeError(w, r, err)
		return
	}
	if err := sameKey("object", b.Object, object); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Filter == nil {
		writeError(w, r, required("filter", ""))
		return
	}
	if err := checkScopeFilter(*b.Filter); err != nil {
		writeError(w, r, err)
		return
	}
	pol, err := a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		i := findScope(*pol, role, object)
		if i < 0 {
			return fault.New(fault.NotFound, "role %q has no scope on %q", role, object)
		}
		pol.Scopes[i].Filter = *b.Filter
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusOK, pol.Scopes, findScope(pol, role, object), scopeOut)
}

func (a *admin) deleteScope(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	role, object := pathParam(r, "role"), pathParam(r, "object")
	_, err = a.editPolicy(r.Context(), p.ID, func(pol *store.Policy) error {
		i := findScope(*pol, role, object)
		if i < 0 {
			return fault.New(fault.NotFound, "role %q has no scope on %q", role, object)
		}
		pol.Scopes = slices.Delete(pol.Scopes, i, i+1)
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}
