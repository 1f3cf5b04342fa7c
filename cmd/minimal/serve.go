package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/bootstrap"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/mcp"
	"github.com/littlebitlabs/minimal/observe"
	"github.com/littlebitlabs/minimal/sessions"
	"github.com/littlebitlabs/minimal/store"
)

func cmdServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	dataDir := dataDirFlag(fs)
	controlDSN := fs.String("control-dsn", "", "PostgreSQL control plane shared by several replicas (default: env "+store.EnvControlDSN+"; neither: the SQLite file in the data dir)")
	restAddr := fs.String("rest-addr", envOr(envRestAddr, "127.0.0.1:8080"), "REST listen address (env "+envRestAddr+")")
	mcpAddr := fs.String("mcp-addr", envOr(envMCPAddr, "127.0.0.1:8484"), "MCP listen address, POST "+mcp.Path+" (env "+envMCPAddr+")")
	logger := logFormatFlag(fs, stderr)
	sessionIdle := fs.Duration("session-idle", 30*time.Minute, "an AI session expires after this long without a call")
	maxBody := fs.Int64("max-body-bytes", 10<<20, "largest request body accepted (413 above)")
	maxPage := fs.Int64("max-page-size", 10000, "largest ps accepted (400 above)")
	stmtTimeout := fs.Duration("statement-timeout", 30*time.Second, "bound on every database statement")
	headerTimeout := fs.Duration("read-header-timeout", 10*time.Second, "time allowed to read request headers")
	bodyTimeout := bodyTimeoutFlag(fs)
	maxHeader := fs.Int("max-header-bytes", 64<<10, "largest request header block")
	maxConns := fs.Int("max-conns", 0, "pool size per database, every type (0: max(4, CPUs))")
	dbAllow := dbAllowFlag(fs)
	shutdownGrace := fs.Duration("shutdown-grace", 20*time.Second, "time in-flight requests get to finish on SIGTERM")
	refreshInterval := refreshIntervalFlag(fs)
	acquireTimeout := fs.Duration("acquire-timeout", 5*time.Second, "longest wait for a pooled connection of a database (504 past it; 0: no bound but the request)")
	rateLimit := fs.Float64("rate-limit", 0, "requests per second allowed to each identity across both faces (429 above; 0: off)")
	rateBurst := fs.Int("rate-burst", 0, "requests an identity may make at once (0: the rate, rounded up)")
	metricsOn := fs.Bool("metrics", true, "serve Prometheus metrics at GET /metrics on the REST listener")
	metricsTenant, metricsTenantErr := metricsTenantLabelsFlag(fs)
	auditQueue := fs.Int("audit-queue", store.DefaultAuditQueue, "audit entries queued for the store before new ones are dropped (and counted)")
	exportRoots := exportRootFlag(fs)
	corsOrigins := fs.String("cors-origins", os.Getenv(envCORSOrigins), "origins browser applications may call the REST API from: comma-separated scheme://host[:port], or * for any (env "+envCORSOrigins+"; empty: CORS off)")
	consoleOn := consoleFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	if err := checkDataDir(*dataDir); err != nil {
		return err
	}
	if metricsTenantErr != nil {
		return metricsTenantErr
	}
	switch {
	case *rateLimit < 0:
		return usagef("serve: --rate-limit must not be negative")
	case *rateBurst < 0:
		return usagef("serve: --rate-burst must not be negative")
	case *acquireTimeout < 0:
		return usagef("serve: --acquire-timeout must not be negative")
	case *refreshInterval <= 0:
		return usagef("serve: --refresh-interval (env %s) must be a positive duration", envRefreshInterval)
	case *bodyTimeout <= 0:
		return usagef("serve: --body-timeout (env %s) must be a positive duration", envBodyTimeout)
	}
	for _, a := range []struct{ flag, addr string }{{"--rest-addr", *restAddr}, {"--mcp-addr", *mcpAddr}} {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return usagef("serve: %s %q is not HOST:PORT (e.g. 127.0.0.1:8080, :8080): %v", a.flag, a.addr, err)
		}
	}
	allow, err := dbAllow()
	if err != nil {
		return err
	}
	origins, err := api.ParseCORSOrigins(*corsOrigins)
	if err != nil {
		return usagef("serve: --cors-origins (env %s): %s", envCORSOrigins, fault.As(err).Message)
	}
	// Records logged with a request's context carry its request id.
	log, closeLog, err := logger()
	if err != nil {
		return err
	}
	defer closeLog()

	ctx = stopSignals(ctx)

	privateFiles() // every file written under the data dir is 0600, every directory 0700
	if *controlDSN == "" {
		*controlDSN = os.Getenv(store.EnvControlDSN)
	}
	st, err := store.OpenControl(ctx, *dataDir, *controlDSN)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		return err
	}
	ver := auth.NewVerifier(st, key)
	go ver.Follow(ctx) // writes through any replica reach live tokens at once
	files, err := bootstrap.Ensure(ctx, st, *dataDir, key, ver, log)
	if err != nil {
		return err
	}
	for _, f := range files {
		log.Info("token file ready", "path", f)
	}

	stopTracing, tracing, err := observe.StartTracing(ctx, os.Getenv, version)
	if err != nil {
		return err
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(tctx); err != nil {
			log.Warn("trace spans not fully exported", "err", err)
		}
	}()
	if tracing {
		log.Info("tracing on: spans exported over OTLP/HTTP", "endpoint", firstSet(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "http://localhost:4318"))
	}

	var metrics *observe.Metrics
	if *metricsOn {
		metrics = observe.NewMetrics(version)
	}
	limiter := observe.NewLimiter(*rateLimit, *rateBurst, metrics)
	// The audit writer is closed (and flushed) before the store: defers run
	// in reverse.
	audit := store.NewAuditWriter(st, *auditQueue, log)
	defer func() {
		actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := audit.Close(actx); err != nil {
			log.Warn("audit log not fully flushed", "err", err)
		}
	}()
	metrics.WatchAudit(func() observe.AuditStats {
		a := audit.Stats()
		return observe.AuditStats{Queued: int64(a.Queued), Written: a.Written, DroppedFull: a.DroppedFull, DroppedError: a.DroppedError}
	})

	mini, err := gatewayMiniApp(*dataDir, *exportRoots)
	if err != nil {
		return err
	}
	eng, err := engine.New(ctx, st, engine.Config{
		StatementTimeout: *stmtTimeout, MaxConns: *maxConns, AcquireTimeout: *acquireTimeout, Logger: log,
		Audit: audit, RefreshInterval: *refreshInterval, Refused: func(ctx context.Context, g engine.RefusalGate) { metrics.Refused(ctx, string(g)) },
	})
	if err != nil {
		return err
	}
	defer eng.Close()
	defer runEngine(ctx, eng)()

	srv := &http.Server{
		Handler: api.New(api.Deps{Engine: eng, Verifier: ver, Store: st, SigningKey: key},
			api.Config{MaxBodyBytes: *maxBody, MaxPageSize: *maxPage, BodyTimeout: *bodyTimeout, Logger: log, Metrics: metrics, MetricsTenantLabels: *metricsTenant, Limiter: limiter, DBAllow: allow, CORSOrigins: origins}),
		ReadHeaderTimeout: *headerTimeout,
		MaxHeaderBytes:    *maxHeader,
		IdleTimeout:       2 * time.Minute,
	}
	srv.Handler = restHandler(srv.Handler, *consoleOn, st, key, metrics, log)
	mcpSrv := &http.Server{
		Handler: mcpHandler(mcp.New(mcp.Deps{Engine: eng, Verifier: ver, Store: st, Sessions: sessions.New(st, *sessionIdle), MiniApp: mini},
			mcp.Config{MaxBodyBytes: *maxBody, MaxPageSize: *maxPage, BodyTimeout: *bodyTimeout, Version: version, Logger: log}).Handler(), ver, metrics, limiter, log),
		ReadHeaderTimeout: *headerTimeout,
		MaxHeaderBytes:    *maxHeader,
		IdleTimeout:       2 * time.Minute,
		// A tool's answer (a page of rows) leaves in one write
		// (observe.CorkListener, mcp's writeJSON).
		ConnContext: observe.ConnContext,
	}
	ln, err := net.Listen("tcp", *restAddr)
	if err != nil {
		return fmt.Errorf("serve: --rest-addr (env %s): %w", envRestAddr, err)
	}
	mln, err := net.Listen("tcp", *mcpAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("serve: --mcp-addr (env %s): %w", envMCPAddr, err)
	}
	log.Info("serving REST", "addr", ln.Addr().String(), "data_dir", *dataDir, "control_plane", st.Backend())
	log.Info("serving MCP", "addr", mln.Addr().String(), "path", mcp.Path)
	observe.ServeProfiles(log)
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	go func() { errc <- mcpSrv.Serve(observe.CorkListener(mln)) }()
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

