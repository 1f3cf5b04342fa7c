package sessions

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// Wire codes of the session refusals, in fault.Error.Code. Their kind is
// Invalid, except CodeNotFound (NotFound): all are the caller's to fix by
// starting a session.
const (
	CodeRequired = "SESSION_REQUIRED"
	CodeNotFound = "SESSION_NOT_FOUND"
	CodeExpired  = "SESSION_EXPIRED"
	CodeEnded    = "SESSION_ENDED"
)

// Limits on what an agent says about its session.
const (
	MaxNameBytes    = 200
	MaxContextBytes = 4000
	maxIDBytes      = 64
)

// Owner is who a session belongs to: an identity of a project.
type Owner struct {
	ProjectID, IdentityID string
}

// Manager starts, checks and ends sessions and journals their calls.
type Manager struct {
	st   *store.Store
	idle time.Duration
	now  func() time.Time
}

// New returns a Manager whose sessions idle out after idle without a call;
// idle <= 0 starts sessions that last until they are ended (the implicit
// session of a stdio process).
func New(st *store.Store, idle time.Duration) *Manager {
	return &Manager{st: st, idle: max(idle, 0), now: time.Now}
}

// Start opens a session for o. name and context are required, at most
// MaxNameBytes and MaxContextBytes of UTF-8.
func (m *Manager) Start(ctx context.Context, o Owner, name, context string) (store.Session, error) {
	return m.StartOn(ctx, o, "", name, context)
}

// StartOn opens a session for o like Start, bound to the MCP transport
// session transport ("" for none): Bound finds it by that id.
func (m *Manager) StartOn(ctx context.Context, o Owner, transport, name, context string) (store.Session, error) {
	if err := checkText("name", name, MaxNameBytes); err != nil {
		return store.Session{}, err
	}
	if err := checkText("context", context, MaxContextBytes); err != nil {
		return store.Session{}, err
	}
	return m.st.CreateSession(ctx, store.Session{
		ProjectID: o.ProjectID, IdentityID: o.IdentityID,
		Name: name, Context: context, IdleTimeout: m.idle, Transport: transport,
	})
}

// Bound returns the id of the newest session of o started on the MCP
// transport session transport, live or not (Begin refuses an ended or
// expired one as it refuses any other), and "" when there is none.
func (m *Manager) Bound(ctx context.Context, o Owner, transport string) (string, error) {
	return m.st.SessionOfTransport(ctx, o.ProjectID, o.IdentityID, transport)
}

func checkText(what, s string, limit int) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fault.New(fault.Invalid, "%s is empty: say what the session is for", what)
	case len(s) > limit:
		return fault.New(fault.Invalid, "%s is longer than %d bytes", what, limit)
	case !utf8.ValidString(s):
		return fault.New(fault.Invalid, "%s is not valid UTF-8", what)
	}
	return nil
}

// Call is a journaled tool call, waiting for its outcome.
type Call struct {
	m         *Manager
	sessionID string
	seq       int64
	// read is the entry of a call begun by BeginRead.
	read  *store.ReadCall
	start time.Time
}

// Begin checks that id names a live session of o and journals the call of
// tool with its arguments (JSON text) before the tool runs. It returns the
// call to Finish and the session, its idle expiry moved on. A missing id,
// an unknown one or one of another identity, an ended and an expired
// session are refused with the Code* errors.
func (m *Manager) Begin(ctx context.Context, o Owner, id, tool, arguments string) (*Call, store.Session, error) {
	return m.begin(ctx, o, id, tool, arguments, false)
}

// BeginRead is Begin for a tool that only reads: the session is checked
// the same way, but the call's entry may be written after the tool ran,
// within milliseconds and before any read of the journal
// (store.BeginReadCall); a crash can lose it.
func (m *Manager) BeginRead(ctx context.Context, o Owner, id, tool, arguments string) (*Call, store.Session, error) {
	return m.begin(ctx, o, id, tool, arguments, true)
}

