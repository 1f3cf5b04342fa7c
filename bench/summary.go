package main

import (
	"fmt"
	"io"
	"strings"
)

// summary is what the run found; print writes what is known even after a
// failure.
type summary struct {
	pgVersion   string
	cores       int
	concurrency int
	rows        int

	loadDone        bool
	gateway, direct sideStats
	failures        int
	failureNotes    []string

	scopedDone     bool
	scopedPages    int
	analyst, admin sideStats

	// mcpEras are MCP auto_read_rows vs REST GET in each protocol era;
	// answerSizes the size of one 100-row answer in each.
	mcpEras     []mcpEra
	answerSizes []eraSize
	// listings are the tools/list of each role, in tokens.
	listings []listing

	// strong are the gateway against the strong baseline; ceiling against
	// pgbench.
	strong  []strongLine
	ceiling *ceilingResult

	dialects []*dialectLine

	streams []streamResult

	aggregate *aggregateResult

	// restOps are the REST count and aggregate reads against their SQL.
	restOps []restOpsResult
}

// mcpEra is one protocol era's MCP vs REST comparison.
type mcpEra struct {
	version   string
	mcp, rest sideStats
}

// eraSize is the size in bytes of one 100-row MCP answer in an era.
type eraSize struct {
	version string
	bytes   int
}

// strongLine is one read through the gateway against the strong baseline.
type strongLine struct {
	name            string
	gateway, strong sideStats
	target          float64
}

// scopedTarget is the throughput target of the scoped, column-limited read
// over the admin's equivalent query.
const scopedTarget = 0.95

// dialectLine is one database type's gateway vs direct comparison.
type dialectLine struct {
	code, product, version string
	rows                   int
	dsn                    string
	skipped                string // why it was not measured
	err                    string // what failed

	done            bool
	gateway, direct sideStats
	// ceiling is the gateway's page against the tight driver loop.
	ceiling *ceilingResult
}

func (l *dialectLine) fail(err error) {
	if l.err == "" {
		l.err = err.Error()
	}
	logf("%s: FAILED: %v", l.code, err)
}

func printSide(b *strings.Builder, side sideStats) {
	rounds := make([]string, len(side.rounds))
	for i, r := range side.rounds {
		rounds[i] = fmt.Sprintf("%.0f", r)
	}
	fmt.Fprintf(b, "%-8s %6.0f req/s  p50 %.2f ms  p99 %.2f ms   (server CPU %s/req; %d requests; rounds %s req/s)\n",
		side.name, side.rps(), ms(side.p50), ms(side.p99), micros(side.cpuPerReq()), side.requests, strings.Join(rounds, ", "))
}

