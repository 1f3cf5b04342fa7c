package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// restOpsRounds is how many timed runs each side of a REST count or
// aggregate comparison gets, alternating, after restOpsWarmup untimed ones.
const (
	restOpsRounds = 15
	restOpsWarmup = 3
)

// restOpsTarget is the least ratio direct/gateway time of a counted read
// and of an aggregate read: the gateway adds little to what the database
// spends.
const restOpsTarget = 0.9

// restOpsResult is one comparison: a REST read through the gateway and the
// SQL that answers it run directly with pgx, both sequential.
type restOpsResult struct {
	name, rest, sql string
	gateway, direct time.Duration // total over restOpsRounds
}

// restOpsPhase measures, on the 1M-row pg table, count=exact with a filter
// no index serves (the gateway also reads the 1-row page) against COUNT(*)
// with the same filter run directly, and an agg= read grouped by grp
// against the same aggregate SQL run directly.
func restOpsPhase(ctx context.Context, gwBase, token string, conn *pgx.Conn, sum *summary) error {
	table := benchSchema + "." + benchTable
	cases := []restOpsResult{
		{name: "count=exact, filter qty > 250", rest: "?ps=1&pg=0&qty=gt.250&count=exact",
			sql: "SELECT count(*) FROM " + table + " WHERE qty > 250"},
		{name: "agg=count(),sum(qty),avg(price)&group=grp", rest: "?ps=100&pg=0&agg=" + url.QueryEscape("count(),sum(qty),avg(price)") + "&group=grp&oy=grp",
			sql: "SELECT grp, count(*), sum(qty), avg(price) FROM " + table + " GROUP BY grp ORDER BY grp LIMIT 100"},
	}
	client := &http.Client{Timeout: time.Minute}
	viaGateway := func(rest string) (time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, gwBase+rest, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("LB-Access-Token", token)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"data"`) {
			return 0, fmt.Errorf("GET %s: %d %.200s", rest, resp.StatusCode, body)
		}
		return d, nil
	}
	direct := func(sql string) (time.Duration, error) {
		t0 := time.Now()
		rows, err := conn.Query(ctx, sql)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			if _, err := rows.Values(); err != nil {
				rows.Close()
				return 0, err
			}
		}
		rows.Close()
		return time.Since(t0), rows.Err()
	}
	for i := range cases {
		c := &cases[i]
		for r := range restOpsWarmup + restOpsRounds {
			g, err := viaGateway(c.rest)
			if err != nil {
				return err
			}
			d, err := direct(c.sql)
			if err != nil {
				return err
			}
			if r >= restOpsWarmup {
				c.gateway += g
				c.direct += d
			}
		}
		logf("%s: gateway %.1f ms, direct %.1f ms per call", c.name, ms(c.gateway)/restOpsRounds, ms(c.direct)/restOpsRounds)
	}
	sum.restOps = cases
	return nil
}

// printRestOps writes the comparisons of restOpsPhase.
func printRestOps(b *strings.Builder, cases []restOpsResult) {
	if len(cases) == 0 {
		return
	}
	fmt.Fprintf(b, "\nREST count and aggregate reads vs the same SQL run directly (pgx), %d sequential calls each:\n", restOpsRounds)
	for _, c := range cases {
		ratio := 0.0
		if c.gateway > 0 {
			ratio = float64(c.direct) / float64(c.gateway)
		}
		mark := ""
		if ratio < restOpsTarget {
			mark = "  MISSED"
		}
		fmt.Fprintf(b, "  %-45s gateway %7.2f ms  direct %7.2f ms  ratio direct/gateway %.2f (target ≥ %.2f)%s\n",
			c.name, ms(c.gateway)/restOpsRounds, ms(c.direct)/restOpsRounds, ratio, restOpsTarget, mark)
	}
}
