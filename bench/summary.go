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

	streams []streamResult
}

func (s *summary) print(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n== Minimal bench (PostgreSQL %s, %d cores, concurrency %d, %d-row pages) ==\n",
		s.pgVersion, s.cores, s.concurrency, pageSize)
	if s.loadDone {
		for _, side := range []sideStats{s.gateway, s.direct} {
			rounds := make([]string, len(side.rounds))
			for i, r := range side.rounds {
				rounds[i] = fmt.Sprintf("%.0f", r)
			}
			fmt.Fprintf(&b, "%-8s %6.0f req/s  p50 %.2f ms  p99 %.2f ms   (server CPU %s/req; %d requests; rounds %s req/s)\n",
				side.name, side.rps(), ms(side.p50), ms(side.p99), micros(side.cpuPerReq()), side.requests, strings.Join(rounds, ", "))
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
	fmt.Fprint(w, b.String())
}
