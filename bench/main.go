package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	envDSN      = "MINIMAL_TEST_PG_DSN"
	benchSchema = "minimal_bench"
	benchTable  = "items"
	pageSize    = 100 // rows per page in the load phase
	pageCount   = 100 // pages asked for: [0, pageCount)
	warmup      = 2 * time.Second
	// serveDirectFlag re-executes this binary as the direct baseline.
	serveDirectFlag = "-serve-direct"
	// rssTargetMB is the streaming memory target.
	rssTargetMB = 100
	// ratioTarget is the throughput target of gateway over direct.
	ratioTarget = 0.80
	// strongKeyTarget and strongPageTarget are the throughput targets of
	// the gateway over the strong baseline: one row by key, a 100-row page.
	strongKeyTarget  = 0.80
	strongPageTarget = 1.0
	// scopedRounds and dialectRounds are the alternating rounds of the
	// scoped read, the strong baseline and MCP comparisons, and of the ma
	// and ch comparisons (a, b, b, a, …): shorter rounds than the main
	// comparison's, so that a burst of load from something else on the
	// machine weighs on both sides alike. The scoped ones are -duration/8
	// each (options.stretched): twelve of them, as eight left the median
	// of a comparison swinging by ±0.03 from run to run on a 2-core
	// machine, the width of the margin its target is judged by.
	// ClickHouse answers in hundreds of milliseconds here, hence fewer,
	// longer rounds for dialects (-duration/4 each).
	scopedRounds  = 12
	dialectRounds = 4
	// mcpRounds are the rounds of each MCP era against REST, of the same
	// length. Two rounds in a row of the same side differ by 7% (standard
	// deviation) on a 2-core machine running the gateway, PostgreSQL and
	// the clients, and the MCP/REST pairs of rounds by 0.06-0.13: the median
	// of twelve pairs moved by ±0.03 from run to run, three eras at a time,
	// against a margin of that size. Twenty pairs narrow that by a fifth,
	// for 20 s more an era.
	mcpRounds = 20
)

