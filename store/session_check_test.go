package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// holdFirstRead makes the next check read of s wait, after it has read and
// before it answers, until the returned release is called; read is closed
// once that read has run. Later reads report their ids on reads.
func holdFirstRead(t *testing.T, s *Store) (read <-chan struct{}, release func(), reads <-chan []string) {
	t.Helper()
	readc, relc := make(chan struct{}), make(chan struct{})
	idsc := make(chan []string, 16)
	var once sync.Once
	first := true
	s.checker.afterRead = func(ids []string) {
		if first {
			first = false
			close(readc)
			<-relc
			return
		}
		idsc <- slices.Clone(ids)
	}
	release = func() { once.Do(func() { close(relc) }) }
	t.Cleanup(release)
	return readc, release, idsc
}

func TestSessionCheckAfterEnd(t *testing.T) { eachBackend(t, testSessionCheckAfterEnd) }

// testSessionCheckAfterEnd: a read-only call that arrives while a check
// read of its session is in flight, after the session was ended through
// another Store on the same control plane (another replica, or a stdio
// process on the same file), is refused: it does not share the read in
// flight, which started before the end, but waits for the next one. The
// call whose read it was, which arrived before the end, is taken.
func testSessionCheckAfterEnd(t *testing.T) {
	s, dir := newStore(t)
	other := openStore(t, dir)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "g")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour}))
	begin := func() error {
		_, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`})
		if err == nil {
			s.FinishReadCall(rc, "ok", "", 0, 0, func(err error) { t.Errorf("journal: %v", err) })
		}
		return err
	}
	read, release, _ := holdFirstRead(t, s)
	first := make(chan error, 1)
	go func() { first <- begin() }()
	<-read // the first call's read has run: the session was live
	if err := other.EndSession(ctx, ss.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() { second <- begin() }()
	select {
	case err := <-second:
		t.Fatalf("a call that arrived while a read was in flight was answered before it: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	if err := <-first; err != nil {
		t.Fatalf("the call read before the end: %v", err)
	}
	var r *SessionRefused
	if err := <-second; !errors.As(err, &r) || r.Reason != RefusedEnded {
		t.Fatalf("the call that arrived after the end: %v, want the session ended", err)
	}
	if j := must[[]JournalEntry](t)(s.Journal(ctx, ss.ID)); len(j) != 1 {
		t.Fatalf("%d entries, want 1", len(j))
	}
}

func TestSessionCheckGrouped(t *testing.T) { eachBackend(t, testSessionCheckGrouped) }

// testSessionCheckGrouped: calls on several sessions that arrive while a
// check read is in flight share the next read, one statement for all their
// sessions, and each is answered by its own session's state: live, ended
// through another Store, idled out, owned by another identity, unknown.
// A caller that stops waiting gets a timeout, and the others their answer.
func testSessionCheckGrouped(t *testing.T) {
	s, dir := newStore(t)
	other := openStore(t, dir)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "g")
	_, id2 := sessionOwner(t, s, "h")
	open := func(idle time.Duration) Session {
		return must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: idle}))
	}
	live, live2, ended, idled := open(time.Hour), open(0), open(time.Hour), open(time.Millisecond)
	theirs := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: id2.ProjectID, IdentityID: id2.ID, Name: "n", Context: "c"}))
	if err := other.EndSession(ctx, ended.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // idled idles out
	const unknown = "00000000-0000-0000-0000-000000000000"

	read, release, reads := holdFirstRead(t, s)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, _, err := s.BeginReadCall(ctx, CallStart{SessionID: live.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`}); err != nil {
			t.Errorf("the call read first: %v", err)
		}
	})
	<-read
	cases := []struct {
		session string
		want    Refusal
	}{
		{live.ID, 0}, {live2.ID, 0}, {live.ID, 0}, {ended.ID, RefusedEnded}, {idled.ID, RefusedExpired},
		{theirs.ID, RefusedUnknown}, {unknown, RefusedUnknown}, {live2.ID, 0},
	}
	errs := make([]error, len(cases))
	for i, c := range cases {
		wg.Go(func() {
			_, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: c.session, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`})
			if err == nil {
				s.FinishReadCall(rc, "ok", "", 0, 0, func(err error) { t.Errorf("journal: %v", err) })
			}
			errs[i] = err
		})
	}
	gone, cancel := context.WithCancel(ctx)
	quit := make(chan error, 1)
	go func() {
		_, _, err := s.BeginReadCall(gone, CallStart{SessionID: live.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`})
		quit <- err
	}()
	time.Sleep(50 * time.Millisecond) // every call is waiting
	cancel()
	if err := <-quit; fault.KindOf(err) != fault.Timeout {
		t.Fatalf("a caller that stopped waiting: %v, want a timeout", err)
	}
	release()
	wg.Wait()
	for i, c := range cases {
		var r *SessionRefused
		switch {
		case c.want == 0 && errs[i] != nil:
			t.Errorf("call %d: %v, want it taken", i, errs[i])
		case c.want != 0 && (!errors.As(errs[i], &r) || r.Reason != c.want):
			t.Errorf("call %d: %v, want refusal %d", i, errs[i], c.want)
		}
	}
	ids := <-reads
	slices.Sort(ids)
	want := []string{live.ID, live2.ID, ended.ID, idled.ID, theirs.ID, unknown}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("the next read covered %v, want every session named once: %v", ids, want)
	}
	select {
	case more := <-reads:
		t.Fatalf("another read, of %v: the waiting calls did not share one", more)
	default:
	}
	if j := must[[]JournalEntry](t)(s.Journal(ctx, live.ID)); len(j) != 3 {
		t.Fatalf("%d entries in the live session, want 3", len(j))
	}
}

