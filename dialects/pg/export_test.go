package pg

import (
	"context"
	"errors"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
)

// CallTimeout gives src's calls the deadline a statement timeout of d
// gives them (d and dialects.TimeoutGrace) without the server's
// statement_timeout, so that a test sees the call's own deadline end a
// statement the server goes on running.
func CallTimeout(src dialects.Source, d time.Duration) { src.(*Source).timeout = d }

// WatchAfter is how long a call runs before it watches its caller's
// context.
const WatchAfter = watchAfter

// CallThenCut runs a statement in a call and reads it to its end, then
// ends the caller's context and waits until the call has cut its
// connection, between statements, before the call is done.
func CallThenCut(src dialects.Source) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, l, err := selectOne(ctx, src.(*Source))
	if err != nil {
		return err
	}
	cancel()
	for c.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	c.mu.Lock()
	cut := c.cut
	c.mu.Unlock()
	l.done()
	if !cut {
		return errors.New("the call did not cut its connection")
	}
	return nil
}

// CallThenLateEnd runs a statement in a call and is done with it, then
// ends the call again as its timer and its watch on the caller's context
// would if they went off as it was done.
func CallThenLateEnd(src dialects.Source) error {
	c, l, err := selectOne(context.Background(), src.(*Source))
	if err != nil {
		return err
	}
	l.done()
	c.endWith(context.Canceled)
	c.expire()
	return nil
}

// selectOne runs SELECT 1 to its end in a call of ctx (acquireBound),
// which it leaves to its caller to end.
func selectOne(ctx context.Context, s *Source) (*call, *lease, error) {
	cctx, conn, l, err := s.acquireBound(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	if l.call == nil {
		l.done()
		return nil, nil, errors.New("the connection came as the wait ended")
	}
	rows, err := conn.Query(cctx, "SELECT 1")
	if err == nil {
		for rows.Next() {
		}
		rows.Close()
		err = rows.Err()
	}
	if err != nil {
		l.done()
		return nil, nil, err
	}
	return l.call, l, nil
}
