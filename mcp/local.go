package mcp

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
)

// LocalPath is where a single-user process serves the tools over HTTP, as
// mini-app-mcp --mcp-http does.
const LocalPath = "/mcp"

// LocalHTTP configures the HTTP face of a single-user process (minimal mcp
// --http in drop-in mode).
type LocalHTTP struct {
	// Token is the local identity's access token. As over stdio, it passes
	// the credential layer at the start and again on every call; requests
	// do not carry it.
	Token string
	// Bearer, when not empty, must come with every request as
	// "Authorization: Bearer <Bearer>"; a request without it, or with
	// another, is refused with 401 before any JSON-RPC is read.
	Bearer string
}

// LocalHandler is the HTTP face of a single-user process: POST LocalPath
// with the tool set of stdio. Like ServeStdio, the process has one implicit
// session, started here and ended by the returned end: every call is
// journaled in it, no X-Session-Id is needed, and start_ai_session and
// end_ai_session are not offered. DNS-rebinding protection, the method, the
// body limit and the version rules apply as on Handler; the bearer check
// takes the place of the credential layer.
func (s *Server) LocalHandler(ctx context.Context, lh LocalHTTP) (h http.Handler, end func(), err error) {
	p, err := s.admit(ctx, lh.Token)
	if err != nil {
		return nil, nil, err
	}
	sess, err := s.sess.Start(ctx, owner(p), "http", fmt.Sprintf("implicit session of minimal mcp --http (pid %d)", os.Getpid()))
	if err != nil {
		return nil, nil, err
	}
	s.log.Info("MCP over local HTTP", "identity", p.Identity, "session", sess.ID, "bearer", lh.Bearer != "")
	end = func() {
		if _, endErr := s.sess.End(context.WithoutCancel(ctx), owner(p), sess.ID); endErr != nil {
			s.log.Error("mcp http: session not ended", "session", sess.ID, "err", endErr)
		}
	}
	want := []byte(lh.Bearer)
	h = s.httpFace(LocalPath, true, func(r *http.Request) (*caller, error) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if lh.Bearer != "" && (!strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1) {
			return nil, fault.New(fault.Unauthenticated, "missing or wrong bearer token: send Authorization: Bearer <MINI_APP_HTTP_TOKEN>")
		}
		return &caller{token: lh.Token, session: sess.ID, local: p}, nil
	})
	return h, end, nil
}

// Loopback reports whether a listen address (host:port, or a host) is on
// the loopback interface: localhost, 127.0.0.0/8 or ::1. An empty host, all
// interfaces, is not.
func Loopback(addr string) bool {
	return strings.TrimSpace(addr) != "" && loopback(addr)
}
