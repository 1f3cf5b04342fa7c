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

func (a *admin) listOrgs(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r.Context())
	if c.operator {
		orgs, err := a.s.st.Orgs(r.Context())
		if err != nil {
			writeError(w, r, err)
			return
		}
		out := make([]orgJSON, len(orgs))
		for i, o := range orgs {
			out[i] = orgOut(o)
		}
		writeList(w, out)
		return
	}
	o, err := a.s.st.OrgByID(r.Context(), c.p.OrgID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeList(w, []orgJSON{orgOut(o)})
}

func (a *admin) createOrg(w http.ResponseWriter, r *http.Request) {
	if err := needOperator(r, "creating an org"); err != nil {
		writeError(w, r, err)
		return
	}
	var b nameAbbr
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if err := b.check(); err != nil {
		writeError(w, r, err)
		return
	}
	o, err := a.s.st.CreateOrg(r.Context(), b.Name, b.Abbr)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, orgOut(o))
}

func (a *admin) getOrg(w http.ResponseWriter, r *http.Request) {
	o, err := a.org(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, orgOut(o))
}

func (a *admin) patchOrg(w http.ResponseWriter, r *http.Request) {
	o, err := a.org(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b rename
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Name != nil {
		if o, err = a.s.st.RenameOrg(r.Context(), o.ID, *b.Name); err != nil {
			writeError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, orgOut(o))
}

func (a *admin) deleteOrg(w http.ResponseWriter, r *http.Request) {
	o, err := a.org(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := needOperator(r, "deleting an org"); err != nil {
		writeError(w, r, err)
		return
	}
	if err := a.s.st.DeleteOrg(r.Context(), o.ID); err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}

func (a *admin) listProjects(w http.ResponseWriter, r *http.Request) {
	o, err := a.org(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ps, err := a.s.st.Projects(r.Context(), o.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]projectJSON, len(ps))
	for i, p := range ps {
		out[i] = projectOut(o, p)
	}
	writeList(w, out)
}

func (a *admin) createProject(w http.ResponseWriter, r *http.Request) {
	o, err := a.org(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b nameAbbr
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if err := b.check(); err != nil {
		writeError(w, r, err)
		return
	}
	p, err := a.s.st.CreateProject(r.Context(), o.ID, b.Name, b.Abbr)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, projectOut(o, p))
}

func (a *admin) getProject(w http.ResponseWriter, r *http.Request) {
	o, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, projectOut(o, p))
}

func (a *admin) patchProject(w http.ResponseWriter, r *http.Request) {
	o, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b rename
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Name != nil {
		if p, err = a.s.st.RenameProject(r.Context(), p.ID, *b.Name); err != nil {
			writeError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, projectOut(o, p))
}

func (a *admin) deleteProject(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := a.s.st.DeleteProject(r.Context(), p.ID); err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}

// spaceBody creates a space or switches its MCP face.
type spaceBody struct {
	Name *string `json:"name"`
	MCP  *bool   `json:"mcp"`
}

// space resolves {org}, {project} and {space}.
func (a *admin) space(r *http.Request) (store.Project, store.Space, error) {
	_, p, err := a.project(r)
	if err != nil {
		return store.Project{}, store.Space{}, err
	}
	sp, err := a.s.st.Space(r.Context(), p.ID, pathParam(r, "space"))
	return p, sp, err
}

func (a *admin) listSpaces(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sps, err := a.s.st.Spaces(r.Context(), p.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]spaceJSON, len(sps))
	for i, sp := range sps {
		out[i] = spaceOut(sp)
	}
	writeList(w, out)
}

func (a *admin) createSpace(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b spaceBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Name == nil {
		writeError(w, r, required("name", ""))
		return
	}
	sp, err := a.s.st.CreateSpace(r.Context(), p.ID, *b.Name, b.MCP != nil && *b.MCP)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, spaceOut(sp))
}

func (a *admin) getSpace(w http.ResponseWriter, r *http.Request) {
	_, sp, err := a.space(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, spaceOut(sp))
}

// patchSpace switches the MCP face. A space is not renamed: tokens carry
// its name.
func (a *admin) patchSpace(w http.ResponseWriter, r *http.Request) {
	p, sp, err := a.space(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b spaceBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Name != nil && *b.Name != sp.Name {
		writeError(w, r, fault.New(fault.Invalid, "field \"name\": a space cannot be renamed (tokens carry its name); create another space and move identities"))
		return
	}
	if b.MCP != nil && *b.MCP != sp.MCPEnabled {
		if err := a.s.st.SetSpaceMCP(r.Context(), sp.ID, *b.MCP); err != nil {
			writeError(w, r, err)
			return
		}
		if sp, err = a.s.st.Space(r.Context(), p.ID, sp.Name); err != nil {
			writeError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, spaceOut(sp))
}

func (a *admin) deleteSpace(w http.ResponseWriter, r *http.Request) {
	_, sp, err := a.space(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := a.s.st.DeleteSpace(r.Context(), sp.ID); err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}
