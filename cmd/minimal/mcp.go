package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/mcp"
	"github.com/littlebitlabs/minimal/miniapp"
	"github.com/littlebitlabs/minimal/observe"
	"github.com/littlebitlabs/minimal/sessions"
)

// cmdMCP serves the MCP tools over stdin/stdout to a local agent, or, in
// drop-in mode, over HTTP as mini-app-mcp --mcp-http does. The gateway's
// HTTP endpoint runs inside serve.
func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("mcp", stderr)
	dataDir := dataDirFlag(fs)
	stdio := fs.Bool("stdio", false, "serve JSON-RPC on stdin/stdout (the gateway's HTTP endpoint runs inside serve)")
	httpMode := fs.Bool("http", false, "drop-in mode only: serve streamable HTTP at /mcp on --bind, as mini-app-mcp --mcp-http")
	bind := fs.String("bind", "127.0.0.1:8484", "with --http: listen address; a non-loopback one needs MINI_APP_HTTP_TOKEN")
	tokenFile := fs.String("token-file", "", "file holding the access token of an mcp identity (without it: drop-in mode)")
	maxPage := fs.Int64("max-page-size", 10000, "largest page_size accepted")
	stmtTimeout := fs.Duration("statement-timeout", 30*time.Second, "bound on every database statement")
	bodyTimeout := bodyTimeoutFlag(fs)
	exportRoots := exportRootFlag(fs)
	logger := logFormatFlag(fs, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("mcp: unexpected argument %q", fs.Arg(0))
	}
	log, closeLog, err := logger()
	if err != nil {
		return err
	}
	defer closeLog()
	switch {
	case *httpMode && *bodyTimeout <= 0:
		return usagef("mcp: --body-timeout (env %s) must be a positive duration", envBodyTimeout)
	case *stdio && *httpMode:
		return usagef("mcp: --stdio and --http exclude each other")
	case *httpMode && *tokenFile != "":
		return usagef("mcp: --http serves the drop-in mode only (no --token-file): the gateway's HTTP endpoint is served by 'minimal serve' on --mcp-addr")
	case *httpMode:
		bearer := os.Getenv("MINI_APP_HTTP_TOKEN")
		if !mcp.Loopback(*bind) && bearer == "" {
			// Exit code 1, as mini-app-mcp's refusal.
			return fault.New(fault.Invalid, "mcp: refusing to bind %s: not a loopback address; set MINI_APP_HTTP_TOKEN to require a bearer token on every request", *bind)
		}
		return dropIn(ctx, dropInHTTP{bind: *bind, bearer: bearer, bodyTimeout: *bodyTimeout}, stdin, stdout, log, *maxPage, *stmtTimeout)
	case !*stdio:
		return usagef("mcp: --stdio or --http is required (the gateway's HTTP endpoint is served by 'minimal serve' on --mcp-addr)")
	}
	// An agent that goes away closes our stdout and stderr: a write after
	// that must fail, not end the process (SIGPIPE), so that the calls in
	// flight finish and their journal entries are committed.
	signal.Ignore(syscall.SIGPIPE)
	if *tokenFile == "" {
		return dropIn(ctx, dropInHTTP{}, stdin, stdout, log, *maxPage, *stmtTimeout)
	}
	b, err := os.ReadFile(*tokenFile)
	if err != nil {
		return err
	}
	ctx = stopSignals(ctx)

	privateFiles() // a gateway: what it writes under the data dir is private, as with serve
	st, err := openStore(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		return err
	}
	ver := auth.NewVerifier(st, key)
	token := strings.TrimSpace(string(b))
	if _, err := ver.Verify(ctx, token); err != nil {
		return fault.Wrap(fault.KindOf(err), err, "mcp: the token in --token-file %s is not valid in the data dir %s", *tokenFile, *dataDir)
	}
	eng, err := engine.New(ctx, st, engine.Config{StatementTimeout: *stmtTimeout, Logger: log})
	if err != nil {
		return err
	}
	defer eng.Close()
	defer runEngine(ctx, eng)()

	mini, err := gatewayMiniApp(*dataDir, *exportRoots)
	if err != nil {
		return err
	}
	srv := mcp.New(mcp.Deps{Engine: eng, Verifier: ver, Store: st, Sessions: sessions.New(st, 0), MiniApp: mini},
		mcp.Config{MaxPageSize: *maxPage, Version: version, Logger: log})
	err = srv.ServeStdio(ctx, token, stdin, stdout)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil // SIGINT or SIGTERM: the way to stop it
	}
	return err
}

