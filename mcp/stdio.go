package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"sync"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves the tools to a local agent over in and out (JSON-RPC,
// one message per line) until in ends or ctx is done. The token passes the
// same credential layer as over HTTP, at the start and again on every call.
// The process has one implicit session, started here and ended on return:
// every call is journaled in it, no X-Session-Id is needed, and
// start_ai_session and end_ai_session are not offered.
func (s *Server) ServeStdio(ctx context.Context, token string, in io.Reader, out io.Writer) (err error) {
	p, err := s.admit(ctx, token)
	if err != nil {
		return err
	}
	sess, err := s.sess.Start(ctx, owner(p), "stdio", fmt.Sprintf("implicit session of minimal mcp --stdio (pid %d)", os.Getpid()))
	if err != nil {
		return err
	}
	s.log.Info("serving MCP on stdio", "identity", p.Identity, "session", sess.ID)
	defer func() {
		if _, endErr := s.sess.End(context.WithoutCancel(ctx), owner(p), sess.ID); endErr != nil {
			s.log.Error("mcp stdio: session not ended", "session", sess.ID, "err", endErr)
		}
	}()
	srv, _ := s.build(true)
	std := mcpserver.NewStdioServer(srv)
	std.SetErrorLogger(log.New(slogWriter{s.log}, "", 0))
	codes := &rpcCodes{}
	std.SetContextFunc(func(ctx context.Context) context.Context {
		return withCaller(ctx, &caller{token: token, session: sess.ID, codes: codes})
	})
	g := newGate(ctx, in, out)
	g.out.codes = codes
	return std.Listen(ctx, g, g.out)
}

// gate holds back the end of a stdio input until every request read from
// it has been answered. mcp-go's stdio server cancels the requests still
// running when its input ends (and may drop tool calls still queued), so a
// call sent just before stdin closes would fail to journal its outcome, or
// go unanswered; behind the gate the input ends only when the answers are
// written (or ctx is done).
type gate struct {
	ctx context.Context
	in  io.Reader
	out *gateWriter

	line  []byte // the input line read so far
	mu    sync.Mutex
	asked int // requests read
}

type gateWriter struct {
	w io.Writer
	// codes are the error codes to put right in the answers (finish.go).
	codes    *rpcCodes
	mu       sync.Mutex
	answered int // responses written
	changed  chan struct{}
}

func newGate(ctx context.Context, in io.Reader, out io.Writer) *gate {
	return &gate{ctx: ctx, in: in, out: &gateWriter{w: out, changed: make(chan struct{})}}
}

// Read reads the input, counting the requests in it; at its end it waits
// until each has its answer.
func (g *gate) Read(p []byte) (int, error) {
	n, err := g.in.Read(p)
	g.count(p[:n])
	if err != io.EOF {
		return n, err
	}
	if n > 0 {
		return n, nil // the end comes with the next Read, after these bytes are served
	}
	for {
		g.mu.Lock()
		asked := g.asked
		g.mu.Unlock()
		g.out.mu.Lock()
		answered, changed := g.out.answered, g.out.changed
		g.out.mu.Unlock()
		if answered >= asked {
			return 0, io.EOF
		}
		select {
		case <-changed:
		case <-g.ctx.Done():
			return 0, io.EOF
		}
	}
}

// count counts the requests (a method and an id that is not null) among
// the lines b completes. A last line without a newline is not served, so
// it is not counted.
func (g *gate) count(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			g.line = append(g.line, b...)
			return
		}
		line := b[:i]
		if len(g.line) > 0 {
			line = append(g.line, line...)
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if json.Unmarshal(line, &msg) == nil && msg.Method != nil && len(msg.ID) > 0 && string(msg.ID) != "null" {
			g.mu.Lock()
			g.asked++
			g.mu.Unlock()
		}
		g.line, b = g.line[:0], b[i+1:]
	}
}

// Write writes one message (mcp-go writes each with one Write), finished
// (finish.go), and counts it as an answer when it is a response: an object
// whose members hold a result or an error before any method.
func (w *gateWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(finishLine(b, w.codes))
	if err == nil {
		n = len(b)
	}
	if isResponse(b) {
		w.mu.Lock()
		w.answered++
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
	return n, err
}

// isResponse reads the members of a JSON object up to the first result,
// error or method, without scanning a result's value.
func isResponse(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return false
		}
		switch k {
		case "result", "error":
			return true
		case "method":
			return false
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// slogWriter hands mcp-go's stdio error log to the gateway's logger.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Write(b []byte) (int, error) {
	w.log.Warn("mcp stdio", "detail", strings.TrimSpace(string(b)))
	return len(b), nil
}
