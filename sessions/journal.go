package sessions

import (
	"context"
	"encoding/json"
	"time"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// States of a session in a View.
const (
	StateLive    = "live"
	StateEnded   = "ended"
	StateExpired = "expired"
)

// View is a session and its journal as the admin API and the CLI show it.
type View struct {
	Session SessionView `json:"session"`
	Calls   []CallView  `json:"calls"`
}

// SessionView describes a session; ExpiresAt is nil when it does not idle
// out, EndedAt nil while it is open.
type SessionView struct {
	ID         string     `json:"id"`
	Identity   string     `json:"identity"`
	Name       string     `json:"name"`
	Context    string     `json:"context"`
	State      string     `json:"state"`
	StartedAt  time.Time  `json:"started_at"`
	LastSeenAt time.Time  `json:"last_seen_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	EndedAt    *time.Time `json:"ended_at"`
}

// CallView is one journaled call. Outcome is "running" until the call has
// finished (and stays so if the process stopped first), then "ok" or the
// error code.
type CallView struct {
	Seq        int64           `json:"seq"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	StartedAt  time.Time       `json:"started_at"`
	Outcome    string          `json:"outcome"`
	Message    string          `json:"message,omitempty"`
	Rows       int64           `json:"rows"`
	DurationMS float64         `json:"duration_ms"`
}

// OutcomeRunning is the Outcome of a call that has not finished.
const OutcomeRunning = "running"

// Journal reads a session and its calls. projectID, when not empty, limits
// the read to that project: a session of another project is refused like an
// unknown one (fault.NotFound).
func Journal(ctx context.Context, st *store.Store, projectID, sessionID string) (View, error) {
	s, err := st.SessionByID(ctx, sessionID)
	if err == nil && projectID != "" && s.ProjectID != projectID {
		err = fault.New(fault.NotFound, "session %q not found", sessionID)
	}
	if err != nil {
		return View{}, err
	}
	entries, err := st.Journal(ctx, sessionID)
	if err != nil {
		return View{}, err
	}
	v := View{Session: describe(s, time.Now()), Calls: make([]CallView, len(entries))}
	for i, e := range entries {
		c := CallView{Seq: e.Seq, Tool: e.Tool, Arguments: json.RawMessage(e.Arguments), StartedAt: e.StartedAt, Outcome: OutcomeRunning}
		if !json.Valid(c.Arguments) {
			c.Arguments, _ = json.Marshal(e.Arguments)
		}
		if e.Done {
			c.Outcome, c.Message, c.Rows = e.Outcome, e.Message, e.Rows
			c.DurationMS = float64(e.Duration.Microseconds()) / 1000
		}
		v.Calls[i] = c
	}
	return v, nil
}

func describe(s store.Session, now time.Time) SessionView {
	v := SessionView{ID: s.ID, Identity: s.Identity, Name: s.Name, Context: s.Context,
		State: StateLive, StartedAt: s.StartedAt, LastSeenAt: s.LastSeenAt}
	if exp, ok := s.ExpiresAt(); ok {
		v.ExpiresAt = &exp
		if !now.Before(exp) {
			v.State = StateExpired
		}
	}
	if !s.EndedAt.IsZero() {
		ended := s.EndedAt
		v.EndedAt, v.State = &ended, StateEnded
	}
	return v
}
