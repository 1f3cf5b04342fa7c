package mcp

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"

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
	std.SetContextFunc(func(ctx context.Context) context.Context {
		return withCaller(ctx, &caller{token: token, session: sess.ID})
	})
	return std.Listen(ctx, in, out)
}

// slogWriter hands mcp-go's stdio error log to the gateway's logger.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Write(b []byte) (int, error) {
	w.log.Warn("mcp stdio", "detail", strings.TrimSpace(string(b)))
	return len(b), nil
}
