package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/bootstrap"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/mcp"
	"github.com/littlebitlabs/minimal/sessions"
	"github.com/littlebitlabs/minimal/store"
)

func cmdServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	dataDir := dataDirFlag(fs)
	restAddr := fs.String("rest-addr", "127.0.0.1:8080", "REST listen address")
	mcpAddr := fs.String("mcp-addr", "127.0.0.1:8484", "MCP listen address (POST "+mcp.Path+")")
	sessionIdle := fs.Duration("session-idle", 30*time.Minute, "an AI session expires after this long without a call")
	maxBody := fs.Int64("max-body-bytes", 10<<20, "largest request body accepted (413 above)")
	maxPage := fs.Int64("max-page-size", 10000, "largest ps accepted (400 above)")
	stmtTimeout := fs.Duration("statement-timeout", 30*time.Second, "bound on every database statement")
	headerTimeout := fs.Duration("read-header-timeout", 10*time.Second, "time allowed to read request headers")
	maxHeader := fs.Int("max-header-bytes", 64<<10, "largest request header block")
	maxConns := fs.Int("max-conns", 0, "pool size per database (0: driver default)")
	shutdownGrace := fs.Duration("shutdown-grace", 20*time.Second, "time in-flight requests get to finish on SIGTERM")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := newLogger(stderr)

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	st, err := store.Open(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		return err
	}
	ver := auth.NewVerifier(st, key)
	files, err := bootstrap.Ensure(ctx, st, *dataDir, key, ver, log)
	if err != nil {
		return err
	}
	for _, f := range files {
		log.Info("token file ready", "path", f)
	}

	eng, err := engine.New(ctx, st, engine.Config{StatementTimeout: *stmtTimeout, MaxConns: *maxConns, Logger: log})
	if err != nil {
		return err
	}
	defer eng.Close()
	go eng.Run(ctx)

	srv := &http.Server{
		Handler:           api.New(api.Deps{Engine: eng, Verifier: ver, Store: st, SigningKey: key}, api.Config{MaxBodyBytes: *maxBody, MaxPageSize: *maxPage, Logger: log}),
		ReadHeaderTimeout: *headerTimeout,
		MaxHeaderBytes:    *maxHeader,
		IdleTimeout:       2 * time.Minute,
	}
	mcpSrv := &http.Server{
		Handler:           mcp.New(mcp.Deps{Engine: eng, Verifier: ver, Store: st, Sessions: sessions.New(st, *sessionIdle)}, mcp.Config{MaxBodyBytes: *maxBody, MaxPageSize: *maxPage, Version: version, Logger: log}).Handler(),
		ReadHeaderTimeout: *headerTimeout,
		MaxHeaderBytes:    *maxHeader,
		IdleTimeout:       2 * time.Minute,
	}
	ln, err := net.Listen("tcp", *restAddr)
	if err != nil {
		return err
	}
	mln, err := net.Listen("tcp", *mcpAddr)
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("serving REST", "addr", ln.Addr().String(), "data_dir", *dataDir)
	log.Info("serving MCP", "addr", mln.Addr().String(), "path", mcp.Path)
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	go func() { errc <- mcpSrv.Serve(mln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests", "grace", shutdownGrace.String())
	sctx, cancel := context.WithTimeout(context.Background(), *shutdownGrace)
	defer cancel()
	done := make(chan error, 2)
	for _, hs := range []*http.Server{srv, mcpSrv} {
		go func() { done <- hs.Shutdown(sctx) }()
	}
	for range 2 {
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	log.Info("stopped")
	return nil
}
