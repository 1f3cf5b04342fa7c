package store

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Changes returns a channel that receives a value soon after a write to the
// control plane commits: on PostgreSQL a write by any process (LISTEN on
// ChangesChannel), on SQLite a write through this Store. Values coalesce —
// one receive may stand for several writes — and the channel is closed when
// ctx ends or the Store is closed.
//
// It is a hint to look sooner, not a feed: a receiver still compares
// ChangeSeq, and keeps polling it, because a hint can be missed (writes by
// other processes on SQLite, a LISTEN connection being re-established). A
// value is also sent each time the LISTEN connection is (re)established.
func (s *Store) Changes(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	s.hub.add(ch)
	go func() {
		defer s.hub.remove(ch)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.closing, cancel)()
		if s.pgcfg == nil {
			<-ctx.Done()
			return
		}
		s.listen(ctx, ch)
	}()
	return ch
}

// listen keeps a LISTEN connection open until ctx ends, reconnecting with a
// growing pause (up to 5 s) when it breaks, and pokes ch on every
// notification.
func (s *Store) listen(ctx context.Context, ch chan struct{}) {
	const first, most = 100 * time.Millisecond, 5 * time.Second
	pause := first
	for ctx.Err() == nil {
		if s.listenOnce(ctx, ch) {
			pause = first
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, most)
	}
}

// listenOnce opens a connection, listens on ChangesChannel and pokes ch
// until the connection fails or ctx ends. It reports whether it got as far
// as listening.
func (s *Store) listenOnce(ctx context.Context, ch chan struct{}) bool {
	conn, err := pgx.ConnectConfig(ctx, s.pgcfg.Copy())
	if err != nil {
		return false
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+ChangesChannel); err != nil {
		return false
	}
	// Whatever was announced while nobody listened is found by looking now.
	poke(ch)
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true
		}
		poke(ch)
	}
}

// poke sends on ch unless a value is already waiting there.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// hub hands the writes of this Store to its Changes channels.
type hub struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func (h *hub) add(ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[chan struct{}]struct{}{}
	}
	h.subs[ch] = struct{}{}
}

// remove forgets ch and closes it; under the lock, so poke never sends on
// a closed channel.
func (h *hub) remove(ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
	close(ch)
}

// poke wakes every channel.
func (h *hub) poke() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		poke(ch)
	}
}