func (s *summary) print(w io.Writer) {
	var b strings.Builder
	if s.pgVersion == "" { // -aggregate-only
		fmt.Fprintf(&b, "\n== Minimal bench (query_aggregate only, %d cores) ==\n", s.cores)
	} else {
		fmt.Fprintf(&b, "\n== Minimal bench (PostgreSQL %s, %d cores, concurrency %d, %d-row pages) ==\n",
			s.pgVersion, s.cores, s.concurrency, pageSize)
	}
	if s.loadDone {
		for _, side := range []sideStats{s.gateway, s.direct} {
			printSide(&b, side)
		}
		if d := s.direct.rps(); d > 0 {
			ratio := s.gateway.rps() / d
			mark := ""
			if ratio < ratioTarget {
				mark = "  MISSED"
			}
			fmt.Fprintf(&b, "ratio gateway/direct throughput: %.2f   (target ≥ %.2f)%s\n", ratio, ratioTarget, mark)
		}
		if s.direct.p50 > 0 {
			fmt.Fprintf(&b, "ratio gateway/direct p50 latency: %.2f   (p99: %.2f)\n",
				ms(s.gateway.p50)/ms(s.direct.p50), ms(s.gateway.p99)/ms(s.direct.p99))
		}
		if g, d := s.gateway.cpuPerReq(), s.direct.cpuPerReq(); g > 0 && d > 0 {
			fmt.Fprintf(&b, "ratio gateway/direct server CPU per request: %.2f\n", float64(g)/float64(d))
		}
	}
	if s.scopedDone {
		fmt.Fprintf(&b, "\nscoped read as %s (columns %s; scope grp=eq.{claims.grp}) vs admin (grp=eq.%d&fc=…), %d pages of the rows with grp = %d:\n",
			analystIdentity, strings.Join(analystColumns, ","), analystGroup, s.scopedPages, analystGroup)
		for _, side := range []sideStats{s.analyst, s.admin} {
			printSide(&b, side)
		}
		if a := s.admin.rps(); a > 0 {
			ratio := s.analyst.rps() / a
			mark := ""
			if ratio < scopedTarget {
				mark = "  MISSED"
			}
			fmt.Fprintf(&b, "scoped+column-limited read vs admin (same rows): ratio %.2f (target ≥ %.2f)%s\n", ratio, scopedTarget, mark)
		}
		if a, d := s.analyst.cpuPerReq(), s.admin.cpuPerReq(); a > 0 && d > 0 {
			fmt.Fprintf(&b, "scoped vs admin server CPU per request: %s vs %s (ratio admin/scoped %.2f)\n", micros(a), micros(d), float64(d)/float64(a))
		}
	}
	if len(s.listings) > 0 {
		fmt.Fprintf(&b, "\nmcp tools/list per role (cl100k_base tokens of the tools array, project with pg and mi databases):\n")
		for _, l := range s.listings {
			mark := ""
			if l.tokens > l.budget {
				mark = "  MISSED"
			}
			fmt.Fprintf(&b, "  %-40s %2d tools %5d tokens (target ≤ %d)%s\n", l.role, l.tools, l.tokens, l.budget, mark)
		}
	}
	if len(s.mcpEras) > 0 {
		fmt.Fprintf(&b, "\nmcp auto_read_rows (identity agent, one AI session, each call journaled) vs REST GET (admin), %d-row pages by id, per protocol era (ratio: median of %d interleaved rounds):\n", pageSize, mcpRounds)
		for _, e := range s.mcpEras {
			ratio := medianRatio(e.mcp, e.rest)
			fmt.Fprintf(&b, "  %-10s mcp %5.0f req/s  rest %5.0f req/s  ratio %.2f (target ≥ %.2f)%s   server CPU %s vs %s/req; bench CPU %s vs %s/req; p50 %.2f vs %.2f ms; rounds %s vs %s\n",
				e.version, e.mcp.rps(), e.rest.rps(), ratio, mcpTarget, missed(ratio, mcpTarget), micros(e.mcp.cpuPerReq()), micros(e.rest.cpuPerReq()),
				micros(e.mcp.clientPerReq()), micros(e.rest.clientPerReq()), ms(e.mcp.p50), ms(e.rest.p50), roundList(e.mcp), roundList(e.rest))
		}
	}
	if len(s.answerSizes) > 0 {
		var parts []string
		for _, a := range s.answerSizes {
			note := ""
			if a.version < "2025-06-18" {
				note = " text only"
			}
			parts = append(parts, fmt.Sprintf("%s %d B%s", a.version, a.bytes, note))
		}
		fmt.Fprintf(&b, "mcp answer of one %d-row page: %s\n", pageSize, strings.Join(parts, ", "))
	}
	if len(s.strong) > 0 {
		fmt.Fprintf(&b, "\ngateway REST GET vs the strong direct handler (pgx, typed scans, JSON appended by hand; ratio: median of %d interleaved rounds):\n", scopedRounds)
		for _, l := range s.strong {
			ratio := medianRatio(l.gateway, l.strong)
			fmt.Fprintf(&b, "  %-26s gateway %5.0f req/s  strong %5.0f req/s  ratio %.2f (target ≥ %.2f)%s   server CPU %s vs %s/req; p50 %.2f vs %.2f ms\n",
				l.name, l.gateway.rps(), l.strong.rps(), ratio, l.target, missed(ratio, l.target), micros(l.gateway.cpuPerReq()), micros(l.strong.cpuPerReq()),
				ms(l.gateway.p50), ms(l.strong.p50))
		}
	}
	if c := s.ceiling; c != nil {
		if c.skipped != "" {
			fmt.Fprintf(&b, "database ceiling skipped: %s\n", c.skipped)
		} else if len(c.tps) > 0 {
			fmt.Fprintf(&b, "database ceiling (pgbench, the page's SELECT, prepared, c=%d): gateway 100-row page %.0f req/s = %.2f of what PostgreSQL serves itself (median of %d interleaved rounds; pgbench %s tps; gateway rounds %s req/s, server CPU %s/req)\n",
				s.concurrency, c.gateway.rps(), c.fraction(), len(c.tps), roundFloats(c.tps), roundList(c.gateway), micros(c.gateway.cpuPerReq()))
		}
	}
	printRestOps(&b, s.restOps)
	if len(s.dialects) > 0 {
		fmt.Fprintf(&b, "\ngateway vs direct driver per dialect (same run, %d-row pages by id):\n", pageSize)
		for _, l := range s.dialects {
			switch {
			case l.skipped != "":
				fmt.Fprintf(&b, "%-3s skipped: %s\n", l.code, l.skipped)
				continue
			case !l.done && l.err != "":
				fmt.Fprintf(&b, "%-3s FAILED: %s\n", l.code, l.err)
				continue
			case !l.done:
				fmt.Fprintf(&b, "%-3s not measured (the run stopped before it)\n", l.code)
				continue
			}
			ratio := 0.0
			if d := l.direct.rps(); d > 0 {
				ratio = l.gateway.rps() / d
			}
			mark := ""
			if ratio < ratioTarget {
				mark = "  MISSED"
			}
			fmt.Fprintf(&b, "%-3s gateway %.0f req/s  direct %.0f req/s  ratio %.2f%s   (%s %s, %d rows; p50 %.2f vs %.2f ms; server CPU %s vs %s/req)\n",
				l.code, l.gateway.rps(), l.direct.rps(), ratio, mark, l.product, l.version, l.rows,
				ms(l.gateway.p50), ms(l.direct.p50), micros(l.gateway.cpuPerReq()), micros(l.direct.cpuPerReq()))
			if c := l.ceiling; c != nil && len(c.tps) > 0 {
				fmt.Fprintf(&b, "    ceiling (%s, the page's SELECT, c=%d): gateway %.0f req/s = %.2f of what %s serves itself (median of %d interleaved rounds; driver %s queries/s; gateway rounds %s req/s, server CPU %s/req)\n",
					c.how, s.concurrency, c.gateway.rps(), c.fraction(), l.product, len(c.tps), roundFloats(c.tps), roundList(c.gateway), micros(c.gateway.cpuPerReq()))
			}
			if l.err != "" {
				fmt.Fprintf(&b, "    FAILED: %s\n", l.err)
			}
		}
	}
	if s.failures > 0 {
		fmt.Fprintf(&b, "FAILED requests: %d\n", s.failures)
		for _, n := range s.failureNotes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	for _, r := range s.streams {
		label := fmt.Sprintf("stream %d rows %s:", r.wantRows, r.format)
		if r.rssMissing {
			fmt.Fprintf(&b, "%-26s peak RSS unavailable (no /proc), %.1f s\n", label, r.elapsed.Seconds())
			continue
		}
		mark := ""
		if r.peakMB() >= rssTargetMB {
			mark = "  MISSED"
		}
		cpu := "?"
		if r.cpu >= 0 {
			cpu = fmt.Sprintf("%.1f s", r.cpu.Seconds())
		}
		fmt.Fprintf(&b, "%-26s peak RSS %.0f MB (target < %d MB)%s, %.1f s, %.0f MB at %.0f MB/s, %d rows read, gateway CPU %s\n",
			label, r.peakMB(), rssTargetMB, mark, r.elapsed.Seconds(), float64(r.bytes)/(1<<20), r.mbps(), r.rows, cpu)
	}
	if a := s.aggregate; a != nil {
		label := fmt.Sprintf("query_aggregate %d mi rows:", a.rows)
		switch {
		case a.elapsed == 0:
			fmt.Fprintf(&b, "%-26s not measured (table written in %.1f s)\n", label, a.fill.Seconds())
		case a.rssMissing:
			fmt.Fprintf(&b, "%-26s peak RSS unavailable (no /proc), %.1f s\n", label, a.elapsed.Seconds())
		default:
			mark := ""
			if a.peakMB() >= rssTargetMB {
				mark = "  MISSED"
			}
			fmt.Fprintf(&b, "%-26s peak RSS %.0f MB (target < %d MB)%s, %.2f s (group_by with inner sum, in SQLite), table written in %.1f s\n",
				label, a.peakMB(), rssTargetMB, mark, a.elapsed.Seconds(), a.fill.Seconds())
		}
	}
	fmt.Fprint(w, b.String())
}

// missed marks a ratio under its target.
func missed(ratio, target float64) string {
	if ratio < target {
		return "  MISSED"
	}
	return ""
}

// roundList is the req/s of each round of a side.
func roundList(side sideStats) string {
	r := make([]string, len(side.rounds))
	for i, v := range side.rounds {
		r[i] = fmt.Sprintf("%.0f", v)
	}
	return strings.Join(r, "/")
}

// roundFloats lists rates rounded to whole numbers, comma-separated.
func roundFloats(v []float64) string {
	out := make([]string, len(v))
	for i, t := range v {
		out[i] = fmt.Sprintf("%.0f", t)
	}
	return strings.Join(out, ", ")
}
