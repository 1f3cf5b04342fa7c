package dialecttest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Bounds of the failure tests. The statement timeout the suite sets is
// slowTimeout; conf_slow takes at least 3 s, so an answer within
// timeoutBound can only be the timeout's.
const (
	slowTimeout  = 500 * time.Millisecond
	timeoutBound = 2500 * time.Millisecond
	downBound    = 10 * time.Second // a call to a gone server must fail within this
	recoverBound = 15 * time.Second // and work again within this once it is back
)

// checkKind reports (without stopping the test) unless err is a
// *fault.Error of kind k.
func checkKind(t *testing.T, what string, err error, k fault.Kind) bool {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %s", what, k)
		return false
	}
	if got := fault.KindOf(err); got != k {
		t.Errorf("%s: error kind %s, want %s: %v", what, got, k, err)
		return false
	}
	return true
}

// testMissingTable addresses a table that is not there, as a request does
// when the engine's cached catalog is older than a DROP TABLE.
func (s *suite) testMissingTable(t *testing.T) {
	const missing = "conf_missing"
	ctx, cancel := ctxT()
	defer cancel()
	checkKind(t, "Read", readErr(ctx, s.src, s.readPlan(missing, nil, "name")), fault.NotFound)
	ins := s.writePlan(query.Insert, missing)
	ins.Columns, ins.Rows = []string{"name"}, [][]any{{"x"}}
	_, err := s.src.Write(ctx, ins)
	checkKind(t, "insert", err, fault.NotFound)
	up := s.writePlan(query.Update, missing)
	up.Set, up.Where = []query.Assign{{Column: "name", Value: "y"}}, cond("name", query.Eq, "x")
	_, err = s.src.Write(ctx, up)
	checkKind(t, "update", err, fault.NotFound)
	del := s.writePlan(query.Delete, missing)
	del.Where = cond("name", query.Eq, "x")
	_, err = s.src.Write(ctx, del)
	checkKind(t, "delete", err, fault.NotFound)
}

func (s *suite) slowPlan() *query.Plan {
	var cols []string
	for _, c := range s.tables[TableSlow].Columns {
		cols = append(cols, c.Name)
	}
	return s.readPlan(TableSlow, nil, cols...)
}

// testTimeout checks that a lapsed context and a statement timeout are
// Timeout, quickly, and leave the source usable.
func (s *suite) testTimeout(t *testing.T) {
	items := s.readPlan(TableItems, nil, "name")
	t.Run("expired context", func(t *testing.T) {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		checkKind(t, "Read", readErr(ctx, s.src, items), fault.Timeout)
		_, err := s.src.Write(ctx, s.insertWrites([]string{"name"}, []any{"late"}))
		checkKind(t, "Write", err, fault.Timeout)
		if n := s.count(t, TableWrites, cond("name", query.Eq, "late")); n != 0 {
			t.Errorf("a write refused for its expired context left %d rows", n)
		}
		readAll(t, s.src, items)
	})
	if s.h.Lacks.Timeout != "" {
		s.notTested(t, "statement timeout and deadline on a slow statement", "Timeout", s.h.Lacks.Timeout)
		return
	}
	slowly := func(t *testing.T, ctx context.Context, src dialects.Source) {
		t.Helper()
		start := time.Now()
		err := readErr(ctx, src, s.slowPlan())
		d := time.Since(start)
		checkKind(t, "reading conf_slow", err, fault.Timeout)
		if d > timeoutBound {
			t.Errorf("the timeout took %v to answer, want less than %v", d.Round(time.Millisecond), timeoutBound)
		}
		readAll(t, src, items) // the pool is still good
	}
	t.Run("statement timeout", func(t *testing.T) {
		cfg := s.h.Config
		cfg.StatementTimeout = slowTimeout
		src := s.open(t, cfg)
		ctx, cancel := ctxT()
		defer cancel()
		slowly(t, ctx, src)
	})
	t.Run("context deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), slowTimeout)
		defer cancel()
		slowly(t, ctx, s.src)
	})
}