// stopSignals is ctx, canceled by SIGINT or SIGTERM: the way to stop a
// serving process (serve, mcp). The handlers stay for the rest of the
// process's life. An MCP process also ends on its own when its agent
// closes stdin (serve, on a fatal error), and a supervisor may send
// SIGTERM just then: with the handlers taken down as the command
// returned, that signal killed a process that had already finished its
// work (journal committed, stores closed), and it died of the signal
// instead of exiting with its own status.
func stopSignals(ctx context.Context) context.Context {
	ctx, _ = signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	return ctx
}

// dropInHTTP is the HTTP transport of drop-in mode: none (stdio) when bind
// is empty.
type dropInHTTP struct {
	bind        string
	bearer      string
	bodyTimeout time.Duration
}

// dropIn serves mini-app-mcp's directories (MINI_APP_USER_DIR,
// MINI_APP_PROJECT_DIR, or the legacy MINI_APP_SCHEMA + MINI_APP_DB, also
// read from ./.mini-app-mcp.env) to one local user, as mini-app-mcp --mcp
// (or, with hc.bind, --mcp-http) does: a private, temporary control plane
// mounts them as mi databases and the same tools run through the same
// pipeline, as role admin.
func dropIn(ctx context.Context, hc dropInHTTP, stdin io.Reader, stdout io.Writer, log *slog.Logger, maxPage int64, stmtTimeout time.Duration) error {
	ctx = stopSignals(ctx)
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
	// Each table's file is made at mount, as mini-app-mcp makes it when it
	// mounts a directory. This is the operator's setup of the sources,
	// before any tool runs and before the engine serves them, so it is
	// done here and not by package miniapp, whose tools reach table files
	// only through the engine.
	for _, dir := range local.Dirs() {
		if err := mi.CreateFiles(ctx, dir); err != nil {
			return err
		}
	}
	eng, err := engine.New(ctx, local.Store, engine.Config{StatementTimeout: stmtTimeout, Logger: log,
		RefreshInterval: time.Second, MissRefresh: time.Millisecond})
	if err != nil {
		return err
	}
	defer eng.Close()
	defer runEngine(ctx, eng)()
	ver := auth.NewVerifier(local.Store, local.Key)
	cfg := local.Config
	srv := mcp.New(mcp.Deps{Engine: eng, Verifier: ver, Store: local.Store, Sessions: sessions.New(local.Store, 0), MiniApp: cfg},
		mcp.Config{MaxPageSize: maxPage, BodyTimeout: hc.bodyTimeout, Version: version, Logger: log})
	if err := srv.PrimeMiniApp(ctx, local.Token); err != nil {
		return err
	}
	if hc.bind != "" {
		return serveDropInHTTP(ctx, srv, local.Token, hc, log)
	}
	return srv.ServeStdio(ctx, local.Token, stdin, stdout)
}

// serveDropInHTTP serves srv's drop-in tools at mcp.LocalPath on hc.bind
// until ctx is done (SIGINT, SIGTERM), then drains the requests in flight.
func serveDropInHTTP(ctx context.Context, srv *mcp.Server, token string, hc dropInHTTP, log *slog.Logger) error {
	h, end, err := srv.LocalHandler(ctx, mcp.LocalHTTP{Token: token, Bearer: hc.bearer})
	if err != nil {
		return err
	}
	defer end()
	ln, err := net.Listen("tcp", hc.bind)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, ConnContext: observe.ConnContext}
	log.Info("serving MCP over streamable HTTP", "addr", ln.Addr().String(), "path", mcp.LocalPath, "bearer", hc.bearer != "")
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(observe.CorkListener(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}
