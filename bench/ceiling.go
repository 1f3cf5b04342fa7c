package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// The database's own ceiling: pgbench runs the statement the 100-row page
// needs — the same SELECT, ORDER BY id, 100 rows at a random page of the
// first 100 — with a custom script at the bench's concurrency, prepared,
// in rounds interleaved with the gateway's. The gateway's throughput as a
// fraction of it is the share of what PostgreSQL itself serves that the
// gateway delivers over HTTP, with its permission pipeline and JSON.

// ceilingRounds are the rounds of each side (gateway, pgbench, pgbench,
// gateway, …).
const ceilingRounds = 4

// ceilingScript is pgbench's custom script.
const ceilingScript = `\set off 100 * random(0, 99)
SELECT id, name, price, qty, active, created, note, grp FROM ` + benchSchema + `.` + benchTable + ` ORDER BY id LIMIT 100 OFFSET :off;
`

// ceilingResult is the gateway's 100-row page against pgbench's.
type ceilingResult struct {
	// how names the ceiling's client ("" for pgbench).
	how     string
	gateway sideStats
	tps     []float64 // pgbench's transactions per second, each round
	skipped string    // why it was not measured
}

// fraction is the median over the rounds of gateway req/s over pgbench's
// tps in the same round pair.
func (c *ceilingResult) fraction() float64 {
	return medianRatio(c.gateway, sideStats{rounds: c.tps})
}

var tpsLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)

// ceilingPhase measures g (the gateway's 100-row pages) and pgbench
// alternately. Without pgbench on PATH the result says so.
func ceilingPhase(ctx context.Context, g *target, dsn, tmp string, o options, sum *summary) error {
	c := &ceilingResult{}
	sum.ceiling = c
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		c.skipped = "pgbench not found on PATH (it comes with PostgreSQL's client or contrib packages)"
		logf("ceiling: %s", c.skipped)
		return nil
	}
	script := filepath.Join(tmp, "ceiling.sql")
	if err := os.WriteFile(script, []byte(ceilingScript), 0o644); err != nil {
		return err
	}
	run := func(seconds int) (float64, error) {
		cmd := exec.CommandContext(ctx, pgbench, "-n", "-M", "prepared", "-c", strconv.Itoa(o.concurrency),
			"-j", strconv.Itoa(min(o.concurrency, runtime.NumCPU())), "-T", strconv.Itoa(seconds), "-f", script, dsn)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("pgbench: %w: %.300s", err, out)
		}
		m := tpsLine.FindSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("pgbench printed no tps: %.300s", out)
		}
		return strconv.ParseFloat(string(m[1]), 64)
	}
	return interleaveCeiling(ctx, g, "pgbench", o, c, run)
}

// interleaveCeiling measures g and the database's own ceiling (run, which
// answers in queries per second for a number of seconds) in alternating
// rounds, after a one-second warm-up of run, and fills c.
func interleaveCeiling(ctx context.Context, g *target, label string, o options, c *ceilingResult, run func(seconds int) (float64, error)) error {
	secs := max(1, int(o.duration.Seconds())/ceilingRounds)
	logf("ceiling: %s warm-up", label)
	if _, err := run(1); err != nil {
		return err
	}
	var phases []*phase
	for round := 1; round <= ceilingRounds; round++ {
		gatewayFirst := round%2 == 1
		for _, gatewaySide := range []bool{gatewayFirst, !gatewayFirst} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if gatewaySide {
				p := runPhase(ctx, g, strconv.Itoa(round), o.concurrency, time.Duration(secs)*time.Second)
				if p.failures > 0 {
					return fmt.Errorf("ceiling: %d gateway requests failed, first: %s", p.failures, p.firstErr)
				}
				logf("ceiling   %s  round %d  %6.0f req/s  server CPU %s/req", g.name, round, p.rps(), micros(p.cpuPerReq()))
				phases = append(phases, p)
				continue
			}
			tps, err := run(secs)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return err
			}
			logf("ceiling   %s  round %d  %6.0f queries/s", label, round, tps)
			c.tps = append(c.tps, tps)
		}
	}
	c.gateway = merge(g.name, phases)
	if len(c.tps) == 0 {
		return fmt.Errorf("ceiling: no %s round", label)
	}
	return nil
}

