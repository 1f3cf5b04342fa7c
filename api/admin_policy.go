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

	"github.com/go-chi/chi/v5"

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

// section serves one of the four sections of a project's policy as an
// admin resource: list, create, get, replace and delete of its items, each
// write an edit of the whole policy at a version (editPolicy). T is the
// stored item, K the key that names it in paths, B the body of a write
// and J the item as answered.
type section[T any, K comparable, B any, J any] struct {
	a *admin
	// items is the section in a policy.
	items func(*store.Policy) *[]T
	// keyOf is the key of an item; pathKey the key a request's path names.
	keyOf   func(T) K
	pathKey func(*http.Request) K
	// out is an item as answered, at a policy version.
	out func(T, int64) J
	// version is the policy version a body names, nil for none.
	version func(*B) *int64
	// notFound and exists are the refusals of a missing key on get,
	// replace and delete, and of a taken key on create.
	notFound, exists func(K) error
	// build checks a create body and makes the new item of it.
	build func(*B) (T, error)
	// check checks a replacing body against the key of its path; apply
	// writes it into the item.
	check func(*B, K) error
	apply func(*T, *B)
	// inUse, when set, refuses to delete an item the rest of the policy
	// names.
	inUse func(store.Policy, K) error
}

func (s section[T, K, B, J]) find(pol *store.Policy, k K) int {
	return slices.IndexFunc(*s.items(pol), func(t T) bool { return s.keyOf(t) == k })
}

// body decodes a write's body strictly and reads the version it names.
func (s section[T, K, B, J]) body(w http.ResponseWriter, r *http.Request) (*B, int64, error) {
	b := new(B)
	if err := s.a.decodeStrict(w, r, b); err != nil {
		return nil, 0, err
	}
	want, err := wantVersion(r, s.version(b))
	return b, want, err
}

func (s section[T, K, B, J]) list(w http.ResponseWriter, r *http.Request) {
	_, pol, v, err := s.a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerList(w, *s.items(&pol), v, s.out)
}

func (s section[T, K, B, J]) get(w http.ResponseWriter, r *http.Request) {
	_, pol, v, err := s.a.policyOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	k := s.pathKey(r)
	i := s.find(&pol, k)
	if i < 0 {
		writeError(w, r, s.notFound(k))
		return
	}
	answerItem(w, r, http.StatusOK, *s.items(&pol), i, v, s.out)
}

func (s section[T, K, B, J]) create(w http.ResponseWriter, r *http.Request) {
	_, p, err := s.a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	b, want, err := s.body(w, r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	item, err := s.build(b)
	if err != nil {
		writeError(w, r, err)
		return
	}
	k := s.keyOf(item)
	pol, v, err := s.a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
		if s.find(pol, k) >= 0 {
			return s.exists(k)
		}
		*s.items(pol) = append(*s.items(pol), item)
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusCreated, *s.items(&pol), s.find(&pol, k), v, s.out)
}