func main() {
	// -serve-direct ADDR [CODES] or -serve-direct=ADDR [CODES]; CODES is
	// a comma-separated list of the dialects to serve besides pg.
	if len(os.Args) >= 2 && (os.Args[1] == serveDirectFlag || strings.HasPrefix(os.Args[1], serveDirectFlag+"=")) {
		rest := os.Args[2:]
		addr, ok := strings.CutPrefix(os.Args[1], serveDirectFlag+"=")
		if !ok {
			if len(rest) < 1 {
				fmt.Fprintln(os.Stderr, "bench: -serve-direct needs an address")
				os.Exit(2)
			}
			addr, rest = rest[0], rest[1:]
		}
		var codes []string
		if len(rest) > 0 {
			for _, c := range strings.Split(rest[0], ",") {
				if c = strings.TrimSpace(c); c != "" {
					codes = append(codes, c)
				}
			}
		}
		os.Exit(serveDirect(addr, codes))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	duration    time.Duration
	concurrency int
	rows        int
	dialectRows int
	dialects    []string
	keep        bool
	bin         string
	// aggregateOnly measures only query_aggregate on the mi table.
	aggregateOnly bool
	// only names the one measure to run (onlyRestOps), "" for all.
	only string
}

// stretched returns o with its duration made rounds rounds of -duration/8,
// for a comparison in scopedRounds.
func (o options) stretched(rounds int) options {
	o.duration = o.duration * time.Duration(rounds) / 8
	return o
}

// The values of -only, each running one measure on pg only.
const (
	// onlyRestOps runs only restOpsPhase.
	onlyRestOps = "restops"
	// onlyMCP runs only mcpPhase (MCP auto_read_rows vs REST GET, every era).
	onlyMCP = "mcp"
	// onlyPK runs only strongPhase (1-row GET by key and the 100-row page
	// against the strong direct handler).
	onlyPK = "pk"
)

// logf prints a progress line to stderr.
var logf = func(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench %s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per side, split into two alternating rounds")
	fs.IntVar(&o.concurrency, "concurrency", 16, "concurrent keep-alive clients")
	fs.IntVar(&o.rows, "rows", 1000000, "rows in the bench table (and streamed in the RSS measure)")
	fs.IntVar(&o.dialectRows, "dialect-rows", 100000, "rows in the MariaDB and ClickHouse bench tables")
	dialectList := fs.String("dialects", "pg,ma,ch", "dialects compared gateway vs direct driver (pg always runs: the other measures need it)")
	fs.BoolVar(&o.keep, "keep", false, "keep schema "+benchSchema+" (and the "+benchDB+" databases) after the run")
	fs.StringVar(&o.bin, "bin", filepath.Join("bin", "minimal"), "gateway binary (make build)")
	fs.BoolVar(&o.aggregateOnly, "aggregate-only", false, "measure only query_aggregate over a -rows mi table (no database server needed)")
	fs.StringVar(&o.only, "only", "", "run only one measure, pg only: "+onlyRestOps+" (REST count=exact and agg= vs their SQL run directly), "+onlyMCP+" (MCP auto_read_rows vs REST GET in every era), "+onlyPK+" (1-row GET by key and the 100-row page vs the strong handler)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s=DSN go run ./bench [flags]\n\n", envDSN)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if o.concurrency < 1 || o.duration <= 0 {
		fmt.Fprintln(stderr, "bench: -concurrency and -duration must be positive")
		return 2
	}
	if o.rows < pageSize*pageCount {
		fmt.Fprintf(stderr, "bench: -rows must be at least %d (the load phase reads pages 0..%d of %d rows)\n", pageSize*pageCount, pageCount-1, pageSize)
		return 2
	}
	if o.dialectRows < pageSize*pageCount {
		fmt.Fprintf(stderr, "bench: -dialect-rows must be at least %d (the load phase reads pages 0..%d of %d rows)\n", pageSize*pageCount, pageCount-1, pageSize)
		return 2
	}
	var err error
	if o.dialects, err = parseDialects(*dialectList); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	switch o.only {
	case "":
	case onlyRestOps, onlyMCP, onlyPK:
		o.dialects = []string{"pg"}
	default:
		fmt.Fprintf(stderr, "bench: -only %q is not %s, %s or %s\n", o.only, onlyRestOps, onlyMCP, onlyPK)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	sum, err := bench(ctx, o)
	if sum != nil {
		sum.print(stdout)
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "bench: interrupted")
			return 130
		}
		fmt.Fprintln(stderr, "bench: FAILED:", err)
		return 1
	}
	return 0
}