// TestSessionCheckMany: more sessions than one read covers, checked at
// once, each get their own answer.
func TestSessionCheckMany(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "m")
	n := 2*maxCheckIDs + 5
	ids := make([]string, n)
	for i := range ids {
		ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c"}))
		ids[i] = ss.ID
		if i%3 == 0 {
			if err := s.EndSession(ctx, ss.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for i, sid := range ids {
		wg.Go(func() {
			got, err := s.checkSession(ctx, sid)
			if err != nil || got.ID != sid || got.EndedAt.IsZero() != (i%3 != 0) {
				t.Errorf("session %d: %+v, %v", i, got, err)
			}
		})
	}
	wg.Wait()
}

// TestSessionCheckOwnConn: on SQLite the check reads run on a connection of
// their own; when it fails, the read runs through the pool and the next
// one on a new connection, each answering the session's state.
func TestSessionCheckOwnConn(t *testing.T) {
	t.Setenv(EnvControlDSN, "")
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "o")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c"}))
	check := func(ended bool) {
		t.Helper()
		got, err := s.checkSession(ctx, ss.ID)
		if err != nil || got.ID != ss.ID || got.EndedAt.IsZero() == ended {
			t.Fatalf("check: %+v, %v", got, err)
		}
	}
	check(false)
	c := &s.checker
	c.rawMu.Lock()
	conn := c.conn
	c.rawMu.Unlock()
	if conn == nil {
		t.Fatal("the check read did not keep a connection of its own")
	}
	conn.Close() // as if it failed
	if err := s.EndSession(ctx, ss.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	check(true)
	c.rawMu.Lock()
	if c.conn != nil {
		t.Error("the failed connection was kept")
	}
	c.rawMu.Unlock()
	check(true)
	c.rawMu.Lock()
	if c.conn == nil || c.conn == conn {
		t.Error("no new connection of its own after the failed one")
	}
	c.rawMu.Unlock()
}

// TestSessionCheckUnchanged: on SQLite a check while nothing was committed
// since the checker's last read is answered without a read, and a commit —
// through another Store, or by another process on the same file — makes the
// next check read again and see it: an ended session is refused at once,
// an unknown one stays unknown.
func TestSessionCheckUnchanged(t *testing.T) {
	t.Setenv(EnvControlDSN, "")
	s, dir := newStore(t)
	other := openStore(t, dir)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "u")
	var mu sync.Mutex
	reads := 0
	s.checker.afterRead = func([]string) {
		mu.Lock()
		reads++
		mu.Unlock()
	}
	readsSoFar := func() int {
		mu.Lock()
		defer mu.Unlock()
		return reads
	}
	const unknown = "00000000-0000-0000-0000-000000000000"
	check := func(sid string, want Refusal) {
		t.Helper()
		_, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: sid, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`})
		var r *SessionRefused
		switch {
		case want == 0 && err != nil:
			t.Fatalf("check of %s: %v, want it taken", sid, err)
		case want != 0 && (!errors.As(err, &r) || r.Reason != want):
			t.Fatalf("check of %s: %v, want refusal %d", sid, err, want)
		}
		if rc != nil {
			s.FinishReadCall(rc, "ok", "", 0, 0, func(err error) { t.Errorf("journal: %v", err) })
		}
	}
	// settle lets the journal writer commit what the checks queued, then
	// reads once more: the header the checker keeps is the last one.
	settle := func(sids ...string) {
		t.Helper()
		if err := s.FlushJournal(ctx); err != nil {
			t.Fatal(err)
		}
		for _, sid := range sids {
			if _, err := s.checkSession(ctx, sid); err != nil && fault.KindOf(err) != fault.NotFound {
				t.Fatal(err)
			}
		}
	}
	byOther := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour}))
	byProcess := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour}))
	check(byOther.ID, 0)
	settle(byOther.ID, byProcess.ID, unknown)
	settle(byOther.ID, byProcess.ID, unknown)
	before := readsSoFar()
	for range 5 {
		for _, sid := range []string{byOther.ID, byProcess.ID, unknown} {
			if _, err := s.checkSession(ctx, sid); err != nil && (sid != unknown || fault.KindOf(err) != fault.NotFound) {
				t.Fatalf("check of %s: %v", sid, err)
			}
		}
	}
	if n := readsSoFar() - before; n != 0 {
		t.Fatalf("%d reads while nothing was committed, want none", n)
	}

	if err := other.EndSession(ctx, byOther.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	check(byOther.ID, RefusedEnded)
	check(byProcess.ID, 0)
	check(unknown, RefusedUnknown)
	settle(byOther.ID, byProcess.ID, unknown)

	// Another process ends the other session (endSessionProcess).
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestEndSessionProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envEndDir+"="+dir, envEndSession+"="+byProcess.ID, EnvControlDSN+"=", EnvMasterKey+"=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the other process: %v\n%s", err, out)
	}
	check(byProcess.ID, RefusedEnded)
	check(unknown, RefusedUnknown)
}

// The directory and the session TestEndSessionProcess ends, when it runs
// as the other process of TestSessionCheckUnchanged.
const (
	envEndDir     = "MINIMAL_TEST_END_SESSION_DIR"
	envEndSession = "MINIMAL_TEST_END_SESSION"
)

// TestEndSessionProcess is the other process of TestSessionCheckUnchanged:
// it ends a session in the control plane of a directory, and is skipped
// otherwise.
func TestEndSessionProcess(t *testing.T) {
	dir, sid := os.Getenv(envEndDir), os.Getenv(envEndSession)
	if dir == "" || sid == "" {
		t.Skip("runs as the other process of TestSessionCheckUnchanged")
	}
	s := openStore(t, dir)
	if err := s.EndSession(t.Context(), sid, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkReadCalls measures the store's CPU per read-only call on the
// SQLite control plane, as the MCP face makes them: 16 calls at a time in
// one session, each checked, run for a while, and finished (go test -run -
// -bench ReadCalls -benchtime 20000x ./store). In tool=1ms each call runs
// for about a millisecond and the next follows at once; in spread, as
// under a load over HTTP, a call runs for 0.5 to 4 ms and its client's
// next call comes 0 to 4 ms after it (the answer, the client), so that the
// calls of the session come unevenly, with gaps; in slow a call runs for
// 2 to 14 ms, as when the gateway's CPU is busy. cpu-µs/call is the
// process's user and system time over the calls; commits/call and
// updates/call the journal writer's transactions and outcome UPDATEs.
func BenchmarkReadCalls(b *testing.B) {
	for _, bc := range []struct {
		name       string
		tool, next func() time.Duration
	}{
		{"tool=1ms", func() time.Duration { return time.Millisecond }, func() time.Duration { return 0 }},
		{"spread", func() time.Duration { return 500*time.Microsecond + rand.N(3500*time.Microsecond) },
			func() time.Duration { return rand.N(4 * time.Millisecond) }},
		{"slow", func() time.Duration { return 2*time.Millisecond + rand.N(12*time.Millisecond) },
			func() time.Duration { return rand.N(4 * time.Millisecond) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := b.Context()
			s, call := benchSession(b)
			b.SetParallelism(16 / runtime.GOMAXPROCS(0))
			commits, updates := journalCounts.commits.Load(), journalCounts.updates.Load()
			start := cpuTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c := call
					c.At = time.Now()
					_, rc, err := s.BeginReadCall(ctx, c)
					if err != nil {
						b.Error(err)
						return
					}
					time.Sleep(bc.tool())
					s.FinishReadCall(rc, "ok", "", 100, time.Millisecond, func(err error) { b.Error(err) })
					if d := bc.next(); d > 0 {
						time.Sleep(d)
					}
				}
			})
			if err := s.FlushJournal(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/call")
			b.ReportMetric(float64(journalCounts.commits.Load()-commits)/float64(b.N), "commits/call")
			b.ReportMetric(float64(journalCounts.updates.Load()-updates)/float64(b.N), "updates/call")
		})
	}
}
