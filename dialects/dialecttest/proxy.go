package dialecttest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP forwarder between a test's Source and its real server. Cut
// makes the server look gone (every open connection is closed, new ones are
// refused) without stopping it, so other test packages that share the
// server are not disturbed; Restore brings it back on the same address.
// Freeze makes it look hung: connections stay open and new ones are
// accepted, but no byte goes through either way until Thaw.
type Proxy struct {
	t      testing.TB
	target string
	addr   string

	mu     sync.Mutex
	ln     net.Listener // nil while cut or closed
	conns  map[net.Conn]struct{}
	done   bool
	thawed chan struct{} // non-nil while frozen; closed by Thaw
	wg     sync.WaitGroup
}

// StartProxy listens on a free 127.0.0.1 port and forwards every connection
// to target (host:port). It is closed when the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &Proxy{t: t, target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port, to put in a DSN instead of the server's.
func (p *Proxy) Addr() string { return p.addr }

// Cut closes every forwarded connection and stops listening, so new
// connections are refused as by a server that is down.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	p.dropLocked()
}

// Freeze stops every byte between the clients and the server, on open
// connections and new ones, as a server that stopped answering (a hung
// process, a dead link that still looks open): calls wait until their own
// deadlines. Bytes sent meanwhile are held and delivered by Thaw.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.thawed == nil {
		p.thawed = make(chan struct{})
	}
}

// Thaw lets the bytes through again after Freeze.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.thawLocked()
}

func (p *Proxy) thawLocked() {
	if p.thawed != nil {
		close(p.thawed)
		p.thawed = nil
	}
}

// gate is closed when bytes may go through: nil when not frozen.
func (p *Proxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.thawed
}

// Restore listens again on the same address after Cut.
func (p *Proxy) Restore() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil || p.done {
		return
	}
	var ln net.Listener
	var err error
	// The port was ours a moment ago; retry briefly in case the kernel
	// has not let go of it yet.
	for range 50 {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.serveLocked(ln)
}

func (p *Proxy) close() {
	p.mu.Lock()
	p.done = true
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	p.dropLocked()
	p.mu.Unlock()
	p.wg.Wait()
}

// dropLocked closes every forwarded connection. A frozen proxy is thawed
// first, so the bytes held go nowhere and the pipes end.
func (p *Proxy) dropLocked() {
	p.thawLocked()
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serveLocked(ln)
}

func (p *Proxy) serveLocked(ln net.Listener) {
	p.ln = ln
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Cut or close
			}
			p.wg.Add(1)
			go p.forward(ln, c)
		}
	}()
}

// forward pipes one client connection to a new server connection until
// either side ends or the proxy drops them.
func (p *Proxy) forward(ln net.Listener, c net.Conn) {
	defer p.wg.Done()
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln != ln { // cut (or cut and restored) while dialing
		p.mu.Unlock()
		_ = c.Close()
		_ = s.Close()
		return
	}
	p.conns[c] = struct{}{}
	p.conns[s] = struct{}{}
	p.mu.Unlock()

	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = c.Close()
			_ = s.Close()
			p.mu.Lock()
			delete(p.conns, c)
			delete(p.conns, s)
			p.mu.Unlock()
		})
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if g := p.gate(); g != nil {
					<-g // frozen: hold the bytes until Thaw (or a drop)
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		stop()
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
	<-done
}
