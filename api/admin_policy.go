package api

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/policy"
	"github.com/littlebitlabs/minimal/store"
)

// Templates, bindings, locks and scopes are the four sections of a
// project's policy. Each admin call reads the policy and its version
// (store.VersionedPolicy), changes one item and writes the whole policy
// back at that version (store.ReplacePolicyAt), so it is checked exactly
// as `minimal apply` checks it, reaches every server through the change
// counter, and never overwrites an edit made in between by any server.
// Answers carry the version (field "version", header ETag); a write naming
// one (If-Match, or "version" in the body) is refused with 409 once the
// policy has moved past it; a write naming none is retried on a fresh read
// until it applies. Scope filters are checked first with
// policy.CheckFilter, and parsed as the engine will parse them.

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
	ID      string     `json:"id"`
	Name    string     `json:"name"`
	Rules   []ruleJSON `json:"rules"`
	Version int64      `json:"version"`
}

func templateOut(t store.Template, version int64) templateJSON {
	out := templateJSON{ID: t.ID, Name: t.Name, Rules: make([]ruleJSON, len(t.Rules)), Version: version}
	for i, r := range t.Rules {
		out.Rules[i] = ruleJSON{Object: r.Object, Actions: r.Actions, Columns: r.Columns, Effect: r.Effect}
	}
	return out
}

// templateBody creates a template or replaces its rules.
type templateBody struct {
	Name    *string     `json:"name"`
	Rules   *[]ruleJSON `json:"rules"`
	Version *int64      `json:"version"`
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
	Version   int64    `json:"version"`
}

func bindingOut(b store.Binding, version int64) bindingJSON {
	return bindingJSON{Role: b.Role, Templates: b.Templates, Version: version}
}

type bindingBody struct {
	Role      *string   `json:"role"`
	Templates *[]string `json:"templates"`
	Version   *int64    `json:"version"`
}

// lockJSON is an operator's CRUD mask on an object pattern.
type lockJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Mask    string `json:"mask"`
	Version int64  `json:"version"`
}

type lockBody struct {
	Object  *string `json:"object"`
	Mask    *string `json:"mask"`
	Version *int64  `json:"version"`
}

// scopeJSON restricts a role on objects matching a pattern to the rows a
// filter selects.
type scopeJSON struct {
	Role    string `json:"role"`
	Object  string `json:"object"`
	Filter  string `json:"filter"`
	Version int64  `json:"version"`
}

func scopeOut(s store.Scope, version int64) scopeJSON {
	return scopeJSON{Role: s.Role, Object: s.Object, Filter: s.Filter, Version: version}
}

type scopeBody struct {
	Role    *string `json:"role"`
	Object  *string `json:"object"`
	Filter  *string `json:"filter"`
	Version *int64  `json:"version"`
}

// maxEditAttempts bounds how often a write that names no version is
// retried on a fresh read when another write got in between.
const maxEditAttempts = 20

// editPolicy applies edit to the policy of a project and writes it back at
// the version it read (a compare-and-swap in the store's transaction),
// returning the policy and version as stored after it. want > 0 is the
// version the caller read: a policy at another version is a 409 and is
// not edited. With want 0 a write that lost the race is done again on a
// fresh read (up to maxEditAttempts times), so no edit of another server
// is ever overwritten.
func (a *admin) editPolicy(ctx context.Context, projectID string, want int64, edit func(*store.Policy) error) (store.Policy, int64, error) {
	for attempt := 1; ; attempt++ {
		pol, v, err := a.s.st.VersionedPolicy(ctx, projectID)
		if err != nil {
			return store.Policy{}, 0, err
		}
		if want > 0 && v != want {
			return store.Policy{}, 0, store.StaleVersion(want, v)
		}
		if err := edit(&pol); err != nil {
			return store.Policy{}, 0, err
		}
		_, err = a.s.st.ReplacePolicyAt(ctx, projectID, pol, v)
		if errors.Is(err, store.ErrStaleVersion) && want == 0 && attempt < maxEditAttempts {
			// Another write got in: back off a little, at random, so
			// that writers of several servers do not meet again.
			select {
			case <-time.After(time.Duration(rand.Int64N(int64(attempt) * int64(5*time.Millisecond)))):
			case <-ctx.Done():
				return store.Policy{}, 0, err
			}
			continue
		}
		if err != nil {
			return store.Policy{}, 0, err
		}
		return a.s.st.VersionedPolicy(ctx, projectID)
	}
}

// wantVersion returns the policy version a write names, 0 for none: the
// If-Match header (the ETag of an answer, "7"; W/"7" and 7 are accepted
// too; * names none) or the body's "version" field. Both given must agree.
func wantVersion(r *http.Request, body *int64) (int64, error) {
	var header int64
	if vals := r.Header.Values("If-Match"); len(vals) > 0 {
		tags := strings.Split(strings.Join(vals, ","), ",")
		if len(tags) > 1 {
			return 0, fault.New(fault.Invalid, "If-Match names %d versions: send the one ETag you read", len(tags))
		}
		tag := strings.TrimSpace(tags[0])
		if tag != "*" {
			n, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(tag, "W/"), `"`), 10, 64)
			if err != nil || n <= 0 {
				return 0, fault.New(fault.Invalid, "If-Match %q is not a version of this policy: send the ETag of a GET, e.g. \"7\"", tag)
			}
			header = n
		}
	}
	if body == nil {
		return header, nil
	}
	if *body <= 0 {
		return 0, fault.New(fault.Invalid, "field \"version\" must be a version of this policy (1 or more), got %d", *body)
	}
	if header != 0 && header != *body {
		return 0, fault.New(fault.Invalid, "If-Match names version %d but field \"version\" is %d: send one", header, *body)
	}
	return *body, nil
}

