package ms

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"sync"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"
)

// go-mssqldb honours the context while it dials and while a statement runs
// (it sends the server an attention), but not during the pre-login and
// login exchange in between: it reads the server's answers with no deadline
// unless the DSN sets "connection timeout", which would then also bound
// every read of every later statement. A server that accepts TCP and says
// nothing would hold the call, and the statement timeout with it, forever.
// The connector below bounds that exchange by the context of the call that
// asked for the connection, and only that exchange.

// newConnector wraps go-mssqldb's connector for mc so that a connection's
// login ends when the context of the call that opens it does.
func newConnector(mc msdsn.Config) driver.Connector {
	inner := mssql.NewConnectorConfig(mc)
	ka := mc.KeepAlive
	if ka == 0 {
		ka = 30 * time.Second // the driver's own default
	}
	inner.Dialer = dialer{&net.Dialer{KeepAlive: ka}}
	return connector{inner}
}

// connector is go-mssqldb's connector with a login bounded by the context.
type connector struct{ *mssql.Connector }

// Connect opens a connection like the driver does; when ctx ends before the
// login is done, every socket dialed for it gets a deadline in the past,
// which ends the read the driver is blocked in.
func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	h := &handshake{}
	stop := context.AfterFunc(ctx, h.abort)
	conn, err := c.Connector.Connect(context.WithValue(ctx, handshakeKey{}, h))
	if stop() {
		return conn, err
	}
	// ctx ended during the login: the sockets' deadline is spent, so the
	// connection is of no use even if the login got through.
	h.wait()
	if err == nil {
		_ = conn.Close()
		return nil, ctx.Err()
	}
	return nil, errors.Join(ctx.Err(), err)
}

// handshakeKey carries a login's *handshake to the dialer.
type handshakeKey struct{}

// handshake is the set of sockets one login dialed.
type handshake struct {
	mu      sync.Mutex
	conns   []net.Conn
	aborted bool
}

// expired is a deadline that has passed.
var expired = time.Unix(1, 0)

func (h *handshake) add(c net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.aborted {
		_ = c.SetDeadline(expired)
	}
	h.conns = append(h.conns, c)
}

func (h *handshake) abort() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.aborted = true
	for _, c := range h.conns {
		_ = c.SetDeadline(expired)
	}
}

// wait returns once a running abort has finished.
func (h *handshake) wait() {
	h.mu.Lock()
	defer h.mu.Unlock()
}

// dialer is the driver's default dialer that also registers each socket
// with the login it was dialed for.
type dialer struct{ nd *net.Dialer }

func (d dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if h, ok := ctx.Value(handshakeKey{}).(*handshake); ok {
		h.add(c)
	}
	return c, nil
}

var (
	_ driver.Connector = connector{}
	_ mssql.Dialer     = dialer{}
)
