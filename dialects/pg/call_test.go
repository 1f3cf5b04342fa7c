package pg

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
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
		a := startCall(bg, hour)
		if !a.stopTimer() {
			t.Fatal("a's timer went off")
		}
		b := startCall(bg, hour) // likely a's timer
		defer b.end()
		a.setDeadline(time.Now().Add(20 * time.Millisecond))
		select {
		case <-a.wait().Done():
		case <-time.After(5 * time.Second):
			t.Fatal("a did not end at its deadline")
		}
		if !errors.Is(a.Err(), context.DeadlineExceeded) {
			t.Fatalf("a: %v", a.Err())
		}
		time.Sleep(20 * time.Millisecond)
		if err := b.Err(); err != nil {
			t.Fatalf("b ended with a: %v", err)
		}
		a.end()
		if !errors.Is(a.Err(), context.DeadlineExceeded) {
			t.Fatalf("a after end: %v", a.Err())
		}
	})

	t.Run("gone off", func(t *testing.T) {
		a := startCall(bg, time.Now().Add(time.Millisecond))
		<-a.wait().Done()
		if a.stopTimer() {
			t.Fatal("stopTimer reported true for a timer that went off")
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

	// Many calls at once, each stopped, set again and ended at random
	// against its timer: none ends before its deadline, and each whose
	// deadline passed has ended.
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
	c.start(ctx, deadline)
	return c
}

// oneCall runs a call through start, stopTimer, setDeadline and end with
// short random deadlines, and checks that it ended when and as it should.
func oneCall(t *testing.T) {
	d := func() time.Duration { return time.Duration(rand.IntN(300)) * time.Microsecond }
	deadline := time.Now().Add(d())
	c := startCall(context.Background(), deadline)
	time.Sleep(d())
	if c.stopTimer() {
		if err := c.Err(); err != nil {
			t.Errorf("ended with its timer stopped in time: %v", err)
			return
		}
		deadline = time.Now().Add(d())
		c.setDeadline(deadline)
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
