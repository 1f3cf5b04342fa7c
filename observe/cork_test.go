package observe

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// countingListener counts the writes made to the connections it accepts
// (the write system calls of a TCP connection).
type countingListener struct {
	net.Listener
	mu     sync.Mutex
	writes int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

func (l *countingListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes++
	c.l.mu.Unlock()
	return c.Conn.Write(p)
}

// corkServer serves h over a CorkListener on a countingListener.
func corkServer(t *testing.T, h http.Handler, cork bool) (*httptest.Server, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = cl
	if cork {
		srv.Listener = CorkListener(cl)
		srv.Config.ConnContext = ConnContext
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cl
}

// TestCork: an answer of 40 kB written while its connection is corked,
// in three pieces and then flushed, leaves with its headers in one write,
// request after request on the same connection; what is written after the
// uncork goes out as usual; without CorkListener (or without Cork) net/http
// makes it two writes or more.
func TestCork(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 2500)
	handler := func(corks bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(http.StatusOK)
			uncork := noUncork
			if corks {
				uncork = Cork(r.Context())
			}
			for _, part := range [][]byte{body[:100], body[100:30000], body[30000:]} {
				if _, err := w.Write(part); err != nil {
					t.Error(err)
				}
			}
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Error(err)
			}
			if err := uncork(); err != nil {
				t.Error(err)
			}
		})
	}
	for _, c := range []struct {
		name         string
		listener     bool
		corks        bool
		writes, most int
	}{
		{"corked", true, true, 1, 1},
		{"no CorkListener", false, true, 2, 10},
		{"not corked", true, false, 2, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, cl := corkServer(t, handler(c.corks), c.listener)
			client := srv.Client()
			for i := range 3 {
				before := cl.count()
				resp, err := client.Get(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
					t.Fatalf("request %d: status %d, %d bytes (%v), want 200 and %d bytes", i, resp.StatusCode, len(got), err, len(body))
				}
				if n := cl.count() - before; n < c.writes || n > c.most {
					t.Errorf("request %d: %d writes, want %d to %d", i, n, c.writes, c.most)
				}
			}
		})
	}
}

// TestCorkPlain: Cork on a request whose connection is not of
// CorkListener does nothing, and its uncork reports no error.
func TestCorkPlain(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if err := Cork(r.Context())(); err != nil {
		t.Fatal(err)
	}
}
