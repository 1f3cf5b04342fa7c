package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/store"
)

// identityJSON is an identity as the admin API shows it.
type identityJSON struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Kind      string         `json:"kind"`
	Space     string         `json:"space"`
	Roles     []string       `json:"roles"`
	Claims    map[string]any `json:"claims"`
	KeyType   string         `json:"key_type"`
	Enabled   bool           `json:"enabled"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

func identityOut(id store.Identity, space string) identityJSON {
	return identityJSON{
		ID: id.ID, Name: id.Name, Kind: id.Kind, Space: space, Roles: id.Roles, Claims: id.Claims,
		KeyType: id.KeyType, Enabled: id.Enabled, CreatedAt: id.CreatedAt, UpdatedAt: id.UpdatedAt,
	}
}

// identityBody creates an identity (name and space required; kind user,
// key_type crud, enabled true, no roles and no claims by default, as in a
// policy file) or changes the fields it names.
type identityBody struct {
	Name    *string         `json:"name"`
	Kind    *string         `json:"kind"`
	Space   *string         `json:"space"`
	Roles   *[]string       `json:"roles"`
	Claims  *map[string]any `json:"claims"`
	KeyType *string         `json:"key_type"`
	Enabled *bool           `json:"enabled"`
}

// apply sets the fields the body names on id, resolving the space by name
// in the identity's project.
func (a *admin) apply(r *http.Request, b identityBody, id *store.Identity) error {
	if b.Kind != nil {
		id.Kind = *b.Kind
	}
	if b.Space != nil {
		sp, err := a.s.st.Space(r.Context(), id.ProjectID, *b.Space)
		if err != nil {
			if fault.KindOf(err) == fault.NotFound {
				return fault.New(fault.Invalid, "field \"space\": no space %q in this project", *b.Space)
			}
			return err
		}
		id.SpaceID = sp.ID
	}
	if b.Roles != nil {
		id.Roles = *b.Roles
	}
	if b.Claims != nil {
		for k := range *b.Claims {
			if k == "" {
				return fault.New(fault.Invalid, "field \"claims\": a claim has an empty name")
			}
		}
		id.Claims = *b.Claims
	}
	if b.KeyType != nil {
		id.KeyType = *b.KeyType
	}
	if b.Enabled != nil {
		id.Enabled = *b.Enabled
	}
	return nil
}

// identity resolves {org}, {project} and {identity}.
func (a *admin) identity(r *http.Request) (store.Identity, error) {
	_, p, err := a.project(r)
	if err != nil {
		return store.Identity{}, err
	}
	return a.s.st.Identity(r.Context(), p.ID, pathParam(r, "identity"))
}

// spacedIdentity is an identity with its space's name, as answered.
type spacedIdentity struct {
	id    store.Identity
	space string
}

// spaced finds an identity's space name.
func (a *admin) spaced(r *http.Request, id store.Identity) (spacedIdentity, error) {
	sp, err := a.s.st.SpaceByID(r.Context(), id.SpaceID)
	if err != nil {
		return spacedIdentity{}, err
	}
	return spacedIdentity{id: id, space: sp.Name}, nil
}

// identities serves the identities of a project. Disabling an identity or
// taking a role away reaches its live tokens within about two seconds.
func (a *admin) identities() crud[store.Project, store.Identity, spacedIdentity, identityBody, identityBody] {
	return crud[store.Project, store.Identity, spacedIdentity, identityBody, identityBody]{
		a:      a,
		parent: a.projectOf,
		list:   a.listIdentities,
		at: func(r *http.Request, p store.Project) (store.Identity, error) {
			return a.s.st.Identity(r.Context(), p.ID, pathParam(r, "identity"))
		},
		get: func(r *http.Request, _ store.Project, id store.Identity) (spacedIdentity, error) {
			return a.spaced(r, id)
		},
		create: a.createIdentity,
		update: a.patchIdentity,
		remove: func(r *http.Request, _ store.Project, id store.Identity) error {
			return a.s.st.DeleteIdentity(r.Context(), id.ID)
		},
		out: func(_ store.Project, s spacedIdentity) any { return identityOut(s.id, s.space) },
	}
}

func (a *admin) listIdentities(r *http.Request, p store.Project) ([]spacedIdentity, error) {
	ids, err := a.s.st.ListIdentities(r.Context(), p.ID)
	if err != nil {
		return nil, err
	}
	sps, err := a.s.st.Spaces(r.Context(), p.ID)
	if err != nil {
		return nil, err
	}
	spaceName := make(map[string]string, len(sps))
	for _, sp := range sps {
		spaceName[sp.ID] = sp.Name
	}
	out := make([]spacedIdentity, len(ids))
	for i, id := range ids {
		out[i] = spacedIdentity{id: id, space: spaceName[id.SpaceID]}
	}
	return out, nil
}

func (a *admin) createIdentity(r *http.Request, p store.Project, b *identityBody) (spacedIdentity, error) {
	if b.Name == nil {
		return spacedIdentity{}, required("name", "")
	}
	if b.Space == nil {
		return spacedIdentity{}, required("space", "")
	}
	id := store.Identity{ProjectID: p.ID, Name: *b.Name, Kind: store.KindUser, KeyType: "crud", Enabled: true}
	if err := a.apply(r, *b, &id); err != nil {
		return spacedIdentity{}, err
	}
	id, err := a.s.st.CreateIdentity(r.Context(), id)
	if err != nil {
		return spacedIdentity{}, err
	}
	return a.spaced(r, id)
}

// patchIdentity changes the fields the body names; an identity is never
// renamed (tokens carry its name).
func (a *admin) patchIdentity(r *http.Request, _ store.Project, id store.Identity, b *identityBody) (spacedIdentity, error) {
	if b.Name != nil && *b.Name != id.Name {
		return spacedIdentity{}, fault.New(fault.Invalid, "field \"name\": an identity cannot be renamed (tokens carry its name)")
	}
	if err := a.apply(r, *b, &id); err != nil {
		return spacedIdentity{}, err
	}
	id, err := a.s.st.UpdateIdentity(r.Context(), id)
	if err != nil {
		return spacedIdentity{}, err
	}
	return a.spaced(r, id)
}

// tokenBody narrows a token minted for an identity; every field is
// optional (all the identity's roles, its key_type, auth.DefaultTTL).
type tokenBody struct {
	Roles   *[]string `json:"roles"`
	KeyType string    `json:"key_type"`
	TTL     string    `json:"ttl"`
}

// mintFor mints a token for an identity of the org, within what the
// identity holds (auth.Mint's rules). The token is the answer's purpose,
// so it is shown once, here; it is not stored.
func (a *admin) mintFor(w http.ResponseWriter, r *http.Request) {
	id, err := a.identity(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b tokenBody
	if err := a.decodeOptional(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	opt := auth.MintOptions{KeyType: b.KeyType}
	if b.Roles != nil {
		opt.Roles = *b.Roles
	}
	if b.TTL != "" {
		if opt.TTL, err = auth.ParseTTL(b.TTL); err != nil {
			writeError(w, r, fault.Wrap(fault.Invalid, err, "field \"ttl\": %s", fault.As(err).Message))
			return
		}
	}
	tok, err := auth.Mint(r.Context(), a.s.st, a.s.key, id, opt)
	if err != nil {
		writeError(w, r, err)
		return
	}
	p, err := a.s.ver.Verify(r.Context(), tok)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"token": tok, "jti": p.TokenID, "identity": id.Name, "roles": p.Roles, "key_type": p.KeyType.String(),
		"expires_at": p.ExpiresAt.UTC().Format(time.RFC3339),
	})
}

// roleJSON is a role as the admin API derives it: roles are not stored on
// their own, they exist where identities hold them and bindings and scopes
// name them. admin is built in.
type roleJSON struct {
	Name       string   `json:"name"`
	Builtin    bool     `json:"builtin"`
	Identities []string `json:"identities"`
	Templates  []string `json:"templates"`
	Scopes     []string `json:"scopes"`
}

// roles derives every role of a project, sorted by name.
func (a *admin) roles(r *http.Request) ([]roleJSON, error) {
	_, p, err := a.project(r)
	if err != nil {
		return nil, err
	}
	ids, err := a.s.st.ListIdentities(r.Context(), p.ID)
	if err != nil {
		return nil, err
	}
	pol, err := a.s.st.Policy(r.Context(), p.ID)
	if err != nil {
		return nil, err
	}
	by := map[string]*roleJSON{}
	get := func(name string) *roleJSON {
		if by[name] == nil {
			by[name] = &roleJSON{Name: name, Builtin: name == permissions.AdminRole, Identities: []string{}, Templates: []string{}, Scopes: []string{}}
		}
		return by[name]
	}
	get(permissions.AdminRole)
	for _, id := range ids {
		for _, role := range id.Roles {
			get(role).Identities = append(get(role).Identities, id.Name)
		}
	}
	for _, b := range pol.Bindings {
		get(b.Role).Templates = append(get(b.Role).Templates, b.Templates...)
	}
	for _, sc := range pol.Scopes {
		get(sc.Role).Scopes = append(get(sc.Role).Scopes, sc.Object)
	}
	out := make([]roleJSON, 0, len(by))
	for _, v := range by {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(x, y roleJSON) int { return strings.Compare(x.Name, y.Name) })
	return out, nil
}

func (a *admin) listRoles(w http.ResponseWriter, r *http.Request) {
	out, err := a.roles(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeList(w, out)
}

func (a *admin) getRole(w http.ResponseWriter, r *http.Request) {
	out, err := a.roles(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	name := pathParam(r, "role")
	for _, role := range out {
		if role.Name == name {
			writeJSON(w, http.StatusOK, role)
			return
		}
	}
	writeError(w, r, fault.New(fault.NotFound, "role %q is not held, bound or scoped in this project", name))
}
