package mcp_test

import (
	"net"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/observe"
)

// writeCounter counts the writes made to the connections it accepts.
type writeCounter struct {
	net.Listener
	writes atomic.Int64
}

func (l *writeCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countedConn{c, &l.writes}, nil
}

type countedConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countedConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestDirectAnswerOneWrite: on the MCP face as serve runs it (a
// CorkListener, observe.ConnContext), an answer of the direct road bigger
// than net/http's 4 kB connection buffer — the admin agent's tools/list,
// a page of rows — leaves with its headers in one write, call after call on
// one connection; net/http alone makes two (its buffer's first 4 kB, then
// the rest).
func TestDirectAnswerOneWrite(t *testing.T) {
	g := newGateway(t, time.Hour)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wc := &writeCounter{Listener: ln}
	srv := httptest.NewUnstartedServer(g.srv.Handler())
	srv.Listener.Close()
	srv.Listener = observe.CorkListener(wc)
	srv.Config.ConnContext = observe.ConnContext
	srv.Start()
	t.Cleanup(srv.Close)
	g.mcp = srv
	sid := g.start(g.agent)
	rows := make([]any, 60)
	for i := range rows {
		rows[i] = map[string]any{"title": "note " + strconv.Itoa(i), "body": "a body long enough to fill a page of rows past 4 kB"}
	}
	g.tool(g.agent, sid, "auto_insert_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes", "rows": rows}).ok(t)
	read := map[string]any{"name": "auto_read_rows", "arguments": map[string]any{"type": "mi", "schema": "app", "table": "notes", "page_size": 100, "page_number": 0}}
	for i := range 3 {
		for _, c := range []struct {
			method string
			params map[string]any
		}{{"tools/list", nil}, {"tools/call", read}} {
			before := wc.writes.Load()
			r := g.call(g.agent, sid, c.method, c.params)
			n := wc.writes.Load() - before
			if r.status != 200 || len(r.raw) <= 4<<10 {
				t.Fatalf("%s %d: status %d, %d bytes; want 200 and more than 4 kB: %.300s", c.method, i, r.status, len(r.raw), r.raw)
			}
			if res := r.json(t)["result"]; res == nil {
				t.Fatalf("%s %d: no result: %.300s", c.method, i, r.raw)
			}
			if n != 1 {
				t.Errorf("%s %d: %d bytes in %d writes, want one", c.method, i, len(r.raw), n)
			}
		}
	}
}
