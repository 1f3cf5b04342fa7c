package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// restOpsPairs is how many timed calls each side of a REST count or
// aggregate comparison gets, interleaved one by one (gateway then direct,
// direct then gateway, …) after restOpsWarmup untimed ones each: more than
// the five executions after which PostgreSQL may switch a prepared
// statement to its generic plan, so both sides are measured in their
// steady state. The time of a side is the median of its calls; the ratio
// is the median of the pairs' ratios, each pair's two calls run back to
// back under the same load from the rest of the machine.
const (
	restOpsPairs  = 21
	restOpsWarmup = 6
)

// Targets of the ratio direct/gateway time (higher is better for the
// gateway): a counted read costs no more than the COUNT(*) alone run
// directly (1.0, less the median's noise on a shared machine, which
// restOpsNoise allows), and an aggregate read costs at most a tenth more
// than its SQL.
const (
	restOpsCountTarget = 1.0
	restOpsAggTarget   = 0.9
	restOpsNoise       = 0.03
)

// restOpsResult is one comparison: a REST read through the gateway and the
// SQL that answers it run directly with pgx, both sequential, both checked
// to give the same answer.
type restOpsResult struct {
	name, rest, sql string
	args            []any
	target          float64
	// check compares the gateway's JSON answer with the direct rows.
	check func(body []byte, rows [][]any) error

	gateway, direct time.Duration // the median call
	ratio           float64       // the median pair's direct/gateway
}

// restOpsPhase measures, on the 1M-row pg table, count=exact with a filter
// no index serves (the gateway also reads the 1-row page) against COUNT(*)
// with the same filter run directly, and an agg= read grouped by grp
// against the same aggregate SQL run directly. The direct side is what an
// application would run: the statement prepared on its connection (pgx's
// default statement cache) on a connection of its own, the filter value
// bound, the constant page size written in the SQL.
func restOpsPhase(ctx context.Context, gwBase, token string, dataConn *pgx.Conn, sum *summary) error {
	table := benchSchema + "." + benchTable
	cases := []restOpsResult{
		{name: "count=exact, filter qty > 250", rest: "?ps=1&pg=0&qty=gt.250&count=exact",
			sql: "SELECT count(*) FROM " + table + " WHERE qty > $1", args: []any{250},
			target: restOpsCountTarget, check: checkCount},
		{name: "agg=count(),sum(qty),avg(price)&group=grp", rest: "?ps=100&pg=0&agg=" + url.QueryEscape("count(),sum(qty),avg(price)") + "&group=grp&oy=grp",
			sql:    "SELECT grp, count(*), sum(qty), avg(price) FROM " + table + " GROUP BY grp ORDER BY grp LIMIT 100",
			target: restOpsAggTarget, check: checkAggregate},
	}
	// The direct side's own connection, fresh as the gateway's pooled
	// ones: the one that loaded the table counts measurably slower.
	conn, err := pgx.Connect(ctx, dataConn.Config().ConnString())
	if err != nil {
		return fmt.Errorf("connect for the direct side: %w", err)
	}
	defer conn.Close(context.Background())
	client := &http.Client{Timeout: time.Minute}
	viaGateway := func(rest string) (time.Duration, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, gwBase+rest, nil)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("LB-Access-Token", token)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil {
			return 0, nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, nil, fmt.Errorf("GET %s: %d %.200s", rest, resp.StatusCode, body)
		}
		return d, body, nil
	}
	direct := func(c *restOpsResult) (time.Duration, [][]any, error) {
		t0 := time.Now()
		rows, err := conn.Query(ctx, c.sql, c.args...)
		if err != nil {
			return 0, nil, err
		}
		var out [][]any
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				rows.Close()
				return 0, nil, err
			}
			out = append(out, v)
		}
		rows.Close()
		return time.Since(t0), out, rows.Err()
	}
	for i := range cases {
		c := &cases[i]
		var gs, ds []time.Duration
		var ratios []float64
		for r := range restOpsWarmup + restOpsPairs {
			var g, d time.Duration
			var body []byte
			var rows [][]any
			var err error
			gw := func() error { g, body, err = viaGateway(c.rest); return err }
			dr := func() error { d, rows, err = direct(c); return err }
			first, second := gw, dr
			if r%2 == 1 {
				first, second = dr, gw
			}
			if err := first(); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if err := second(); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if err := c.check(body, rows); err != nil {
				return fmt.Errorf("%s: gateway and direct disagree: %w", c.name, err)
			}
			if r >= restOpsWarmup {
				gs, ds = append(gs, g), append(ds, d)
				ratios = append(ratios, float64(d)/float64(g))
			}
		}
		c.gateway, c.direct = median(gs), median(ds)
		slices.Sort(ratios)
		c.ratio = ratios[len(ratios)/2]
		logf("%s: gateway %.1f ms, direct %.1f ms per call, ratio direct/gateway %.2f (medians; same answer each call)", c.name, ms(c.gateway), ms(c.direct), c.ratio)
	}
	sum.restOps = cases
	return nil
}

