package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// auditJSON is one audit entry as the admin API shows it.
type auditJSON struct {
	ID         string   `json:"id"`
	At         string   `json:"at"`
	Identity   string   `json:"identity"`
	Roles      []string `json:"roles"`
	Face       string   `json:"face"`
	Object     string   `json:"object"`
	Action     string   `json:"action"`
	Rows       int64    `json:"rows"`
	Outcome    string   `json:"outcome"`
	Message    string   `json:"message,omitempty"`
	RequestID  string   `json:"request_id,omitempty"`
	DurationMS float64  `json:"duration_ms"`
}

// listAudit answers GET …/projects/{project}/audit: the project's audit log,
// newest first. Query parameters: identity, object, action, outcome (ok,
// error or a code), since and until (RFC 3339), before (an entry id, to
// page backwards) and limit.
func (a *admin) listAudit(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	f := store.AuditFilter{Identity: q.Get("identity"), Object: q.Get("object"), Action: q.Get("action"), Outcome: q.Get("outcome"), Before: q.Get("before")}
	for name, dst := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				writeError(w, r, fault.New(fault.Invalid, "parameter %q: %q is not an RFC 3339 time", name, v))
				return
			}
			*dst = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > store.MaxAuditLimit {
			writeError(w, r, fault.New(fault.Invalid, "parameter \"limit\": %q is not a number from 1 to %d", v, store.MaxAuditLimit))
			return
		}
		f.Limit = n
	}
	entries, err := a.s.st.AuditLog(r.Context(), p.ID, f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]auditJSON, len(entries))
	for i, e := range entries {
		out[i] = auditJSON{ID: e.ID, At: e.At.UTC().Format(time.RFC3339Nano), Identity: e.Identity, Roles: e.Roles, Face: e.Face,
			Object: e.Object, Action: e.Action, Rows: e.Rows, Outcome: e.Outcome, Message: e.Message, RequestID: e.RequestID,
			DurationMS: float64(e.Duration.Microseconds()) / 1000}
	}
	writeList(w, out)
}
