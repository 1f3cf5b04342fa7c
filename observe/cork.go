package observe

import (
	"context"
	"net"
	"sync"
)

// A handler that has its whole answer in memory can have it leave in one
// write system call: net/http writes the status line and headers into its
// connection's 4 kB buffer, so an answer bigger than that goes out in two
// writes (the buffer's first 4 kB, then the rest), and on a local socket
// each write also runs the receiving side's network stack and wakes the
// client. CorkListener's connections keep what is written while a handler
// has corked them (Cork) and write it at once when uncorked.

// CorkListener wraps l: each connection it accepts can be corked by the
// handlers of its requests (ConnContext puts it in their context).
func CorkListener(l net.Listener) net.Listener { return corkListener{l} }

type corkListener struct{ net.Listener }

func (l corkListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &corkConn{Conn: c}, nil
}

// corkConn is a connection of CorkListener. Only the goroutine serving
// its request writes to it, but mu keeps a stray writer (a 100 Continue,
// a close) from racing the held bytes.
type corkConn struct {
	net.Conn
	mu     sync.Mutex
	corked bool
	held   *[]byte
}

// corkBufs are the buffers held bytes wait in, taken by Cork and given
// back by its uncork: an idle connection keeps none.
var corkBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxCorkBuf keeps one huge answer from pinning its buffer in the pool.
const maxCorkBuf = 1 << 20

// Write writes p, or keeps a copy of it while the connection is corked
// (the caller may reuse p once Write returns).
func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.corked {
		*c.held = append(*c.held, p...)
		c.mu.Unlock()
		return len(p), nil
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// CloseWrite half-closes the connection when it can (net/http sends its
// FIN this way before closing).
func (c *corkConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// uncork writes what was held, in one write, and stops holding.
func (c *corkConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.corked {
		return nil
	}
	c.corked = false
	held := c.held
	c.held = nil
	var err error
	if len(*held) > 0 {
		_, err = c.Conn.Write(*held)
	}
	if cap(*held) <= maxCorkBuf {
		*held = (*held)[:0]
		corkBufs.Put(held)
	}
	return err
}

type corkKey struct{}

// ConnContext is the http.Server ConnContext of a server on a
// CorkListener: it puts the request's connection where Cork finds it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*corkConn); ok {
		return context.WithValue(ctx, corkKey{}, cc)
	}
	return ctx
}

// Cork holds what is written to the connection of the request of ctx
// until the function it returns is called, which writes it all in one
// write and reports that write's error. The handler must have flushed
// its answer (http.ResponseController.Flush) before calling it, and calls
// it before it returns. On a connection not of CorkListener it does
// nothing.
func Cork(ctx context.Context) (uncork func() error) {
	c, _ := ctx.Value(corkKey{}).(*corkConn)
	if c == nil {
		return noUncork
	}
	c.mu.Lock()
	if !c.corked {
		c.corked = true
		c.held = corkBufs.Get().(*[]byte)
	}
	c.mu.Unlock()
	return c.uncork
}

func noUncork() error { return nil }