func (s section[T, K, B, J]) replace(w http.ResponseWriter, r *http.Request) {
	_, p, err := s.a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	k := s.pathKey(r)
	b, want, err := s.body(w, r)
	if err == nil {
		err = s.check(b, k)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	pol, v, err := s.a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
		i := s.find(pol, k)
		if i < 0 {
			return s.notFound(k)
		}
		s.apply(&(*s.items(pol))[i], b)
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	answerItem(w, r, http.StatusOK, *s.items(&pol), s.find(&pol, k), v, s.out)
}

func (s section[T, K, B, J]) remove(w http.ResponseWriter, r *http.Request) {
	_, p, err := s.a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	k := s.pathKey(r)
	want, err := wantVersion(r, nil)
	if err != nil {
		writeError(w, r, err)
		return
	}
	_, _, err = s.a.editPolicy(r.Context(), p.ID, want, func(pol *store.Policy) error {
		i := s.find(pol, k)
		if i < 0 {
			return s.notFound(k)
		}
		if s.inUse != nil {
			if err := s.inUse(*pol, k); err != nil {
				return err
			}
		}
		*s.items(pol) = slices.Delete(*s.items(pol), i, i+1)
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}

// mount serves the section on coll (list, create) and item (get, replace
// with PUT, delete).
func (s section[T, K, B, J]) mount(r chi.Router, coll, item string) {
	r.Get(coll, s.list)
	r.Post(coll, s.create)
	r.Get(item, s.get)
	r.Put(item, s.replace)
	r.Delete(item, s.remove)
}

// mountPolicy serves the four sections of a project's policy under
// project.
func (a *admin) mountPolicy(r chi.Router, project string) {
	section[store.Template, string, templateBody, templateJSON]{
		a:        a,
		items:    func(p *store.Policy) *[]store.Template { return &p.Templates },
		keyOf:    func(t store.Template) string { return t.Name },
		pathKey:  func(r *http.Request) string { return pathParam(r, "template") },
		out:      templateOut,
		version:  func(b *templateBody) *int64 { return b.Version },
		notFound: func(name string) error { return fault.New(fault.NotFound, "template %q not found", name) },
		exists:   func(name string) error { return fault.New(fault.Conflict, "template %q already exists", name) },
		build: func(b *templateBody) (store.Template, error) {
			if b.Name == nil {
				return store.Template{}, required("name", "")
			}
			return store.Template{Name: *b.Name, Rules: b.rules()}, nil
		},
		check: func(b *templateBody, name string) error {
			if err := sameKey("name", b.Name, name); err != nil {
				return err
			}
			if b.Rules == nil {
				return required("rules", "")
			}
			return nil
		},
		apply: func(t *store.Template, b *templateBody) { t.Rules = b.rules() },
		inUse: func(pol store.Policy, name string) error {
			var roles []string
			for _, b := range pol.Bindings {
				if slices.Contains(b.Templates, name) {
					roles = append(roles, b.Role)
				}
			}
			if len(roles) > 0 {
				return fault.New(fault.Conflict, "template %q is bound to roles [%s]: change those bindings first", name, strings.Join(roles, ", "))
			}
			return nil
		},
	}.mount(r, project+"/templates", project+"/templates/{template}")

	section[store.Binding, string, bindingBody, bindingJSON]{
		a:        a,
		items:    func(p *store.Policy) *[]store.Binding { return &p.Bindings },
		keyOf:    func(b store.Binding) string { return b.Role },
		pathKey:  func(r *http.Request) string { return pathParam(r, "role") },
		out:      bindingOut,
		version:  func(b *bindingBody) *int64 { return b.Version },
		notFound: func(role string) error { return fault.New(fault.NotFound, "role %q has no binding", role) },
		exists: func(role string) error {
			return fault.New(fault.Conflict, "role %q is already bound: change its binding instead", role)
		},
		build: func(b *bindingBody) (store.Binding, error) {
			if b.Role == nil {
				return store.Binding{}, required("role", "")
			}
			if b.Templates == nil {
				return store.Binding{}, required("templates", "")
			}
			return store.Binding{Role: *b.Role, Templates: *b.Templates}, nil
		},
		check: func(b *bindingBody, role string) error {
			if err := sameKey("role", b.Role, role); err != nil {
				return err
			}
			if b.Templates == nil {
				return required("templates", "")
			}
			return nil
		},
		apply: func(x *store.Binding, b *bindingBody) { x.Templates = *b.Templates },
	}.mount(r, project+"/bindings", project+"/bindings/{role}")

	section[store.Lock, string, lockBody, lockJSON]{
		a:        a,
		items:    func(p *store.Policy) *[]store.Lock { return &p.Locks },
		keyOf:    func(l store.Lock) string { return l.Pattern },
		pathKey:  func(r *http.Request) string { return pathParam(r, "object") },
		out:      lockOut,
		version:  func(b *lockBody) *int64 { return b.Version },
		notFound: func(object string) error { return fault.New(fault.NotFound, "no lock on %q", object) },
		exists: func(object string) error {
			return fault.New(fault.Conflict, "a lock on %q already exists: change its mask instead", object)
		},
		build: func(b *lockBody) (store.Lock, error) {
			if b.Object == nil {
				return store.Lock{}, required("object", "")
			}
			if b.Mask == nil {
				return store.Lock{}, required("mask", "")
			}
			return store.Lock{Pattern: *b.Object, Mask: *b.Mask}, nil
		},
		check: func(b *lockBody, object string) error {
			if err := sameKey("object", b.Object, object); err != nil {
				return err
			}
			if b.Mask == nil {
				return required("mask", "")
			}
			return nil
		},
		apply: func(l *store.Lock, b *lockBody) { l.Mask = *b.Mask },
	}.mount(r, project+"/locks", project+"/locks/{object}")

	section[store.Scope, scopeKey, scopeBody, scopeJSON]{
		a:       a,
		items:   func(p *store.Policy) *[]store.Scope { return &p.Scopes },
		keyOf:   func(s store.Scope) scopeKey { return scopeKey{s.Role, s.Object} },
		pathKey: func(r *http.Request) scopeKey { return scopeKey{pathParam(r, "role"), pathParam(r, "object")} },
		out:     scopeOut,
		version: func(b *scopeBody) *int64 { return b.Version },
		notFound: func(k scopeKey) error {
			return fault.New(fault.NotFound, "role %q has no scope on %q", k.role, k.object)
		},
		exists: func(k scopeKey) error {
			return fault.New(fault.Conflict, "role %q already has a scope on %q: change its filter instead", k.role, k.object)
		},
		build: func(b *scopeBody) (store.Scope, error) {
			for _, f := range []struct {
				name string
				v    *string
			}{{"role", b.Role}, {"object", b.Object}, {"filter", b.Filter}} {
				if f.v == nil {
					return store.Scope{}, required(f.name, "")
				}
			}
			if err := checkScopeFilter(*b.Filter); err != nil {
				return store.Scope{}, err
			}
			return store.Scope{Role: *b.Role, Object: *b.Object, Filter: *b.Filter}, nil
		},
		check: func(b *scopeBody, k scopeKey) error {
			if err := sameKey("role", b.Role, k.role); err != nil {
				return err
			}
			if err := sameKey("object", b.Object, k.object); err != nil {
				return err
			}
			if b.Filter == nil {
				return required("filter", "")
			}
			return checkScopeFilter(*b.Filter)
		},
		apply: func(s *store.Scope, b *scopeBody) { s.Filter = *b.Filter },
	}.mount(r, project+"/scopes", project+"/scopes/{role}/{object}")
}

// scopeKey names a scope: a role and an object pattern.
type scopeKey struct{ role, object string }

func lockOut(l store.Lock, version int64) lockJSON {
	return lockJSON{ID: l.ID, Object: l.Pattern, Mask: l.Mask, Version: version}
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
