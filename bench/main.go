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
)

func main() {
	if len(os.Args) >= 2 && (os.Args[1] == serveDirectFlag || strings.HasPrefix(os.Args[1], serveDirectFlag+"=")) {
		addr, ok := strings.CutPrefix(os.Args[1], serveDirectFlag+"=")
		if !ok {
			if len(os.Args) < 3 {
				fmt.Fprintln(os.Stderr, "bench: -serve-direct needs an address")
				os.Exit(2)
			}
			addr = os.Args[2]
		}
		os.Exit(serveDirect(addr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	duration    time.Duration
	concurrency int
	rows        int
	keep        bool
	bin         string
}

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
	fs.BoolVar(&o.keep, "keep", false, "keep schema "+benchSchema+" after the run")
	fs.StringVar(&o.bin, "bin", filepath.Join("bin", "minimal"), "gateway binary (make build)")
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
// schema and remove the temporary directory whatever happens.
func bench(ctx context.Context, o options) (_ *summary, err error) {
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
	kids := &children{}
	defer kids.stopAll()

	// 2. Gateway.
	dataDir := filepath.Join(tmp, "data")
	gwCfg := gatewayConfig{bin: bin, dataDir: dataDir, logDir: logDir, maxPage: max(2000000, o.rows)}
	gw, err := startGateway(ctx, kids, gwCfg)
	if err != nil {
		return nil, err
	}
	if err := registerSchema(ctx, gwCfg, dsn); err != nil {
		return nil, err
	}
	token, err := readToken(dataDir)
	if err != nil {
		return nil, err
	}
	gwBase := "http://" + gw.addr + "/minimal/api/rest/auto/v1/demo/demo/pg/" + benchSchema + "/" + benchTable
	if err := waitTable(ctx, gw, gwBase, token, 30*time.Second); err != nil {
		return nil, err
	}
	logf("gateway pid %d on %s serves %s.%s", gw.pid(), gw.addr, benchSchema, benchTable)

	// 3. Direct baseline.
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	direct, err := startDirect(ctx, kids, self, logDir)
	if err != nil {
		return nil, err
	}
	directBase := "http://" + direct.addr + "/items"
	logf("direct baseline pid %d on %s", direct.pid(), direct.addr)

	// Same page, same values, from both: the baseline does the same work.
	if err := crossCheck(ctx, gwBase, directBase, token); err != nil {
		return nil, fmt.Errorf("gateway and direct disagree: %w", err)
	}
	logf("cross-check: page 3 identical on both sides")

	// 4. Load.
	g := newTarget("gateway", gwBase, token, gw.pid(), o.concurrency)
	d := newTarget("direct", directBase, token, direct.pid(), o.concurrency)
	if err := loadPhase(ctx, g, d, o, sum); err != nil {
		return sum, err
	}
	// The load phase is over: free the CPU the baseline might still use.
	direct.stop()

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
	return sum, nil
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