// bench runs every step; deferred cleanups stop the children, drop the
// schema and databases and remove the temporary directory whatever happens.
func bench(ctx context.Context, o options) (_ *summary, err error) {
	if o.aggregateOnly {
		return benchAggregate(ctx, o)
	}
	dsn := strings.TrimSpace(os.Getenv(envDSN))
	if dsn == "" {
		return nil, fmt.Errorf("%s is not set: point it at a PostgreSQL database where the bench may create schema %s (make bench sets it from scripts/services.sh)", envDSN, benchSchema)
	}
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return nil, fmt.Errorf("gateway binary %s not found: run `make build` first (or pass -bin)", o.bin)
	}

	tmp, err := os.MkdirTemp("", "minimal-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	logDir := filepath.Join(tmp, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}

	// 1. Data.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL (%s): %w", envDSN, err)
	}
	defer conn.Close(context.Background())
	pgVersion := serverVersion(ctx, conn)
	logf("PostgreSQL %s; creating %s.%s with %d rows", pgVersion, benchSchema, benchTable, o.rows)
	schemaMade := false
	defer func() {
		if !schemaMade {
			return
		}
		if o.keep {
			logf("keeping schema %s (-keep)", benchSchema)
			return
		}
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, derr := conn.Exec(cctx, "DROP SCHEMA IF EXISTS "+benchSchema+" CASCADE"); derr != nil {
			logf("could not drop schema %s: %v", benchSchema, derr)
			if err == nil {
				err = fmt.Errorf("drop schema: %w", derr)
			}
			return
		}
		logf("dropped schema %s", benchSchema)
	}()
	schemaMade = true
	t0 := time.Now()
	if err := createData(ctx, conn, o.rows); err != nil {
		return nil, err
	}
	logf("data ready in %.1f s", time.Since(t0).Seconds())

	sum := &summary{pgVersion: pgVersion, cores: runtime.NumCPU(), concurrency: o.concurrency, rows: o.rows}
	pgLine := &dialectLine{code: "pg", product: "PostgreSQL", version: pgVersion, rows: o.rows}
	sum.dialects = append(sum.dialects, pgLine)
	// The other dialects: a failure there is reported on its line and
	// fails the run at the end, after everything else was measured.
	var others []*dialectLine
	for _, spec := range dialectSpecs[1:] {
		l := &dialectLine{code: spec.code, product: spec.product, rows: o.dialectRows}
		sum.dialects = append(sum.dialects, l)
		l.dsn = strings.TrimSpace(os.Getenv(spec.env))
		switch {
		case !slices.Contains(o.dialects, spec.code):
			l.skipped = "not in -dialects"
			continue
		case l.dsn == "":
			l.skipped = spec.env + " is not set (make bench sets it from scripts/services.sh)"
			continue
		}
		setup := setupMA
		if spec.code == "ch" {
			setup = setupCH
		}
		logf("%s: creating %s.%s with %d rows", spec.product, benchDB, benchTable, o.dialectRows)
		t0 := time.Now()
		version, drop, serr := setup(ctx, l.dsn, o.dialectRows)
		l.version = version
		if drop != nil {
			defer func() {
				if o.keep {
					logf("keeping %s database %s (-keep)", spec.product, benchDB)
					return
				}
				if derr := drop(); derr != nil {
					logf("could not drop %s database %s: %v", spec.product, benchDB, derr)
					return
				}
				logf("dropped %s database %s", spec.product, benchDB)
			}()
		}
		if serr != nil {
			if ctx.Err() != nil {
				return sum, ctx.Err()
			}
			l.fail(serr)
			continue
		}
		logf("%s %s: data ready in %.1f s", spec.product, version, time.Since(t0).Seconds())
		others = append(others, l)
	}
	// failed reports the other dialects' failures once all is done.
	failed := func() error {
		var errs []error
		for _, l := range sum.dialects {
			if l.err != "" {
				errs = append(errs, fmt.Errorf("dialect %s: %s", l.code, l.err))
			}
		}
		return errors.Join(errs...)
	}
	kids := &children{}
	defer kids.stopAll()

	// 2. Gateway.
	dataDir := filepath.Join(tmp, "data")
	gwCfg := gatewayConfig{bin: bin, dataDir: dataDir, logDir: logDir, maxPage: max(2000000, o.rows)}
	gw, err := startGateway(ctx, kids, gwCfg)
	if err != nil {
		return sum, err
	}
	if err := registerSchema(ctx, gwCfg, "pg", benchSchema, dsn); err != nil {
		return sum, err
	}
	for _, l := range others {
		if err := registerSchema(ctx, gwCfg, l.code, benchDB, l.dsn); err != nil {
			if ctx.Err() != nil {
				return sum, ctx.Err()
			}
			l.fail(err)
		}
	}
	token, err := readToken(dataDir)
	if err != nil {
		return sum, err
	}
	apiBase := "http://" + gw.addr + "/minimal/api/rest/auto/v1/demo/demo/"
	gwBase := apiBase + "pg/" + benchSchema + "/" + benchTable
	if err := waitTable(ctx, gw, gwBase, token, 30*time.Second); err != nil {
		return sum, err
	}
	logf("gateway pid %d on %s serves %s.%s", gw.pid(), gw.addr, benchSchema, benchTable)
	if o.only == onlyRestOps {
		return sum, restOpsPhase(ctx, gwBase, token, conn, sum)
	}
	for _, l := range others {
		if l.err != "" {
			continue
		}
		if err := waitTable(ctx, gw, apiBase+l.code+"/"+benchDB+"/"+benchTable, token, 30*time.Second); err != nil {
			if ctx.Err() != nil {
				return sum, ctx.Err()
			}
			l.fail(err)
			continue
		}
		logf("gateway serves %s/%s.%s", l.code, benchDB, benchTable)
	}
	analystToken, err := setupAnalyst(ctx, gwCfg, tmp)
	if err != nil {
		return sum, err
	}
	// The running gateway picks the policy up within about a second.
	if err := waitTable(ctx, gw, gwBase, analystToken, 30*time.Second); err != nil {
		return sum, fmt.Errorf("as %s: %w", analystIdentity, err)
	}
	logf("identity %s (role %s, claims {grp: %d}) reads %s", analystIdentity, analystRole, analystGroup, benchObject)
	readerToken, err := mintToken(ctx, gwCfg, readerIdentity)
	if err != nil {
		return sum, err
	}

	if o.only == onlyMCP {
		return sum, mcpPhase(ctx, gw, dataDir, gwBase, token, readerToken, o, sum)
	}

	// 3. Direct baseline.
	self, err := os.Executable()
	if err != nil {
		return sum, err
	}
	var codes []string
	for _, l := range others {
		if l.err == "" {
			codes = append(codes, l.code)
		}
	}
	direct, err := startDirect(ctx, kids, self, logDir, codes)
	if err != nil {
		return sum, err
	}
	directRoot := "http://" + direct.addr
	directBase := directRoot + "/items"
	logf("direct baseline pid %d on %s", direct.pid(), direct.addr)

	// Same page, same values, from both: the baseline does the same work.
	g := newTarget("gateway", gwBase, token, gw.pid(), o.concurrency, allRows)
	d := newTarget("direct", directBase, token, direct.pid(), o.concurrency, allRows)
	if err := crossCheck(ctx, g, d, dialectColumns); err != nil {
		return sum, fmt.Errorf("gateway and direct disagree: %w", err)
	}
	logf("cross-check: page 3 identical on both sides")

	if o.only == onlyPK {
		return sum, strongPhase(ctx, g, gwBase, directRoot, token, gw.pid(), direct.pid(), o, sum)
	}

	// 4. Load.
	if err := loadPhase(ctx, g, d, o, sum); err != nil {
		return sum, err
	}
	pgLine.gateway, pgLine.direct, pgLine.done = sum.gateway, sum.direct, true

	// 4a. The strong baseline: the 100-row page, and one row by its key.
	if err := strongPhase(ctx, g, gwBase, directRoot, token, gw.pid(), direct.pid(), o, sum); err != nil {
		return sum, err
	}
	// 4a'. The database's own ceiling for the page's statement.
	if err := ceilingPhase(ctx, g, dsn, tmp, o, sum); err != nil {
		return sum, err
	}

	// 4b. Scoped, column-limited read vs the admin's equivalent query.
	an := newTarget("analyst", gwBase, analystToken, gw.pid(), o.concurrency, scopedPages(o.rows))
	ad := newTarget("admin", gwBase, token, gw.pid(), o.concurrency, adminEquivalent(o.rows))
	if err := crossCheck(ctx, an, ad, analystColumns); err != nil {
		return sum, fmt.Errorf("scoped read and the admin's equivalent disagree: %w", err)
	}
	logf("cross-check: page 3 of the scoped read identical to the admin's (%d pages of rows with grp = %d)", len(an.urls), analystGroup)
	as, ads, failures, err := compare(ctx, an, ad, o.stretched(scopedRounds), scopedRounds, true, sum)
	if err != nil {
		return sum, err
	}
	sum.analyst, sum.admin, sum.scopedDone, sum.scopedPages = as, ads, true, len(an.urls)
	if failures > 0 {
		return sum, fmt.Errorf("%d requests failed in the scoped read", failures)
	}

	// 4b'. MCP auto_read_rows vs the REST GET of the same page.
	if err := mcpPhase(ctx, gw, dataDir, gwBase, token, readerToken, o, sum); err != nil {
		return sum, err
	}

	// 4c. The other dialects, gateway vs direct driver.
	for _, l := range others {
		if l.err != "" {
			continue
		}
		lg := newTarget(l.code+" gateway", apiBase+l.code+"/"+benchDB+"/"+benchTable, token, gw.pid(), o.concurrency, allRows)
		ld := newTarget(l.code+" direct", directRoot+"/"+l.code+"/items", token, direct.pid(), o.concurrency, allRows)
		if err := crossCheck(ctx, lg, ld, dialectColumns); err != nil {
			if ctx.Err() != nil {
				return sum, ctx.Err()
			}
			l.fail(fmt.Errorf("gateway and direct disagree: %w", err))
			continue
		}
		logf("cross-check %s: page 3 identical on both sides", l.code)
		gs, ds, failures, err := compare(ctx, lg, ld, o, dialectRounds, true, sum)
		if err != nil {
			return sum, err
		}
		l.gateway, l.direct, l.done = gs, ds, true
		if failures > 0 {
			l.fail(fmt.Errorf("%d requests failed", failures))
		}
		// The database's own ceiling for the page's statement.
		if err := driverCeiling(ctx, lg, l, o); err != nil {
			if ctx.Err() != nil {
				return sum, ctx.Err()
			}
			l.fail(fmt.Errorf("ceiling: %w", err))
		}
	}
	// The load phase is over: free the CPU the baseline might still use.
	direct.stop()

	// 4d. REST count=exact and agg= reads vs their SQL run directly.
	if err := restOpsPhase(ctx, gwBase, token, conn, sum); err != nil {
		return sum, fmt.Errorf("REST count and aggregates: %w", err)
	}

	// 5. Streaming RSS, each format on a fresh gateway.
	for _, format := range []string{"csv", "json"} {
		gw.stop()
		gw, err = startGateway(ctx, kids, gwCfg)
		if err != nil {
			return sum, err
		}
		base := "http://" + gw.addr + "/minimal/api/rest/auto/v1/demo/demo/pg/" + benchSchema + "/" + benchTable
		if err := waitTable(ctx, gw, base, token, 30*time.Second); err != nil {
			return sum, err
		}
		sr, err := streamOnce(ctx, gw, base, token, format, o.rows)
		if sr != nil {
			sum.streams = append(sum.streams, *sr)
		}
		if err != nil {
			return sum, fmt.Errorf("stream %s: %w", format, err)
		}
	}
	gw.stop()

	// 6. query_aggregate over the mi table, on a fresh gateway.
	if err := aggregatePhase(ctx, kids, gwCfg, o.rows, sum); err != nil {
		return sum, err
	}
	return sum, failed()
}

