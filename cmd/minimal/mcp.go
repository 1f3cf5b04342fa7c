package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/mcp"
	"github.com/littlebitlabs/minimal/miniapp"
	"github.com/littlebitlabs/minimal/sessions"
	"github.com/littlebitlabs/minimal/store"
)

// cmdMCP serves the MCP tools over stdin/stdout to a local agent. The HTTP
// endpoint runs inside serve.
func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("mcp", stderr)
	dataDir := dataDirFlag(fs)
	stdio := fs.Bool("stdio", false, "serve JSON-RPC on stdin/stdout (required: the HTTP endpoint runs inside serve)")
	tokenFile := fs.String("token-file", "", "file holding the access token of an mcp identity (required)")
	maxPage := fs.Int64("max-page-size", 10000, "largest page_size accepted")
	stmtTimeout := fs.Duration("statement-timeout", 30*time.Second, "bound on every database statement")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !*stdio {
		return usagef("mcp: --stdio is required (the HTTP endpoint is served by 'minimal serve' on --mcp-addr)")
	}
	if *tokenFile == "" {
		return dropIn(ctx, stdin, stdout, stderr, *maxPage, *stmtTimeout)
	}
	b, err := os.ReadFile(*tokenFile)
	if err != nil {
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
	eng, err := engine.New(ctx, st, engine.Config{StatementTimeout: *stmtTimeout, Logger: log})
	if err != nil {
		return err
	}
	defer eng.Close()
	go eng.Run(ctx)

	srv := mcp.New(mcp.Deps{Engine: eng, Verifier: auth.NewVerifier(st, key), Store: st, Sessions: sessions.New(st, 0)},
		mcp.Config{MaxPageSize: *maxPage, Version: version, Logger: log})
	return srv.ServeStdio(ctx, strings.TrimSpace(string(b)), stdin, stdout)
}

// dropIn serves mini-app-mcp's directories (MINI_APP_USER_DIR,
// MINI_APP_PROJECT_DIR, or the legacy MINI_APP_SCHEMA + MINI_APP_DB, also
// read from ./.mini-app-mcp.env) to one local user, as mini-app-mcp --mcp
// does: a private, temporary control plane mounts them as mi databases and
// the same tools run through the same pipeline, as role admin.
func dropIn(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, maxPage int64, stmtTimeout time.Duration) error {
	log := newLogger(stderr)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	dc, err := miniapp.DropInFromEnv(os.Getenv, cwd)
	if err != nil {
		return err
	}
	local, err := miniapp.DropIn(ctx, dc)
	if err != nil {
		return err
	}
	defer local.Close()
	eng, err := engine.New(ctx, local.Store, engine.Config{StatementTimeout: stmtTimeout, Logger: log,
		RefreshInterval: time.Second, MissRefresh: time.Millisecond})
	if err != nil {
		return err
	}
	defer eng.Close()
	go eng.Run(ctx)
	ver := auth.NewVerifier(local.Store, local.Key)
	cfg := local.Config
	srv := mcp.New(mcp.Deps{Engine: eng, Verifier: ver, Store: local.Store, Sessions: sessions.New(local.Store, 0), MiniApp: cfg},
		mcp.Config{MaxPageSize: maxPage, Version: version, Logger: log})
	if err := srv.PrimeMiniApp(ctx, local.Token); err != nil {
		return err
	}
	return srv.ServeStdio(ctx, local.Token, stdin, stdout)
}
