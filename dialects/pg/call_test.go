package pg

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCallTimers: calls share their timers (callTimer, timers), and still
// each ends at its own deadline, never before it, and not at another
// call's: a timer given back is set again for the call that takes it, and
// one that went off is not given back.
func TestCallTimers(t *testing.T) {
	bg := context.Background()
	hour := time.Now().Add(time.Hour)

	t.Run("set again", func(t *testing.T) {
		a := startCall(bg, time.Now().Add(50*time.Millisecond))
		a.end()                  // gives its timer back
		b := startCall(bg, hour) // likely a's timer
		defer b.end()
		c := startCall(bg, time.Now().Add(20*time.Millisecond))
		select {
		case <-c.wait().Done():
		case <-time.After(5 * time.Second):
			t.Fatal("c did not end at its deadline")
		}
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("c: %v", c.Err())
		}
		time.Sleep(50 * time.Millisecond) // past a's deadline
		if err := b.Err(); err != nil {
			t.Fatalf("b ended with a or c: %v", err)
		}
		if err := a.Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("a, ended before its deadline: %v", err)
		}
		c.end()
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("c after end: %v", c.Err())
		}
	})

	t.Run("gone off", func(t *testing.T) {
		a := startCall(bg, time.Now().Add(time.Millisecond))
		<-a.wait().Done()
		if !a.expired {
			t.Fatal("a ended at its deadline and is not expired")
		}
		a.end()
		b := startCall(bg, hour)
		time.Sleep(10 * time.Millisecond)
		if err := b.Err(); err != nil {
			t.Fatalf("b: %v", err)
		}
		b.end()
		if !errors.Is(b.Err(), context.Canceled) {
			t.Fatalf("b after end: %v", b.Err())
		}
	})

	// Many calls at once, each moved to a later deadline and ended at
	// random against its timer: none ends before its deadline, and each
	// whose deadline passed has ended.
	t.Run("at once", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 300 {
					oneCall(t)
				}
			})
		}
		wg.Wait()
	})
}

// startCall is a call of ctx ending at deadline (call.start).
func startCall(ctx context.Context, deadline time.Time) *call {
	c := new(call)
	c.start(ctx, time.Now(), deadline)
	return c
}

// oneCall runs a call through start, attach and end with short random
// deadlines, and checks that it ended when and as it should.
func oneCall(t *testing.T) {
	d := func() time.Duration { return time.Duration(rand.IntN(300)) * time.Microsecond }
	deadline := time.Now().Add(d())
	c := startCall(context.Background(), deadline)
	time.Sleep(d())
	if later := deadline.Add(d()); c.attach(nil, later) {
		deadline = later
		time.Sleep(d())
	}
	if errors.Is(c.Err(), context.DeadlineExceeded) && time.Now().Before(deadline) {
		t.Errorf("ended %v before its deadline", time.Until(deadline))
	}
	if rand.IntN(2) == 0 {
		c.end()
		return
	}
	time.Sleep(time.Until(deadline))
	select {
	case <-c.wait().Done():
	case <-time.After(5 * time.Second):
		t.Errorf("not ended 5s after its deadline")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Errorf("ended past its deadline with %v", c.Err())
	}
	c.end()
}

// watched is a caller's context that counts the calls of its Done: a
// call that watches it (context.AfterFunc) asks for its Done channel.
type watched struct {
	context.Context
	dones atomic.Int32
}

func (w *watched) Done() <-chan struct{} {
	w.dones.Add(1)
	return w.Context.Done()
}

// TestCallWatchesLate: a call watches its caller's context only once it
// has run for watchAfter (or reached the caller's deadline). A call done
// before never asks for the caller's Done channel and allocates nothing;
// a caller that goes away before watchAfter ends the call at watchAfter,
// one that goes away after it ends the call at once, and a caller's
// deadline ends the call when it passes, even before watchAfter.
func TestCallWatchesLate(t *testing.T) {
	hour := time.Now().Add(time.Hour)
	// within is how late past its due time a call may end on a busy
	// machine.
	const within = 500 * time.Millisecond
	ended := func(t *testing.T, c *call, after time.Time, least time.Duration, want error) {
		t.Helper()
		select {
		case <-c.wait().Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the call did not end")
		}
		took := time.Since(after)
		if !errors.Is(c.Err(), want) {
			t.Errorf("ended with %v, want %v", c.Err(), want)
		}
		if took < least || took > least+within {
			t.Errorf("ended %v after, want between %v and %v", took, least, least+within)
		}
		c.end()
	}

	t.Run("done before", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := &watched{Context: parent}
		c := new(call)           // the memory of each call (Read's readCall)
		startCall(w, hour).end() // a timer for timers
		allocs := testing.AllocsPerRun(100, func() {
			*c = call{}
			c.start(w, time.Now(), hour)
			if !c.attach(nil, hour) {
				t.Fatal("the call ended")
			}
			c.end()
		})
		if allocs != 0 && !raceOn {
			t.Errorf("%v allocations a call, want none", allocs)
		}
		if n := w.dones.Load(); n != 0 {
			t.Errorf("the caller's Done asked for %d times", n)
		}
	})

	t.Run("gone early", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		start := time.Now()
		c := new(call)
		c.start(parent, start, hour)
		cancel()
		ended(t, c, start, watchAfter, context.Canceled)
	})

	t.Run("gone late", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		w := &watched{Context: parent}
		c := startCall(w, hour)
		time.Sleep(2 * watchAfter)
		if w.dones.Load() == 0 {
			t.Error("the call does not watch its caller after watchAfter")
		}
		gone := time.Now()
		cancel()
		ended(t, c, gone, 0, context.Canceled)
	})

	t.Run("caller's deadline", func(t *testing.T) {
		start := time.Now()
		parent, cancel := context.WithDeadline(context.Background(), start.Add(watchAfter/5))
		defer cancel()
		c := new(call)
		c.start(parent, start, hour)
		// The call ends at the caller's deadline, as the caller's
		// context does (its timer, not the call's, may go off last).
		ended(t, c, start, watchAfter/5, context.DeadlineExceeded)
	})

	t.Run("ended before", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		cancel()
		c := startCall(parent, hour)
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("a call of an ended caller: %v", c.Err())
		}
		c.end()
	})
}

// BenchmarkCall is a call's own cost, the database aside: a call of a
// context of its own (a cancelCtx, as a server request has), started,
// given its connection's deadline and ended, as acquireBound and the
// lease's done run it for a read of one row.
func BenchmarkCall(b *testing.B) {
	c := new(call) // the memory of each call (Read's readCall)
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		now := time.Now()
		*c = call{}
		c.start(ctx, now, now.Add(5*time.Second))
		if !c.attach(nil, now.Add(31*time.Second)) {
			b.Fatal("the call ended")
		}
		c.end()
		cancel()
	}
}
