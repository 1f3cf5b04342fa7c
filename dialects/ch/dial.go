package ch

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"
)

// dialer connects for the driver (clickhouse.Options.DialContext) the way
// it does itself — TCP, or TLS with tlsConfig — but so that the handshake
// that follows ends with the call that asked for the connection. The
// driver's handshake does not watch the context: on a server that accepts
// connections and answers nothing it would wait out the whole dial
// timeout, past the call's deadline (dialects.Bound, the statement
// backstop), and hold a slot of the pool meanwhile.
func dialer(tlsConfig *tls.Config) func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		var (
			c   net.Conn
			err error
		)
		if tlsConfig != nil {
			c, err = (&tls.Dialer{Config: tlsConfig}).DialContext(ctx, "tcp", addr)
		} else {
			c, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		}
		if err != nil {
			return nil, err
		}
		hc := &handshakeConn{Conn: c}
		// ctx ends when the driver has the connection (the handshake is
		// over by then) or when the call gives up during the handshake:
		// only then is the connection closed under it.
		context.AfterFunc(ctx, func() {
			if !hc.shookHands.Load() {
				_ = c.Close()
			}
		})
		return hc, nil
	}
}

// handshakeConn is a connection during and after the driver's handshake.
// The handshake sets a deadline when it starts and clears it when it ends
// (clickhouse-go's connect.handshake); the clearing marks it over.
type handshakeConn struct {
	net.Conn
	shookHands atomic.Bool
}

// SetDeadline notes the end of the handshake.
func (c *handshakeConn) SetDeadline(t time.Time) error {
	if t.IsZero() {
		c.shookHands.Store(true)
	}
	return c.Conn.SetDeadline(t)
}
