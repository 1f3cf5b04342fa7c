package store

import (
	"testing"
	"time"
)

// benchSession opens a SQLite store in a temporary directory with one
// live session, and returns it with a read-only call of that session's
// owner to begin.
func benchSession(b *testing.B) (*Store, CallStart) {
	b.Helper()
	b.Setenv(EnvMasterKey, "")
	b.Setenv(EnvControlDSN, "")
	ctx := b.Context()
	s, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	o, err := s.CreateOrg(ctx, "Org b", "b")
	if err != nil {
		b.Fatal(err)
	}
	p, err := s.CreateProject(ctx, o.ID, "Project b", "b")
	if err != nil {
		b.Fatal(err)
	}
	sp, err := s.CreateSpace(ctx, p.ID, "main", false)
	if err != nil {
		b.Fatal(err)
	}
	id, err := s.CreateIdentity(ctx, Identity{ProjectID: p.ID, SpaceID: sp.ID, Name: "agent", Kind: KindMCP, KeyType: "crud", Enabled: true})
	if err != nil {
		b.Fatal(err)
	}
	ss, err := s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	return s, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, Tool: "auto_read_rows", Arguments: `{"table":"items","page_size":100}`}
}

// BenchmarkJournalReadCalls measures a read-only call's share of the
// session work, one call at a time: the check (BeginReadCall), the outcome
// (FinishReadCall) and the writer's transactions that write them
// (FlushJournal waits for them), every batch calls, so ns/op and allocs/op
// hold the writer's as well (go test -run - -bench JournalReadCalls
// -benchmem ./store). In "done" the outcomes come before the batch is
// written and ride in its entries; in "late" the entries are written
// first (a call that runs longer than the writer holds its entry back) and
// the outcomes in a transaction of their own.
func BenchmarkJournalReadCalls(b *testing.B) {
	for _, bc := range []struct {
		name  string
		batch int
		late  bool
	}{{"done/batch=16", 16, false}, {"done/batch=max", maxJournalBatch, false}, {"late/batch=16", 16, true}, {"late/batch=max", maxJournalBatch, true}} {
		b.Run(bc.name, func(b *testing.B) {
			s, c := benchSession(b)
			ctx := b.Context()
			fail := func(err error) { b.Error(err) }
			flush := func() {
				if err := s.FlushJournal(ctx); err != nil {
					b.Fatal(err)
				}
			}
			calls := make([]*ReadCall, 0, bc.batch)
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime()
			for i := range b.N {
				c.At = time.Now()
				_, rc, err := s.BeginReadCall(ctx, c)
				if err != nil {
					b.Fatal(err)
				}
				if !bc.late {
					s.FinishReadCall(rc, "ok", "", 100, time.Millisecond, fail)
				}
				calls = append(calls, rc)
				if len(calls) == bc.batch || i == b.N-1 {
					flush()
					if bc.late {
						for _, rc := range calls {
							s.FinishReadCall(rc, "ok", "", 100, time.Millisecond, fail)
						}
						flush()
					}
					calls = calls[:0]
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkSessionCheck measures the session check of a read-only call
// (checkSession) on SQLite: answered from the checker's last read while
// nothing was committed (unchanged), and read again (read: the checker
// forgets what it read before each check).
func BenchmarkSessionCheck(b *testing.B) {
	for _, bc := range []struct {
		name   string
		forget bool
	}{{"unchanged", false}, {"read", true}} {
		b.Run(bc.name, func(b *testing.B) {
			s, c := benchSession(b)
			ctx := b.Context()
			if _, err := s.checkSession(ctx, c.SessionID); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime()
			for range b.N {
				if bc.forget {
					s.checker.snap.Store(nil)
				}
				if _, err := s.checkSession(ctx, c.SessionID); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