// The ceilings of MariaDB and ClickHouse: neither ships a benchmark client
// that runs a custom statement the way pgbench does (mysqlslap has no
// random parameter; clickhouse-benchmark is not in ClickHouse 18.16's
// packages), so a tight loop of the Go driver the gateway uses runs the
// page's statement — the same SELECT, ORDER BY id, 100 rows at a random
// page of the first 100 — prepared (MariaDB) or through the native
// protocol (ClickHouse), at the bench's concurrency, scanning every row
// and doing nothing else.

// driverLoop runs query at concurrency for seconds and returns the
// completed queries per second; an error of any query stops the loop.
func driverLoop(ctx context.Context, concurrency, seconds int, query func(ctx context.Context, off int) error) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var done atomic.Int64
	var first error
	var once sync.Once
	start := time.Now()
	deadline := start.Add(time.Duration(seconds) * time.Second)
	var wg sync.WaitGroup
	for w := range concurrency {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(w)))
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if err := query(ctx, pageSize*rng.IntN(pageCount)); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return float64(done.Load()) / time.Since(start).Seconds(), nil
}

// scanAll reads every row of rows into a T and reports how many rows came.
func scanAll[T any, PT scannable[T]](rows pageRows) (int, error) {
	n := 0
	for rows.Next() {
		var it T
		if err := rows.Scan(PT(&it).fields()...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// driverCeiling measures the gateway's 100-row pages of l's table (g)
// against the tight driver loop of l's dialect, in interleaved rounds.
func driverCeiling(ctx context.Context, g *target, l *dialectLine, o options) error {
	c := &ceilingResult{how: "tight driver loop"}
	l.ceiling = c
	var query func(ctx context.Context, off int) error
	switch l.code {
	case "ma":
		db, err := openMA(l.dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		db.SetMaxIdleConns(max(8, o.concurrency))
		stmt, err := db.PrepareContext(ctx, maSelect)
		if err != nil {
			return err
		}
		defer stmt.Close()
		c.how = "go-sql-driver/mysql, prepared, tight loop"
		query = func(ctx context.Context, off int) error {
			rows, err := stmt.QueryContext(ctx, pageSize, off)
			if err != nil {
				return err
			}
			defer rows.Close()
			n, err := scanAll[item](rows)
			if err == nil && n != pageSize {
				err = fmt.Errorf("%d rows at offset %d, want %d", n, off, pageSize)
			}
			return err
		}
	case "ch":
		opts, err := clickhouse.ParseDSN(l.dsn)
		if err != nil {
			return fmt.Errorf("%s: %w", envCHDSN, err)
		}
		// One connection per loop, as the gateway's pool allows.
		opts.MaxOpenConns, opts.MaxIdleConns = o.concurrency, o.concurrency
		conn, err := clickhouse.Open(opts)
		if err != nil {
			return err
		}
		defer conn.Close()
		c.how = "clickhouse-go/v2, native protocol, tight loop"
		query = func(ctx context.Context, off int) error {
			rows, err := conn.Query(ctx, chSelect, pageSize, off)
			if err != nil {
				return err
			}
			defer rows.Close()
			n, err := scanAll[chItem](rows)
			if err == nil && n != pageSize {
				err = fmt.Errorf("%d rows at offset %d, want %d", n, off, pageSize)
			}
			return err
		}
	default:
		return fmt.Errorf("no driver ceiling for dialect %s", l.code)
	}
	return interleaveCeiling(ctx, g, l.code+" driver loop", o, c, func(seconds int) (float64, error) {
		return driverLoop(ctx, o.concurrency, seconds, query)
	})
}
