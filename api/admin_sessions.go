package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/sessions"
)

// AdminSessionsPath is the root of the admin API's AI sessions.
const AdminSessionsPath = "/minimal/api/admin/v1/sessions"

// sessionJournal answers GET AdminSessionsPath/{id}/journal: a session of
// the caller's project and every call journaled in it. It needs the admin
// role; a session of another project is 404, like an unknown one.
func (s *Server) sessionJournal(w http.ResponseWriter, r *http.Request) {
	p := auth.PrincipalFrom(r.Context())
	if err := permissions.RequireAdmin(p.Roles, "reading a session journal"); err != nil {
		writeError(w, r, err)
		return
	}
	v, err := sessions.Journal(r.Context(), s.st, p.ProjectID, chi.URLParam(r, "id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
