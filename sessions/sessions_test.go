package sessions

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is a real store with one project and two mcp identities.
type fixture struct {
	st         *store.Store
	m          *Manager
	clk        *clock
	alice, bob Owner
	other      Owner // an identity of another project
}

func newFixture(t *testing.T, idle time.Duration) *fixture {
	t.Helper()
	t.Setenv(store.EnvMasterKey, "")
	ctx := t.Context()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	owner := func(abbr, name string) Owner {
		o, err := st.OrgByAbbr(ctx, abbr)
		if err != nil {
			if o, err = st.CreateOrg(ctx, abbr, abbr); err != nil {
				t.Fatal(err)
			}
		}
		p, err := st.ProjectByAbbr(ctx, o.ID, abbr)
		if err != nil {
			if p, err = st.CreateProject(ctx, o.ID, abbr, abbr); err != nil {
				t.Fatal(err)
			}
		}
		sp, err := st.Space(ctx, p.ID, "main")
		if err != nil {
			if sp, err = st.CreateSpace(ctx, p.ID, "main", true); err != nil {
				t.Fatal(err)
			}
		}
		id, err := st.CreateIdentity(ctx, store.Identity{ProjectID: p.ID, SpaceID: sp.ID, Name: name, Kind: store.KindMCP, KeyType: "crud", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		return Owner{ProjectID: p.ID, IdentityID: id.ID}
	}
	f := &fixture{st: st, clk: &clock{t: time.Now()}}
	f.alice, f.bob, f.other = owner("a", "alice"), owner("a", "bob"), owner("b", "carl")
	f.m = New(st, idle)
	f.m.now = f.clk.now
	return f
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %s", code)
	}
	if got := fault.As(err).WireCode(); got != code {
		t.Fatalf("code = %s, want %s (%v)", got, code, err)
	}
}

func TestStartValidates(t *testing.T) {
	f := newFixture(t, time.Minute)
	ctx := t.Context()
	for _, tc := range []struct{ name, context string }{
		{"", "c"}, {"n", ""}, {"  ", "c"}, {strings.Repeat("x", MaxNameBytes+1), "c"},
		{"n", strings.Repeat("x", MaxContextBytes+1)}, {"\xff", "c"},
	} {
		if _, err := f.m.Start(ctx, f.alice, tc.name, tc.context); fault.KindOf(err) != fault.Invalid {
			t.Errorf("Start(%q, %q) = %v, want Invalid", tc.name, tc.context, err)
		}
	}
	s, err := f.m.Start(ctx, f.alice, "triage", "read the notes")
	if err != nil {
		t.Fatal(err)
	}
	if exp, ok := s.ExpiresAt(); !ok || exp.Sub(s.StartedAt) != time.Minute {
		t.Fatalf("expiry %v %v", exp, ok)
	}
}

func TestBeginRules(t *testing.T) {
	f := newFixture(t, time.Minute)
	ctx := t.Context()
	s, err := f.m.Start(ctx, f.alice, "n", "c")
	if err != nil {
		t.Fatal(err)
	}

	_, _, err = f.m.Begin(ctx, f.alice, "", "ping", `{}`)
	wantCode(t, err, CodeRequired)
	_, _, err = f.m.Begin(ctx, f.alice, "no-such-session", "ping", `{}`)
	wantCode(t, err, CodeNotFound)
	_, _, err = f.m.Begin(ctx, f.alice, strings.Repeat("x", 1000), "ping", `{}`)
	wantCode(t, err, CodeNotFound)
	// Another identity, in the same project or another, sees no session.
	_, _, errBob := f.m.Begin(ctx, f.bob, s.ID, "ping", `{}`)
	wantCode(t, errBob, CodeNotFound)
	_, _, errOther := f.m.Begin(ctx, f.other, s.ID, "ping", `{}`)
	wantCode(t, errOther, CodeNotFound)
	_, _, errUnknown := f.m.Begin(ctx, f.alice, "00000000-0000-7000-8000-000000000000", "ping", `{}`)
	if strings.Replace(fault.As(errBob).Message, s.ID, "X", 1) != strings.Replace(fault.As(errUnknown).Message, "00000000-0000-7000-8000-000000000000", "X", 1) {
		t.Errorf("a foreign session is told apart from an unknown one: %q vs %q", errBob, errUnknown)
	}

	// Use keeps the session alive past its first expiry.
	for range 3 {
		f.clk.add(50 * time.Second)
		c, live, err := f.m.Begin(ctx, f.alice, s.ID, "ping", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if exp, _ := live.ExpiresAt(); exp.Sub(f.clk.now()) != time.Minute {
			t.Fatalf("expiry not moved: %v (now %v)", exp, f.clk.now())
		}
		if err := c.Finish(ctx, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	// Idle past the timeout: expired, and the refused call is not journaled.
	f.clk.add(time.Minute)
	_, _, err = f.m.Begin(ctx, f.alice, s.ID, "ping", `{}`)
	wantCode(t, err, CodeExpired)
	j, err := f.st.Journal(ctx, s.ID)
	if err != nil || len(j) != 3 {
		t.Fatalf("journal %d entries, %v", len(j), err)
	}

	// Ended. (The store stamps a new session with the real time.)
	f.clk.mu.Lock()
	f.clk.t = time.Now()
	f.clk.mu.Unlock()
	s2, _ := f.m.Start(ctx, f.alice, "n", "c")
	if _, err := f.m.End(ctx, f.bob, s2.ID); fault.As(err).WireCode() != CodeNotFound {
		t.Fatalf("bob ended alice's session: %v", err)
	}
	ended, err := f.m.End(ctx, f.alice, s2.ID)
	if err != nil || ended.EndedAt.IsZero() {
		t.Fatalf("End: %+v %v", ended, err)
	}
	_, _, err = f.m.Begin(ctx, f.alice, s2.ID, "ping", `{}`)
	wantCode(t, err, CodeEnded)
	_, err = f.m.End(ctx, f.alice, s2.ID)
	wantCode(t, err, CodeEnded)
}

func TestNoIdleTimeout(t *testing.T) {
	f := newFixture(t, 0)
	ctx := t.Context()
	s, err := f.m.Start(ctx, f.alice, "stdio", "implicit")
	if err != nil {
		t.Fatal(err)
	}
	f.clk.add(1000 * time.Hour)
	c, _, err := f.m.Begin(ctx, f.alice, s.ID, "ping", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}
}

func TestJournalView(t *testing.T) {
	f := newFixture(t, time.Hour)
	ctx := t.Context()
	s, _ := f.m.Start(ctx, f.alice, "n", "c")
	c1, _, err := f.m.Begin(ctx, f.alice, s.ID, "auto_read_rows", `{"table":"notes","page_size":5}`)
	if err != nil {
		t.Fatal(err)
	}
	f.clk.add(1500 * time.Microsecond)
	if err := c1.Finish(ctx, nil, 5); err != nil {
		t.Fatal(err)
	}
	c2, _, err := f.m.Begin(ctx, f.alice, s.ID, "auto_insert_rows", `{"rows":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Finish(ctx, fault.New(fault.Forbidden, "insufficient permissions, got [reader]"), 0); err != nil {
		t.Fatal(err)
	}
	// A call that never finishes stays "running".
	if _, _, err := f.m.Begin(ctx, f.alice, s.ID, "auto_delete_rows", `{"all":true}`); err != nil {
		t.Fatal(err)
	}
	// An internal error keeps its cause out of the journal.
	c4, _, _ := f.m.Begin(ctx, f.alice, s.ID, "ping", `{}`)
	if err := c4.Finish(ctx, errors.New("driver: secret detail"), 0); err != nil {
		t.Fatal(err)
	}

	v, err := Journal(ctx, f.st, f.alice.ProjectID, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Session.ID != s.ID || v.Session.Identity != "alice" || v.Session.State != StateLive || v.Session.ExpiresAt == nil || v.Session.EndedAt != nil {
		t.Fatalf("session view %+v", v.Session)
	}
	want := []struct {
		tool, outcome string
		rows          int64
	}{{"auto_read_rows", "ok", 5}, {"auto_insert_rows", "FORBIDDEN", 0}, {"auto_delete_rows", OutcomeRunning, 0}, {"ping", "INTERNAL", 0}}
	if len(v.Calls) != len(want) {
		t.Fatalf("%d calls: %+v", len(v.Calls), v.Calls)
	}
	for i, w := range want {
		c := v.Calls[i]
		if c.Seq != int64(i+1) || c.Tool != w.tool || c.Outcome != w.outcome || c.Rows != w.rows {
			t.Errorf("call %d = %+v, want %+v", i, c, w)
		}
	}
	if v.Calls[0].DurationMS != 1.5 || string(v.Calls[0].Arguments) != `{"table":"notes","page_size":5}` {
		t.Errorf("call 1: %+v", v.Calls[0])
	}
	if !strings.Contains(v.Calls[1].Message, "[reader]") || strings.Contains(v.Calls[3].Message, "secret") {
		t.Errorf("messages: %q / %q", v.Calls[1].Message, v.Calls[3].Message)
	}
	b, err := json.Marshal(v)
	if err != nil || !strings.Contains(string(b), `"arguments":{"table":"notes","page_size":5}`) {
		t.Fatalf("json %s %v", b, err)
	}

	// Another project's admin sees nothing; the operator (no project) sees it.
	if _, err := Journal(ctx, f.st, f.other.ProjectID, s.ID); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("other project read the journal: %v", err)
	}
	if _, err := Journal(ctx, f.st, "", s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := Journal(ctx, f.st, "", "nope"); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("unknown session: %v", err)
	}

	// States.
	if _, err := f.m.End(ctx, f.alice, s.ID); err != nil {
		t.Fatal(err)
	}
	if v, _ := Journal(ctx, f.st, "", s.ID); v.Session.State != StateEnded || v.Session.EndedAt == nil || v.Session.ExpiresAt != nil {
		t.Fatalf("ended view %+v", v.Session)
	}
	old := New(f.st, time.Nanosecond)
	s3, _ := old.Start(ctx, f.alice, "n", "c")
	time.Sleep(time.Millisecond)
	if v, _ := Journal(ctx, f.st, "", s3.ID); v.Session.State != StateExpired {
		t.Fatalf("expired view %+v", v.Session)
	}
}