// benchAggregate is the run of -aggregate-only: a gateway on a fresh data
// dir and query_aggregate over its mi table.
func benchAggregate(ctx context.Context, o options) (*summary, error) {
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return nil, fmt.Errorf("gateway binary %s not found: run `make build` first (or pass -bin)", o.bin)
	}
	tmp, err := os.MkdirTemp("", "minimal-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	logDir := filepath.Join(tmp, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	kids := &children{}
	defer kids.stopAll()
	sum := &summary{cores: runtime.NumCPU(), rows: o.rows}
	cfg := gatewayConfig{bin: bin, dataDir: filepath.Join(tmp, "data"), logDir: logDir, maxPage: max(2000000, o.rows)}
	return sum, aggregatePhase(ctx, kids, cfg, o.rows, sum)
}

func serverVersion(ctx context.Context, conn *pgx.Conn) string {
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "?"
	}
	if i := strings.IndexByte(v, ' '); i > 0 {
		v = v[:i]
	}
	return v
}

// strongPhase compares the gateway with the strong baseline: g's 100-row
// pages, and one row read by its primary key.
func strongPhase(ctx context.Context, g *target, gwBase, directRoot, token string, gwPID, directPID int, o options, sum *summary) error {
	page := newTarget("strong", directRoot+"/strong/items", token, directPID, o.concurrency, allRows)
	gk := newKeyTarget("gateway 1", func(id int64) string { return fmt.Sprintf("%s?ps=1&pg=0&id=eq.%d", gwBase, id) }, token, gwPID, o.concurrency)
	sk := newKeyTarget("strong 1", func(id int64) string { return fmt.Sprintf("%s/strong/item?id=%d", directRoot, id) }, token, directPID, o.concurrency)
	for _, c := range []struct {
		name   string
		a, b   *target
		target float64
	}{
		{"1-row GET by primary key", gk, sk, strongKeyTarget},
		{"100-row page by id", g, page, strongPageTarget},
	} {
		if err := crossCheck(ctx, c.a, c.b, dialectColumns); err != nil {
			return fmt.Errorf("%s: gateway and strong baseline disagree: %w", c.name, err)
		}
		gs, ss, failures, err := compare(ctx, c.a, c.b, o.stretched(scopedRounds), scopedRounds, true, sum)
		if err != nil {
			return err
		}
		sum.strong = append(sum.strong, strongLine{name: c.name, gateway: gs, strong: ss, target: c.target})
		if failures > 0 {
			return fmt.Errorf("%d requests failed in the %s comparison", failures, c.name)
		}
	}
	return nil
}
