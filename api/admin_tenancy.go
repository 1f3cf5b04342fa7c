package api

import (
	"net/http"
	"time"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// orgJSON is an org as the admin API shows it.
type orgJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Abbr      string    `json:"abbr"`
	CreatedAt time.Time `json:"created_at"`
}

func orgOut(o store.Org) orgJSON {
	return orgJSON{ID: o.ID, Name: o.Name, Abbr: o.Abbr, CreatedAt: o.CreatedAt}
}

// projectJSON is a project as the admin API shows it.
type projectJSON struct {
	ID   string `json:"id"`
	Org  string `json:"org"`
	Name string `json:"name"`
	Abbr string `json:"abbr"`
}

func projectOut(o store.Org, p store.Project) projectJSON {
	return projectJSON{ID: p.ID, Org: o.Abbr, Name: p.Name, Abbr: p.Abbr}
}

// spaceJSON is a space as the admin API shows it.
type spaceJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	MCP  bool   `json:"mcp"`
}

func spaceOut(s store.Space) spaceJSON { return spaceJSON{ID: s.ID, Name: s.Name, MCP: s.MCPEnabled} }

// nameAbbr is the body that creates an org or a project.
type nameAbbr struct {
	Name string `json:"name"`
	Abbr string `json:"abbr"`
}

func (b nameAbbr) check() error {
	if err := required("name", b.Name); err != nil {
		return err
	}
	return required("abbr", b.Abbr)
}

// rename is the body that updates an org or a project: only the display
// name changes; the abbreviation is in every token and URL.
type rename struct {
	Name *string `json:"name"`
}

// orgs serves the orgs. An org admin lists and sees only the org of its
// token (admin.org); creating one (a route of its own, behind the server
// key: see mountAdmin) and deleting one need the server key.
func (a *admin) orgs() crud[struct{}, store.Org, store.Org, nameAbbr, rename] {
	return crud[struct{}, store.Org, store.Org, nameAbbr, rename]{
		a:      a,
		parent: func(*http.Request) (struct{}, error) { return struct{}{}, nil },
		list: func(r *http.Request, _ struct{}) ([]store.Org, error) {
			c := callerFrom(r.Context())
			if c.operator {
				return a.s.st.Orgs(r.Context())
			}
			o, err := a.s.st.OrgByID(r.Context(), c.p.OrgID)
			if err != nil {
				return nil, err
			}
			return []store.Org{o}, nil
		},
		at:  func(r *http.Request, _ struct{}) (store.Org, error) { return a.org(r) },
		get: itself[struct{}, store.Org],
		create: func(r *http.Request, _ struct{}, b *nameAbbr) (store.Org, error) {
			if err := b.check(); err != nil {
				return store.Org{}, err
			}
			return a.s.st.CreateOrg(r.Context(), b.Name, b.Abbr)
		},
		update: func(r *http.Request, _ struct{}, o store.Org, b *rename) (store.Org, error) {
			if b.Name == nil {
				return o, nil
			}
			return a.s.st.RenameOrg(r.Context(), o.ID, *b.Name)
		},
		remove: func(r *http.Request, _ struct{}, o store.Org) error {
			if err := needOperator(r, "deleting an org"); err != nil {
				return err
			}
			return a.s.st.DeleteOrg(r.Context(), o.ID)
		},
		out: func(_ struct{}, o store.Org) any { return orgOut(o) },
	}
}

// operatorOnly refuses, before the body is read, a call that only the
// server key may make.
func operatorOnly(what string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := needOperator(r, what); err != nil {
				writeError(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// projects serves the projects of an org.
func (a *admin) projects() crud[store.Org, store.Project, store.Project, nameAbbr, rename] {
	return crud[store.Org, store.Project, store.Project, nameAbbr, rename]{
		a:      a,
		parent: a.org,
		list: func(r *http.Request, o store.Org) ([]store.Project, error) {
			return a.s.st.Projects(r.Context(), o.ID)
		},
		at:  a.projectIn,
		get: itself[store.Org, store.Project],
		create: func(r *http.Request, o store.Org, b *nameAbbr) (store.Project, error) {
			if err := b.check(); err != nil {
				return store.Project{}, err
			}
			return a.s.st.CreateProject(r.Context(), o.ID, b.Name, b.Abbr)
		},
		update: func(r *http.Request, _ store.Org, p store.Project, b *rename) (store.Project, error) {
			if b.Name == nil {
				return p, nil
			}
			return a.s.st.RenameProject(r.Context(), p.ID, *b.Name)
		},
		remove: func(r *http.Request, _ store.Org, p store.Project) error {
			return a.s.st.DeleteProject(r.Context(), p.ID)
		},
		out: func(o store.Org, p store.Project) any { return projectOut(o, p) },
	}
}

// spaceBody creates a space or switches its MCP face.
type spaceBody struct {
	Name *string `json:"name"`
	MCP  *bool   `json:"mcp"`
}

// projectOf resolves {org} and {project}: the parent of a project's
// resources.
func (a *admin) projectOf(r *http.Request) (store.Project, error) {
	_, p, err := a.project(r)
	return p, err
}

// spaces serves the spaces of a project. A space is not renamed (tokens
// carry its name); an update switches its MCP face.
func (a *admin) spaces() crud[store.Project, store.Space, store.Space, spaceBody, spaceBody] {
	return crud[store.Project, store.Space, store.Space, spaceBody, spaceBody]{
		a:      a,
		parent: a.projectOf,
		list: func(r *http.Request, p store.Project) ([]store.Space, error) {
			return a.s.st.Spaces(r.Context(), p.ID)
		},
		at: func(r *http.Request, p store.Project) (store.Space, error) {
			return a.s.st.Space(r.Context(), p.ID, pathParam(r, "space"))
		},
		get: itself[store.Project, store.Space],
		create: func(r *http.Request, p store.Project, b *spaceBody) (store.Space, error) {
			if b.Name == nil {
				return store.Space{}, required("name", "")
			}
			return a.s.st.CreateSpace(r.Context(), p.ID, *b.Name, b.MCP != nil && *b.MCP)
		},
		update: func(r *http.Request, p store.Project, sp store.Space, b *spaceBody) (store.Space, error) {
			if b.Name != nil && *b.Name != sp.Name {
				return sp, fault.New(fault.Invalid, "field \"name\": a space cannot be renamed (tokens carry its name); create another space and move identities")
			}
			if b.MCP == nil || *b.MCP == sp.MCPEnabled {
				return sp, nil
			}
			if err := a.s.st.SetSpaceMCP(r.Context(), sp.ID, *b.MCP); err != nil {
				return sp, err
			}
			return a.s.st.Space(r.Context(), p.ID, sp.Name)
		},
		remove: func(r *http.Request, _ store.Project, sp store.Space) error {
			return a.s.st.DeleteSpace(r.Context(), sp.ID)
		},
		out: func(_ store.Project, sp store.Space) any { return spaceOut(sp) },
	}
}
