package pg_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/pg"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// callConfigs are the ways a call is bounded: as the gateway runs it (an
// acquire timeout and a statement timeout), without an acquire timeout,
// and with neither (the caller's context alone).
var callConfigs = []struct {
	name string
	cfg  dialects.Config
}{
	{"acquire and statement timeouts", dialects.Config{AcquireTimeout: 5 * time.Second, StatementTimeout: 30 * time.Second}},
	{"statement timeout", dialects.Config{StatementTimeout: 30 * time.Second}},
	{"no timeouts", dialects.Config{}},
}

// TestCallCuts: a call watches its caller's context itself and pgx does
// not (the call's Done is nil); when the call ends, it cuts its
// connection as pgx would. Each way a call ends still ends what it ended
// and answers as before:
//
//   - the caller's context ended while the statement runs (a client that
//     went away): the call answers at once, as canceled, and PostgreSQL
//     stops running the statement;
//   - the call's deadline passed while the server still runs the
//     statement: the call answers at the deadline, as timed out, and
//     PostgreSQL stops running it;
//   - the caller's context ended while the call waits for a connection,
//     or before the call: canceled, and the pool serves the next call;
//   - the acquire timeout passed: pool exhausted, as a deadline.
func TestCallCuts(t *testing.T) {
	db := newTestDB(t)
	db.exec(t, `CREATE VIEW sleepy AS SELECT 1 AS x FROM pg_sleep(30)`)
	db.exec(t, `CREATE TABLE t (id int PRIMARY KEY)`)
	db.exec(t, `INSERT INTO t VALUES (1), (2)`)
	sleepy := &query.Plan{Action: query.Read, Schema: db.schema, Table: "sleepy", Columns: []string{"x"}}
	read := &query.Plan{Action: query.Read, Schema: db.schema, Table: "t", Columns: []string{"id"}}
	// running tells how many of the server's sessions run a read of
	// sleepy.
	running := func(t *testing.T) int {
		t.Helper()
		var n int
		err := db.admin.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%sleepy%'`, db.schema).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// stopped waits until the server runs no read of sleepy.
	stopped := func(t *testing.T) {
		t.Helper()
		for try := 0; running(t) > 0; try++ {
			if try == 100 {
				t.Fatal("PostgreSQL still runs the statement 5s after the call ended")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// readSleepy reads sleepy under ctx, and says what it answered and
	// after how long.
	readSleepy := func(ctx context.Context, src dialects.Source) (error, time.Duration) {
		start := time.Now()
		rows, err := src.Read(ctx, sleepy)
		if err == nil {
			err = rows.Close()
		}
		return err, time.Since(start)
	}
	want := func(t *testing.T, err error, kind fault.Kind, msg string, is error) {
		t.Helper()
		wantKind(t, err, kind)
		if m := fault.As(err).Message; m != msg {
			t.Errorf("message %q, want %q", m, msg)
		}
		if !errors.Is(err, is) {
			t.Errorf("%v is not %v", err, is)
		}
	}

	for _, cc := range callConfigs {
		t.Run(cc.name, func(t *testing.T) {
			t.Run("client gone", func(t *testing.T) {
				src := db.open(t, cc.cfg)
				if err := readAll(src, read); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(300*time.Millisecond, cancel)
				err, took := readSleepy(ctx, src)
				want(t, err, fault.Timeout, "database operation canceled", context.Canceled)
				if took > 5*time.Second {
					t.Errorf("answered after %v", took)
				}
				stopped(t)
				if err := readAll(src, read); err != nil {
					t.Fatalf("after: %v", err)
				}
			})
			// A call watches its caller's context only once it has run
			// for pg.WatchAfter: a client gone sooner has its statement
			// cut then, not at once, and no later.
			t.Run("client gone at once", func(t *testing.T) {
				src := db.open(t, cc.cfg)
				if err := readAll(src, read); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(time.Millisecond, cancel)
				err, took := readSleepy(ctx, src)
				want(t, err, fault.Timeout, "database operation canceled", context.Canceled)
				t.Logf("answered after %v", took)
				if most := pg.WatchAfter + 500*time.Millisecond; took > most {
					t.Errorf("answered after %v, want at most %v", took, most)
				}
				stopped(t)
				if err := readAll(src, read); err != nil {
					t.Fatalf("after: %v", err)
				}
			})
			t.Run("canceled before", func(t *testing.T) {
				src := db.open(t, cc.cfg)
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_, err := src.Read(ctx, read)
				want(t, err, fault.Timeout, "database operation canceled", context.Canceled)
				if err := readAll(src, read); err != nil {
					t.Fatalf("after: %v", err)
				}
			})
			t.Run("client gone while waiting", func(t *testing.T) {
				cfg := cc.cfg
				cfg.MaxConns = 1
				src := db.open(t, cfg)
				rows, err := src.Read(context.Background(), read) // holds the one connection
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(200*time.Millisecond, cancel)
				start := time.Now()
				_, err = src.Read(ctx, read)
				want(t, err, fault.Timeout, "database operation canceled", context.Canceled)
				if took := time.Since(start); took > 2*time.Second {
					t.Errorf("answered after %v", took)
				}
				if err := rows.Close(); err != nil {
					t.Fatal(err)
				}
				if err := readAll(src, read); err != nil {
					t.Fatalf("after: %v", err)
				}
			})
			// The call's end, past the call, reaches nothing: not the
			// connection, which the next call has.
			t.Run("late end", func(t *testing.T) {
				cfg := cc.cfg
				cfg.MaxConns = 1
				src := db.open(t, cfg)
				for range 3 {
					if err := pg.CallThenLateEnd(src); err != nil {
						t.Fatal(err)
					}
					if err := readAll(src, read); err != nil {
						t.Fatalf("the next call: %v", err)
					}
				}
			})
			// A call cut between statements gives its connection back
			// without the deadline that cut it.
			t.Run("cut between statements", func(t *testing.T) {
				cfg := cc.cfg
				cfg.MaxConns = 1
				src := db.open(t, cfg)
				if err := pg.CallThenCut(src); err != nil {
					t.Fatal(err)
				}
				if err := readAll(src, read); err != nil {
					t.Fatalf("the next call: %v", err)
				}
				if st := src.(dialects.Stats).PoolStats(); st.Idle+st.Acquired != 1 {
					t.Errorf("pool %+v, want the cut connection kept", st)
				}
			})
		})
	}

	t.Run("call deadline", func(t *testing.T) {
		// The server has no statement_timeout; the call's deadline
		// (200ms and the 1s grace) ends the statement.
		src := db.open(t, dialects.Config{AcquireTimeout: 5 * time.Second})
		pg.CallTimeout(src, 200*time.Millisecond)
		if err := readAll(src, read); err != nil {
			t.Fatal(err)
		}
		err, took := readSleepy(context.Background(), src)
		want(t, err, fault.Timeout, "database operation timed out", context.DeadlineExceeded)
		if took < time.Second || took > 3*time.Second {
			t.Errorf("answered after %v, want about 1.2s", took)
		}
		stopped(t)
		if err := readAll(src, read); err != nil {
			t.Fatalf("after: %v", err)
		}
	})

	t.Run("acquire timeout", func(t *testing.T) {
		src := db.open(t, dialects.Config{MaxConns: 1, AcquireTimeout: 200 * time.Millisecond, StatementTimeout: 30 * time.Second})
		rows, err := src.Read(context.Background(), read)
		if err != nil {
			t.Fatal(err)
		}
		err = readAll(src, read)
		wantKind(t, err, fault.Timeout)
		if m := fault.As(err).Message; !strings.HasPrefix(m, "connection pool exhausted") {
			t.Errorf("message %q", m)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%v is not %v", err, context.DeadlineExceeded)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if err := readAll(src, read); err != nil {
			t.Fatalf("after: %v", err)
		}
	})
}
