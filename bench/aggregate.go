package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/query"
)

// The mini-app aggregate: query_aggregate (group_by with an inner sum) over
// a mini-app table of -rows rows, through the gateway's MCP endpoint. The
// table's SQLite file computes it; the gateway's memory must stay under
// rssTargetMB as it does for the streaming reads.
const (
	aggTable = "bench_sales"
	// aggSchema is the bootstrap's mi database, dataDir/mini-app/app.
	aggSchema = "app"
	// aggBatch is the rows of one insert (one SQLite transaction).
	aggBatch = 50000
)

var aggRegions = []string{"north", "south", "east", "west", "center"}

// aggregateResult is one measured query_aggregate.
type aggregateResult struct {
	rows       int
	fill       time.Duration // writing the table
	elapsed    time.Duration // the call
	startKB    int64
	sampledKB  int64
	hwmKB      int64
	samples    int
	rssMissing bool
}

func (r *aggregateResult) peakMB() float64 { return float64(max(r.hwmKB, r.sampledKB)) / 1024 }

// aggregatePhase fills the mi table, starts a fresh gateway and measures
// query_aggregate on it. A data dir the gateway has not bootstrapped yet
// (-aggregate-only) is bootstrapped by a first start.
func aggregatePhase(ctx context.Context, kids *children, cfg gatewayConfig, rows int, sum *summary) error {
	dir := filepath.Join(cfg.dataDir, "mini-app", aggSchema)
	if _, err := os.Stat(dir); err != nil {
		gw, err := startGateway(ctx, kids, cfg)
		if err != nil {
			return err
		}
		gw.stop()
	}
	res := &aggregateResult{rows: rows}
	sum.aggregate = res
	t0 := time.Now()
	want, err := fillMiTable(ctx, dir, rows)
	if err != nil {
		return fmt.Errorf("mi table: %w", err)
	}
	res.fill = time.Since(t0)
	logf("mi table %s/%s: %d rows written in %.1f s", aggSchema, aggTable, rows, res.fill.Seconds())

	gw, err := startGateway(ctx, kids, cfg)
	if err != nil {
		return err
	}
	defer gw.stop()
	agent, err := readAgentToken(cfg.dataDir)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	m, err := newMCPTarget(cctx, "aggregate", gw.mcpAddr, agent, mcpProtocol, gw.pid(), 1, pageSet{})
	cancel()
	if err != nil {
		return fmt.Errorf("mcp on %s: %w", gw.mcpAddr, err)
	}
	call, err := mcpRequest(mcpProtocol, 2, "query_aggregate", map[string]any{
		"sources":    map[string]any{"kind": "single", "value": aggTable},
		"aggregator": map[string]any{"kind": "group_by", "by_field": "region", "inner": map[string]any{"kind": "sum", "field": "amount"}},
	})
	if err != nil {
		return err
	}

	pid := gw.pid()
	st, err := procStatus(pid)
	if err != nil {
		res.rssMissing = true
		logf("RSS not measurable: %v", err)
	}
	res.startKB = st.rssKB
	logf("query_aggregate over %d mi rows on a fresh gateway (pid %d, RSS %.1f MB)", rows, pid, float64(st.rssKB)/1024)
	sampled := func() (int64, int) { return 0, 0 }
	if !res.rssMissing {
		sampled = sampleRSS(pid)
	}
	var body bytes.Buffer
	start := time.Now()
	err = mcpCall(ctx, m, "query_aggregate", call, &body, true)
	res.elapsed = time.Since(start)
	res.sampledKB, res.samples = sampled()
	if !res.rssMissing {
		if s, perr := procStatus(pid); perr == nil {
			res.hwmKB = s.hwmKB
			res.sampledKB = max(res.sampledKB, s.rssKB)
		}
	}
	logf("query_aggregate: %.2f s; RSS peak sampled %.1f MB (%d samples), VmHWM %.1f MB",
		res.elapsed.Seconds(), float64(res.sampledKB)/1024, res.samples, float64(res.hwmKB)/1024)
	if err != nil {
		return fmt.Errorf("query_aggregate: %w", err)
	}
	if got := bytes.TrimSpace(body.Bytes()); !sameJSON(got, []byte(want)) {
		return fmt.Errorf("query_aggregate answered %.300s, want %s", got, want)
	}
	return nil
}

// fillMiTable creates the bench table in the mi database directory and
// writes rows through the mi source's own write path, aggBatch rows per
// transaction, history off: row k has region aggRegions[k%5] and amount
// k%100. It returns the answer query_aggregate must give.
func fillMiTable(ctx context.Context, dir string, rows int) (string, error) {
	if err := os.RemoveAll(filepath.Join(dir, aggTable)); err != nil {
		return "", err
	}
	yaml := "table: " + aggTable + "\nhistory: off\nfields:\n  - name: region\n    type: string\n    required: true\n  - name: amount\n    type: number\n"
	if err := mi.CreateTable(dir, aggTable, []byte(yaml)); err != nil {
		return "", err
	}
	src, err := mi.Open(ctx, dialects.Config{DSN: dir, Schema: aggSchema})
	if err != nil {
		return "", err
	}
	defer src.Close()
	counts := map[string]int64{}
	sums := map[string]int64{}
	for from := 0; from < rows; from += aggBatch {
		batch := make([][]any, min(aggBatch, rows-from))
		for j := range batch {
			k := from + j
			r, a := aggRegions[k%len(aggRegions)], int64(k%100)
			batch[j] = []any{r, a}
			counts[r]++
			sums[r] += a
		}
		plan := &query.Plan{Action: query.Insert, Schema: aggSchema, Table: aggTable, Columns: []string{"region", "amount"}, Rows: batch}
		if _, err := src.Write(ctx, plan); err != nil {
			return "", err
		}
	}
	type group struct {
		Key   string `json:"key"`
		Count int64  `json:"count"`
		Value int64  `json:"value"`
	}
	keys := slices.Sorted(slices.Values(aggRegions))
	groups := make([]group, 0, len(keys))
	for _, k := range keys {
		if counts[k] > 0 {
			groups = append(groups, group{k, counts[k], sums[k]})
		}
	}
	b, err := json.Marshal(map[string]any{"kind": "groups", "value": groups})
	return string(b), err
}