// failsDown checks that a call fails as Unavailable, within downBound.
func failsDown(t *testing.T, what string, call func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*downBound)
	defer cancel()
	start := time.Now()
	err := call(ctx)
	if d := time.Since(start); d > downBound {
		t.Errorf("%s took %v to fail, want less than %v", what, d.Round(time.Millisecond), downBound)
	}
	checkKind(t, what, err, fault.Unavailable)
}

// everyCallDown checks Ping, Tables, Read and Write of src against a server
// that cannot be reached.
func (s *suite) everyCallDown(t *testing.T, src dialects.Source, why string) {
	t.Helper()
	failsDown(t, "Ping "+why, src.Ping)
	failsDown(t, "Tables "+why, func(ctx context.Context) error { _, err := src.Tables(ctx); return err })
	failsDown(t, "Read "+why, func(ctx context.Context) error {
		return readErr(ctx, src, s.readPlan(TableItems, nil, "name"))
	})
	failsDown(t, "Write "+why, func(ctx context.Context) error {
		_, err := src.Write(ctx, s.insertWrites([]string{"name"}, []any{"outage"}))
		return err
	})
}

// testOutage routes a source through a proxy, cuts it in the middle of a
// statement and between statements, and restores it: the cut calls are
// Unavailable, and the same source works again once the server is back.
func (s *suite) testOutage(t *testing.T) {
	px, cfg, ok := s.proxied(t, "the server going away and coming back")
	if !ok {
		return
	}
	src := s.open(t, cfg)
	itemsPlan := s.readPlan(TableItems, nil, "name")
	if _, rows := readAll(t, src, itemsPlan); len(rows) != len(items) {
		t.Fatalf("through the proxy: %d rows, want %d", len(rows), len(items))
	}

	if s.h.Lacks.Timeout == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*downBound)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- readErr(ctx, src, s.slowPlan()) }()
		time.Sleep(300 * time.Millisecond) // the read is on the wire
		start := time.Now()
		px.Cut()
		err := <-errc
		if d := time.Since(start); d > downBound {
			t.Errorf("a read cut mid-request took %v to fail", d.Round(time.Millisecond))
		}
		checkKind(t, "a read cut mid-request", err, fault.Unavailable)
	} else {
		px.Cut()
		s.notTested(t, "a request cut mid-way (needs conf_slow)", "Timeout", s.h.Lacks.Timeout)
	}
	s.everyCallDown(t, src, "while the server is gone")

	px.Restore()
	recovers(t, src, itemsPlan)
	ctx, cancel := ctxT()
	defer cancel()
	if err := src.Ping(ctx); err != nil {
		t.Errorf("Ping after recovery: %v", err)
	}
	if _, err := src.Tables(ctx); err != nil {
		t.Errorf("Tables after recovery: %v", err)
	}
	if n := s.count(t, TableWrites, cond("name", query.Eq, "outage")); n != 0 {
		t.Errorf("a write that failed during the outage left %d rows", n)
	}
}

// frozenBound is how long a call to a frozen server may take: the suite's
// statement timeout, the gateway's grace on it, and some slack for the
// machine.
const frozenBound = slowTimeout + dialects.TimeoutGrace + time.Second