// runEngine runs eng's catalog refresh until the returned function is
// called, which stops it and waits for it: deferred after the store's
// Close, it ends the refresh before the store closes (no "catalog refresh
// failed" on the way out).
func runEngine(ctx context.Context, eng *engine.Engine) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		eng.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// mcpHandler puts the MCP face behind the same request ids, request log,
// metrics and per-identity rate limit as the REST face. The limit keys on
// the verified identity of the token (verification is cached for a
// second, so the credential layer behind it does not pay twice); requests
// without a valid token pass through to be refused by that layer.
func mcpHandler(h http.Handler, ver *auth.Verifier, m *observe.Metrics, l *observe.Limiter, log *slog.Logger) http.Handler {
	identify := func(r *http.Request) string {
		raw, err := auth.FromRequest(r)
		if err != nil {
			return ""
		}
		p, err := ver.Verify(r.Context(), raw)
		if err != nil {
			return ""
		}
		return p.IdentityID
	}
	return observe.Middleware(observe.FaceMCP, m, log)(observe.RateLimit(l, identify)(h))
}

// envCORSOrigins sets the default of --cors-origins.
const envCORSOrigins = "MINIMAL_CORS_ORIGINS"

// envBodyTimeout sets the default of --body-timeout.
const envBodyTimeout = "MINIMAL_BODY_TIMEOUT"