// median is the middle of ds (the mean of the two middle ones for an even
// count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// restOpsBody is the part of a JSON answer the checks read.
type restOpsBody struct {
	Data []map[string]json.Number `json:"data"`
	Page struct {
		Total *int64 `json:"total"`
	} `json:"page"`
}

func decodeRestOps(body []byte, v *restOpsBody) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("answer %.200s: %w", body, err)
	}
	return nil
}

// checkCount: page.total is the direct COUNT(*), and the page has its row.
func checkCount(body []byte, rows [][]any) error {
	var b struct {
		Data []json.RawMessage `json:"data"`
		Page struct {
			Total *int64 `json:"total"`
		} `json:"page"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return fmt.Errorf("answer %.200s: %w", body, err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return fmt.Errorf("direct count answered %v", rows)
	}
	want, ok := rows[0][0].(int64)
	if !ok {
		return fmt.Errorf("direct count answered %T", rows[0][0])
	}
	if b.Page.Total == nil || *b.Page.Total != want {
		return fmt.Errorf("page.total in %.200s, want %d", body, want)
	}
	if want > 0 && len(b.Data) != 1 {
		return fmt.Errorf("the page has %d rows, want 1", len(b.Data))
	}
	return nil
}

// checkAggregate: the same groups in the same order with the same count,
// sum and average (compared as exact decimals).
func checkAggregate(body []byte, rows [][]any) error {
	var b restOpsBody
	if err := decodeRestOps(body, &b); err != nil {
		return err
	}
	if len(b.Data) != len(rows) {
		return fmt.Errorf("gateway answered %d groups, direct %d", len(b.Data), len(rows))
	}
	for i, row := range rows {
		g := b.Data[i]
		for j, name := range []string{"grp", "count", "sum_qty", "avg_price"} {
			want, err := decimalText(row[j])
			if err != nil {
				return err
			}
			if !sameDecimal(string(g[name]), want) {
				return fmt.Errorf("group %d: %s is %q, direct %q", i, name, g[name], want)
			}
		}
	}
	return nil
}

// decimalText is a direct value as decimal text.
func decimalText(v any) (string, error) {
	if m, ok := v.(json.Marshaler); ok { // pgtype.Numeric
		b, err := m.MarshalJSON()
		return strings.Trim(string(b), `"`), err
	}
	return fmt.Sprint(v), nil
}

// sameDecimal compares two decimal texts as exact numbers.
func sameDecimal(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// printRestOps writes the comparisons of restOpsPhase.
func printRestOps(b *strings.Builder, cases []restOpsResult) {
	if len(cases) == 0 {
		return
	}
	fmt.Fprintf(b, "\nREST count and aggregate reads vs the same SQL run directly (pgx, prepared), medians of %d interleaved sequential pairs, same answer checked each call:\n", restOpsPairs)
	for _, c := range cases {
		ratio := c.ratio
		mark, allow := "", ""
		if c.target >= 1 {
			allow = fmt.Sprintf(" - %.2f noise", restOpsNoise)
			if ratio < c.target-restOpsNoise {
				mark = "  MISSED"
			}
		} else if ratio < c.target {
			mark = "  MISSED"
		}
		fmt.Fprintf(b, "  %-45s gateway %7.2f ms  direct %7.2f ms  ratio direct/gateway %.2f (target ≥ %.2f%s)%s\n",
			c.name, ms(c.gateway), ms(c.direct), ratio, c.target, allow, mark)
	}
}