func (m *Manager) begin(ctx context.Context, o Owner, id, tool, arguments string, read bool) (*Call, store.Session, error) {
	if id == "" {
		return nil, store.Session{}, &fault.Error{Kind: fault.Invalid, Code: CodeRequired,
			Message: "this tool needs an AI session: call start_ai_session, then send its session_id as the session_id argument or the X-Session-Id header (a client that keeps its MCP session, Mcp-Session-Id, needs neither)"}
	}
	if len(id) > maxIDBytes {
		return nil, store.Session{}, notFound(id[:maxIDBytes] + "…")
	}
	now := m.now()
	start := store.CallStart{SessionID: id, ProjectID: o.ProjectID, IdentityID: o.IdentityID, At: now, Tool: tool, Arguments: arguments}
	var (
		s   store.Session
		c   = &Call{m: m, sessionID: id, start: now}
		err error
	)
	if read {
		s, c.read, err = m.st.BeginReadCall(ctx, start)
	} else {
		var e store.JournalEntry
		s, e, err = m.st.BeginCall(ctx, start)
		c.seq = e.Seq
	}
	if err != nil {
		var refused *store.SessionRefused
		if errors.As(err, &refused) {
			return nil, store.Session{}, refusal(refused.Reason, id, refused.Session)
		}
		return nil, store.Session{}, err
	}
	return c, s, nil
}

// live refuses a session that o does not own, that has ended or that has
// idled out at now (the store's rule, store.Session.Refuses).
func (m *Manager) live(o Owner, s store.Session, now time.Time) error {
	if r := s.Refuses(o.ProjectID, o.IdentityID, now); r != 0 {
		return refusal(r, s.ID, s)
	}
	return nil
}

// refusal is the error a session refusing a call under id is answered
// with. A session of another identity looks like an unknown one.
func refusal(r store.Refusal, id string, s store.Session) error {
	switch r {
	case store.RefusedEnded:
		return &fault.Error{Kind: fault.Invalid, Code: CodeEnded,
			Message: "session " + quote(id) + " has ended: call start_ai_session to start a new one"}
	case store.RefusedExpired:
		return &fault.Error{Kind: fault.Invalid, Code: CodeExpired,
			Message: "session " + quote(id) + " expired after " + s.IdleTimeout.String() + " without a call: call start_ai_session to start a new one"}
	}
	return notFound(id)
}

func notFound(id string) *fault.Error {
	return &fault.Error{Kind: fault.NotFound, Code: CodeNotFound,
		Message: "session " + quote(id) + " not found for this identity: call start_ai_session to start one"}
}

func quote(s string) string { return `"` + s + `"` }

// Finish records the outcome of the call: "ok" when err is nil, else the
// error's wire code and caller-safe message; rows read or affected; and the
// time since Begin. It runs even when ctx is cancelled, so a call whose
// caller went away still gets its outcome.
func (c *Call) Finish(ctx context.Context, err error, rows int64) error {
	outcome, msg := "ok", ""
	if err != nil {
		fe := fault.As(err)
		outcome, msg = fe.WireCode(), fe.Message
	}
	if c.read != nil {
		var werr error
		c.m.st.FinishReadCall(c.read, outcome, msg, rows, c.m.now().Sub(c.start), func(err error) { werr = err })
		if err := c.m.st.FlushJournal(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		return werr
	}
	return c.m.st.FinishCall(context.WithoutCancel(ctx), c.sessionID, c.seq, outcome, msg, rows, c.m.now().Sub(c.start))
}

// FinishLater records the outcome like Finish without waiting for the
// write: the journal writer commits it with the calls that follow, and
// report (when not nil) receives the error if it cannot be written. A
// journal read sees it.
func (c *Call) FinishLater(err error, rows int64, report func(error)) {
	outcome, msg := "ok", ""
	if err != nil {
		fe := fault.As(err)
		outcome, msg = fe.WireCode(), fe.Message
	}
	if c.read != nil {
		c.m.st.FinishReadCall(c.read, outcome, msg, rows, c.m.now().Sub(c.start), report)
		return
	}
	c.m.st.FinishCallLater(c.sessionID, c.seq, outcome, msg, rows, c.m.now().Sub(c.start), report)
}

// End ends a live session of o; it is refused like in Begin otherwise.
func (m *Manager) End(ctx context.Context, o Owner, id string) (store.Session, error) {
	s, err := m.st.SessionByID(ctx, id)
	if err != nil {
		if fault.KindOf(err) == fault.NotFound {
			return store.Session{}, notFound(id)
		}
		return store.Session{}, err
	}
	now := m.now()
	if err := m.live(o, s, now); err != nil {
		return store.Session{}, err
	}
	if err := m.st.EndSession(ctx, id, now); err != nil {
		return store.Session{}, err
	}
	s.EndedAt = time.Unix(0, now.UnixNano()).UTC()
	return s, nil
}
