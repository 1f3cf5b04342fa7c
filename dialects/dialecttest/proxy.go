package dialecttest

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP forwarder between a test's Source and its real server. Cut
// makes the server look gone (every open connection is closed, new ones are
// refused) without stopping it, so other test packages that share the
// server are not disturbed; Restore brings it back on the same address.
type Proxy struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener // nil while cut or closed
	conns map[net.Conn]struct{}
	done  bool
	wg    sync.WaitGroup
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

func (p *Proxy) dropLocked() {
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
		_, _ = io.Copy(dst, src)
		stop()
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
	<-done
}
