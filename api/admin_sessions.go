package api

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
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

// MaxSessionsLimit caps the limit of a sessions listing.
const MaxSessionsLimit = 1000

// listSessions answers GET AdminSessionsPath: the AI sessions of the
// caller's project, newest first (limit, 1 to MaxSessionsLimit, default
// 100). It needs the admin role, like the journal.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	p := auth.PrincipalFrom(r.Context())
	if err := permissions.RequireAdmin(p.Roles, "listing AI sessions"); err != nil {
		writeError(w, r, err)
		return
	}
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxSessionsLimit {
			writeError(w, r, fault.New(fault.Invalid, "parameter \"limit\": %q is not a number from 1 to %d", v, MaxSessionsLimit))
			return
		}
		limit = n
	}
	v, err := sessions.List(r.Context(), s.st, p.ProjectID, limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeList(w, v)
}
