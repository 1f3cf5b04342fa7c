package api

import (
	"net/http"

	"github.com/littlebitlabs/minimal/dialects"
)

// reloadDatabase reads a registered database's tables again at once: on
// this server now, and on every other server that follows the store
// (store.TouchDatabase), like `minimal db reload`. The answer counts the
// tables found, with a warning when there are none.
func (a *admin) reloadDatabase(w http.ResponseWriter, r *http.Request) {
	d, err := a.database(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := a.s.st.TouchDatabase(r.Context(), d.ProjectID, d.Type, d.Schema); err != nil {
		writeError(w, r, err)
		return
	}
	n, err := a.s.eng.Reload(r.Context(), d.ProjectID, d.Type, d.Schema)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tablesAnswer(d.Type, d.Schema, n))
}

// tablesAnswer is the answer of a reload or a connection test: status,
// the database, how many tables were found and, when none, a warning
// (dialects.NoTablesWarning).
func tablesAnswer(typ, schema string, n int) map[string]any {
	out := map[string]any{"status": "ok", "type": typ, "schema": schema, "tables": n}
	if n == 0 {
		out["warning"] = dialects.NoTablesWarning
	}
	return out
}
