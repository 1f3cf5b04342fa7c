package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"time"
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
	secs := max(1, int(o.duration.Seconds())/ceilingRounds)
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
	logf("ceiling: pgbench warm-up")
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
				logf("ceiling   gateway  round %d  %6.0f req/s  server CPU %s/req", round, p.rps(), micros(p.cpuPerReq()))
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
			logf("ceiling   pgbench  round %d  %6.0f tps", round, tps)
			c.tps = append(c.tps, tps)
		}
	}
	c.gateway = merge(g.name, phases)
	if len(c.tps) == 0 {
		return errors.New("ceiling: no pgbench round")
	}
	return nil
}