// testFrozen routes a source with a statement timeout (500 ms) through a
// proxy and freezes it: the server keeps its connections, and accepts new
// ones, but answers nothing, as a hung server or a dead link does. Ping,
// Tables, Read and Write, made with no deadline of their own, must each
// fail as Timeout within the statement timeout plus dialects.TimeoutGrace:
// the server's own statement timeout never comes, so the bound must be
// the gateway's. Once thawed, the same source works again.
func (s *suite) testFrozen(t *testing.T) {
	px, cfg, ok := s.proxied(t, "a server that stops answering")
	if !ok {
		return
	}
	cfg.StatementTimeout = slowTimeout
	src := s.open(t, cfg)
	itemsPlan := s.readPlan(TableItems, nil, "name")
	readAll(t, src, itemsPlan)
	if _, err := src.Tables(context.Background()); err != nil {
		t.Fatalf("Tables through the proxy: %v", err)
	}

	px.Freeze()
	hangs := func(what string, call func(ctx context.Context) error) {
		t.Helper()
		// The context only keeps a hanging dialect from stalling the run:
		// it ends long after frozenBound.
		ctx, cancel := context.WithTimeout(context.Background(), 4*frozenBound)
		defer cancel()
		start := time.Now()
		err := call(ctx)
		d := time.Since(start)
		checkKind(t, what+" of a frozen server", err, fault.Timeout)
		if d > frozenBound {
			t.Errorf("%s of a frozen server took %v to fail, want less than %v (statement timeout %v + grace %v)",
				what, d.Round(time.Millisecond), frozenBound, slowTimeout, dialects.TimeoutGrace)
		}
	}
	hangs("Read", func(ctx context.Context) error { return readErr(ctx, src, itemsPlan) })
	hangs("Write", func(ctx context.Context) error {
		_, err := src.Write(ctx, s.insertWrites([]string{"name"}, []any{"frozen"}))
		return err
	})
	hangs("Tables", func(ctx context.Context) error { _, err := src.Tables(ctx); return err })
	hangs("Ping", src.Ping)
	if r, ok := src.(dialects.Runner); ok {
		st := dialects.Stmt{SQL: "SELECT 1"}
		hangs("RunRead", func(ctx context.Context) error {
			rows, err := r.RunRead(ctx, st)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			err = rows.Err()
			if cerr := rows.Close(); err == nil {
				err = cerr
			}
			return err
		})
		hangs("RunWrite", func(ctx context.Context) error { _, err := r.RunWrite(ctx, []dialects.Stmt{st}); return err })
	}

	px.Thaw()
	recovers(t, src, itemsPlan)
	if n := s.count(t, TableWrites, cond("name", query.Eq, "frozen")); n > 1 {
		t.Errorf("a write that timed out on a frozen server left %d rows, want at most 1", n)
	}
}

// proxied starts a proxy to the harness's server and returns it with the
// harness's config routed through it, on a pool of 2; under Lacks.Outage it
// logs that what is not tested and returns false.
func (s *suite) proxied(t *testing.T, what string) (*Proxy, dialects.Config, bool) {
	t.Helper()
	if s.h.Lacks.Outage != "" {
		s.notTested(t, what, "Outage", s.h.Lacks.Outage)
		return nil, dialects.Config{}, false
	}
	px := StartProxy(t, s.h.Addr)
	cfg := s.h.Config
	cfg.DSN = s.h.ViaProxy(px.Addr())
	cfg.MaxConns = 2
	return px, cfg, true
}

// recovers waits until src reads p again, which it must within
// recoverBound of the server's return.
func recovers(t *testing.T, src dialects.Source, p *query.Plan) {
	t.Helper()
	deadline := time.Now().Add(recoverBound)
	tries := 0
	for {
		tries++
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := readErr(ctx, src, p)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the source did not recover within %v of the server's return: %v", recoverBound, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the source answered again after %d attempt(s)", tries)
}

// testUnreachable opens a source on an address where nothing listens.
func (s *suite) testUnreachable(t *testing.T) {
	if s.h.Lacks.Outage != "" {
		s.notTested(t, "an unreachable server", "Outage", s.h.Lacks.Outage)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cfg := s.h.Config
	cfg.DSN = s.h.ViaProxy(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*downBound)
	defer cancel()
	src, err := dialects.Open(ctx, s.h.Type, cfg)
	if err != nil {
		// A dialect may connect in Open; then Open is where it fails.
		checkKind(t, "Open", err, fault.Unavailable)
		return
	}
	defer src.Close()
	s.everyCallDown(t, src, "of an unreachable server")
}

// testClosed checks that a closed source refuses work as Unavailable and
// that Close may be called again.
func (s *suite) testClosed(t *testing.T) {
	src := s.open(t, s.h.Config)
	items := s.readPlan(TableItems, nil, "name")
	readAll(t, src, items)
	if err := src.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx, cancel := ctxT()
	defer cancel()
	checkKind(t, "Read after Close", readErr(ctx, src, items), fault.Unavailable)
	checkKind(t, "Ping after Close", src.Ping(ctx), fault.Unavailable)
	_, err := src.Tables(ctx)
	checkKind(t, "Tables after Close", err, fault.Unavailable)
	_, err = src.Write(ctx, s.insertWrites([]string{"name"}, []any{"closed"}))
	checkKind(t, "Write after Close", err, fault.Unavailable)
	if err := src.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