// bodyTimeoutFlag defines --body-timeout: the time a request gets to send
// its body once its headers are in (default: env MINIMAL_BODY_TIMEOUT, else
// observe.DefaultBodyTimeout). An environment value that is not a duration
// makes the default 0, which the caller refuses unless the flag is given.
func bodyTimeoutFlag(fs *flag.FlagSet) *time.Duration {
	d := observe.DefaultBodyTimeout
	if v := os.Getenv(envBodyTimeout); v != "" {
		d, _ = time.ParseDuration(v)
	}
	return fs.Duration("body-timeout", d, "time a request gets to send its body after its headers: 408 and the connection closed past it (env "+envBodyTimeout+")")
}

// envMetricsTenantLabels opts in to org and project names in the metrics
// (--metrics-tenant-labels): a boolean such as 1 or true.
const envMetricsTenantLabels = "MINIMAL_METRICS_TENANT_LABELS"

// metricsTenantLabelsFlag defines --metrics-tenant-labels (default: env
// MINIMAL_METRICS_TENANT_LABELS, else false). The error is for an
// environment value that is not a boolean.
func metricsTenantLabelsFlag(fs *flag.FlagSet) (*bool, error) {
	var on bool
	var err error
	if v := os.Getenv(envMetricsTenantLabels); v != "" {
		if on, err = strconv.ParseBool(v); err != nil {
			err = usagef("serve: %s=%q is not a boolean (1, true, 0, false)", envMetricsTenantLabels, v)
		}
	}
	return fs.Bool("metrics-tenant-labels", on, "name database pools in /metrics by org/project/type/schema, not by registration id: anyone who reads /metrics learns them (env "+envMetricsTenantLabels+"=1)"), err
}

// The environment defaults of --rest-addr and --mcp-addr (make run passes
// them through).
const (
	envRestAddr = "MINIMAL_REST_ADDR"
	envMCPAddr  = "MINIMAL_MCP_ADDR"
)

// envOr returns the value of the environment variable key, or def when it
// is unset or empty.
func envOr(key, def string) string { return firstSet(os.Getenv(key), def) }

// firstSet returns the first of vs that is not empty.
func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