// answerItem writes items[i] as read back after a write, with the
// policy's version in its ETag, or a 409 when another server removed the
// item in between.
func answerItem[T, J any](w http.ResponseWriter, r *http.Request, status int, items []T, i int, version int64, out func(T, int64) J) {
	if i < 0 {
		writeError(w, r, fault.New(fault.Conflict, "the item was changed concurrently: read it again"))
		return
	}
	setETag(w, version)
	writeJSON(w, status, out(items[i], version))
}

// answerList writes the items of one policy section with the policy's
// version in their ETag.
func answerList[T, J any](w http.ResponseWriter, items []T, version int64, out func(T, int64) J) {
	list := make([]J, len(items))
	for i, x := range items {
		list[i] = out(x, version)
	}
	setETag(w, version)
	writeList(w, list)
}

// setETag sends the policy version as a strong entity tag.
func setETag(w http.ResponseWriter, version int64) {
	w.Header().Set("ETag", `"`+strconv.FormatInt(version, 10)+`"`)
}

// policyOf resolves the project of a request and reads its policy and
// version.
func (a *admin) policyOf(r *http.Request) (store.Project, store.Policy, int64, error) {
	_, p, err := a.project(r)
	if err != nil {
		return store.Project{}, store.Policy{}, 0, err
	}
	pol, v, err := a.s.st.VersionedPolicy(r.Context(), p.ID)
	return p, pol, v, err
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
	_, pol, v, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerList(w, pol.Templates, v, templateOut)
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
	want, err := wantVersion(r, b.Version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if b.Name == nil {
		writeError(w, r, required("name", ""))
		return
	}
	name := *b.Name
	pol, v, err := a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	answerItem(w, r, http.StatusCreated, pol.Templates, findTemplate(pol, name), v, templateOut)
}

func (a *admin) getTemplate(w http.ResponseWriter, r *http.Request) {
	_, pol, v, err := a.policyOf(r)
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
	answerItem(w, r, http.StatusOK, pol.Templates, i, v, templateOut)
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
	want, err := wantVersion(r, b.Version)
	if err != nil {
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
	pol, v, err := a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	answerItem(w, r, http.StatusOK, pol.Templates, findTemplate(pol, name), v, templateOut)
}

// deleteTemplate removes a template no binding names.
func (a *admin) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	name := pathParam(r, "template")
	want, err := wantVersion(r, nil)
	if err != nil {
		writeError(w, r, err)
		return
	}
	_, _, err = a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	_, pol, v, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerList(w, pol.Bindings, v, bindingOut)
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
	want, err := wantVersion(r, b.Version)
	if err != nil {
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
	pol, v, err := a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	answerItem(w, r, http.StatusCreated, pol.Bindings, findBinding(pol, role), v, bindingOut)
}

func (a *admin) getBinding(w http.ResponseWriter, r *http.Request) {
	_, pol, v, err := a.policyOf(r)
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
	answerItem(w, r, http.StatusOK, pol.Bindings, i, v, bindingOut)
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
	want, err := wantVersion(r, b.Version)
	if err != nil {
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
	pol, v, err := a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	answerItem(w, r, http.StatusOK, pol.Bindings, findBinding(pol, role), v, bindingOut)
}

func (a *admin) deleteBinding(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	role := pathParam(r, "role")
	want, err := wantVersion(r, nil)
	if err != nil {
		writeError(w, r, err)
		return
	}
	_, _, err = a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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

func lockOut(l store.Lock, version int64) lockJSON {
	return lockJSON{ID: l.ID, Object: l.Pattern, Mask: l.Mask, Version: version}
}

func (a *admin) listLocks(w http.ResponseWriter, r *http.Request) {
	_, pol, v, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerList(w, pol.Locks, v, lockOut)
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
	want, err := wantVersion(r, b.Version)
	if err != nil {
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
	pol, v, err := a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	answerItem(w, r, http.StatusCreated, pol.Locks, findLock(pol, object), v, lockOut)
}

func (a *admin) getLock(w http.ResponseWriter, r *http.Request) {
	_, pol, v, err := a.policyOf(r)
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
	answerItem(w, r, http.StatusOK, pol.Locks, i, v, lockOut)
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
	want, err := wantVersion(r, b.Version)
	if err != nil {
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
	pol, v, err := a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	answerItem(w, r, http.StatusOK, pol.Locks, findLock(pol, object), v, lockOut)
}

func (a *admin) deleteLock(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	object := pathParam(r, "object")
	want, err := wantVersion(r, nil)
	if err != nil {
		writeError(w, r, err)
		return
	}
	_, _, err = a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	_, pol, v, err := a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerList(w, pol.Scopes, v, scopeOut)
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
	want, err := wantVersion(r, b.Version)
	if err != nil {
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
	pol, v, err := a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	answerItem(w, r, http.StatusCreated, pol.Scopes, findScope(pol, sc.Role, sc.Object), v, scopeOut)
}

func (a *admin) getScope(w http.ResponseWriter, r *http.Request) {
	_, pol, v, err := a.policyOf(r)
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
	answerItem(w, r, http.StatusOK, pol.Scopes, i, v, scopeOut)
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
	want, err := wantVersion(r, b.Version)
	if err != nil {
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
	pol, v, err := a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
	answerItem(w, r, http.StatusOK, pol.Scopes, findScope(pol, role, object), v, scopeOut)
}

func (a *admin) deleteScope(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	role, object := pathParam(r, "role"), pathParam(r, "object")
	want, err := wantVersion(r, nil)
	if err != nil {
		writeError(w, r, err)
		return
	}
	_, _, err = a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
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
