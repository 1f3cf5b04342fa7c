package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// fullCheckEvery: each worker fully decodes one response in this many (and
// its first); every response gets the cheap byte checks.
const fullCheckEvery = 16

// target is one side of the comparison.
type target struct {
	name   string
	urls   [pageCount]string
	token  string
	client *http.Client
	pid    int // the server process, for its CPU time; 0 when unknown
}

func newTarget(name, base, token string, pid, concurrency int) *target {
	t := &target{name: name, token: token, pid: pid}
	for p := range t.urls {
		t.urls[p] = fmt.Sprintf("%s?ps=%d&pg=%d&oy=id.as", base, pageSize, p)
	}
	t.client = &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        2 * concurrency,
			MaxIdleConnsPerHost: 2 * concurrency,
			IdleConnTimeout:     5 * time.Minute,
			DisableCompression:  true,
		},
	}
	return t
}

// phase is the outcome of one timed run against one target.
type phase struct {
	target   string
	round    string // "warm-up", "1", "2"
	elapsed  time.Duration
	requests int
	failures int
	firstErr string
	lat      []time.Duration
	cpu      time.Duration // CPU time of the server process; -1 when unknown
}

func (p *phase) rps() float64 { return float64(p.requests) / p.elapsed.Seconds() }

// cpuPerReq is the server's CPU time per request, -1 when unknown.
func (p *phase) cpuPerReq() time.Duration {
	if p.cpu < 0 || p.requests == 0 {
		return -1
	}
	return p.cpu / time.Duration(p.requests)
}

// sideStats merges the measured rounds of one side.
type sideStats struct {
	name     string
	requests int
	elapsed  time.Duration
	p50, p99 time.Duration
	rounds   []float64     // req/s of each round
	cpu      time.Duration // server CPU time over the rounds; -1 when unknown
}

// cpuPerReq is the server's CPU time per request, -1 when unknown.
func (s sideStats) cpuPerReq() time.Duration {
	if s.cpu < 0 || s.requests == 0 {
		return -1
	}
	return s.cpu / time.Duration(s.requests)
}

func (s sideStats) rps() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.requests) / s.elapsed.Seconds()
}

func loadPhase(ctx context.Context, g, d *target, o options, sum *summary) error {
	run := func(t *target, round string, dur time.Duration) (*phase, error) {
		logf("load %-7s %-7s %s with %d clients", t.name, round, dur, o.concurrency)
		p := runPhase(ctx, t, round, o.concurrency, dur)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		logf("      %-7s %-7s %6d req  %6.0f req/s  p50 %5.2f ms  p99 %5.2f ms  server CPU %s/req  failures %d",
			t.name, round, p.requests, p.rps(), ms(percentileSorted(p.lat, 50)), ms(percentileSorted(p.lat, 99)), micros(p.cpuPerReq()), p.failures)
		sum.failures += p.failures
		if p.failures > 0 {
			sum.failureNotes = append(sum.failureNotes, fmt.Sprintf("%s round %s: %d failed requests, first: %s", t.name, round, p.failures, p.firstErr))
		}
		return p, nil
	}
	for _, t := range []*target{g, d} {
		if _, err := run(t, "warm-up", warmup); err != nil {
			return err
		}
	}
	half := o.duration / 2
	measured := map[string][]*phase{}
	for round := 1; round <= 2; round++ {
		for _, t := range []*target{g, d} {
			p, err := run(t, strconv.Itoa(round), half)
			if err != nil {
				return err
			}
			measured[t.name] = append(measured[t.name], p)
		}
	}
	sum.gateway = merge(g.name, measured[g.name])
	sum.direct = merge(d.name, measured[d.name])
	sum.loadDone = true
	if sum.failures > 0 {
		return fmt.Errorf("%d requests failed in the load phase", sum.failures)
	}
	return nil
}

func merge(name string, ps []*phase) sideStats {
	s := sideStats{name: name}
	var lat []time.Duration
	for _, p := range ps {
		if p.cpu < 0 || s.cpu < 0 {
			s.cpu = -1
		} else {
			s.cpu += p.cpu
		}
		s.requests += p.requests
		s.elapsed += p.elapsed
		s.rounds = append(s.rounds, p.rps())
		lat = append(lat, p.lat...)
	}
	slices.Sort(lat)
	s.p50 = percentileSorted(lat, 50)
	s.p99 = percentileSorted(lat, 99)
	return s
}

// runPhase runs concurrency workers against t for dur. Requests in flight
// at the deadline complete and count; elapsed runs until the last one did.
func runPhase(ctx context.Context, t *target, round string, concurrency int, dur time.Duration) *phase {
	type result struct {
		lat      []time.Duration
		failures int
		firstErr string
	}
	results := make([]result, concurrency)
	cpu0, cpuErr := procCPU(t.pid)
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for w := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[w]
			res.lat = make([]time.Duration, 0, 4096)
			rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(w)))
			var body bytes.Buffer
			for k := 0; time.Now().Before(deadline) && ctx.Err() == nil; k++ {
				pg := rng.IntN(pageCount)
				t0 := time.Now()
				err := fetch(ctx, t, pg, &body)
				lat := time.Since(t0)
				if err == nil {
					err = checkPage(body.Bytes(), pg, k%fullCheckEvery == 0)
				}
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					res.failures++
					if res.firstErr == "" {
						res.firstErr = fmt.Sprintf("page %d: %v", pg, err)
					}
					continue
				}
				res.lat = append(res.lat, lat)
			}
		}()
	}
	wg.Wait()
	p := &phase{target: t.name, round: round, elapsed: time.Since(start), cpu: -1}
	if cpu1, err := procCPU(t.pid); err == nil && cpuErr == nil {
		p.cpu = cpu1 - cpu0
	}
	for _, r := range results {
		p.requests += len(r.lat)
		p.failures += r.failures
		if p.firstErr == "" {
			p.firstErr = r.firstErr
		}
		p.lat = append(p.lat, r.lat...)
	}
	slices.Sort(p.lat)
	return p
}

// fetch GETs page pg into body; any status but 200 is an error.
func fetch(ctx context.Context, t *target, pg int, body *bytes.Buffer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.urls[pg], nil)
	if err != nil {
		return err
	}
	req.Header.Set("LB-Access-Token", t.token)
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body.Reset()
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, bytes.TrimSpace(body.Bytes()))
	}
	return nil
}

var (
	rowMarker = []byte(`{"id":`)
	dataOpen  = []byte(`{"data":[`)
)

// checkPage verifies a page answer: the envelope, 100 row objects and the
// page object by byte scans; with full, a JSON decode checking every id.
// (Inside a JSON string a quote is escaped, so {"id": only opens a row.)
func checkPage(b []byte, pg int, full bool) error {
	if !bytes.HasPrefix(b, dataOpen) {
		return fmt.Errorf("body does not start with %s: %.100s", dataOpen, b)
	}
	if n := bytes.Count(b, rowMarker); n != pageSize {
		return fmt.Errorf("%d rows, want %d", n, pageSize)
	}
	if want := fmt.Sprintf(`"page":{"number":%d,"size":%d}`, pg, pageSize); !bytes.Contains(b, []byte(want)) {
		return fmt.Errorf("page object %s missing", want)
	}
	if !full {
		return nil
	}
	var doc struct {
		Data []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"data"`
		Page struct {
			Number int `json:"number"`
			Size   int `json:"size"`
		} `json:"page"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if len(doc.Data) != pageSize || doc.Page.Number != pg || doc.Page.Size != pageSize {
		return fmt.Errorf("decoded %d rows, page %d size %d; want %d rows of page %d", len(doc.Data), doc.Page.Number, doc.Page.Size, pageSize, pg)
	}
	for i, r := range doc.Data {
		if want := int64(pg*pageSize + i + 1); r.ID != want || r.Name == "" {
			return fmt.Errorf("row %d: id %d name %q, want id %d", i, r.ID, r.Name, want)
		}
	}
	return nil
}

// crossCheck fetches one page from both sides and compares every value, so
// the baseline is known to do the same work as the gateway.
func crossCheck(ctx context.Context, gwBase, directBase, token string) error {
	const pg = 3
	get := func(base string) ([]map[string]any, error) {
		t := newTarget("check", base, token, 0, 1)
		var body bytes.Buffer
		if err := fetch(ctx, t, pg, &body); err != nil {
			return nil, err
		}
		if err := checkPage(body.Bytes(), pg, true); err != nil {
			return nil, err
		}
		dec := json.NewDecoder(&body)
		dec.UseNumber()
		var doc struct {
			Data []map[string]any `json:"data"`
		}
		if err := dec.Decode(&doc); err != nil {
			return nil, err
		}
		return doc.Data, nil
	}
	g, err := get(gwBase)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	d, err := get(directBase)
	if err != nil {
		return fmt.Errorf("direct: %w", err)
	}
	cols := []string{"id", "name", "price", "qty", "active", "created", "note"}
	for i := range g {
		if len(g[i]) != len(cols) || len(d[i]) != len(cols) {
			return fmt.Errorf("row %d: %d columns from the gateway, %d from direct, want %d", i, len(g[i]), len(d[i]), len(cols))
		}
		for _, c := range cols {
			if !sameValue(c, g[i][c], d[i][c]) {
				return fmt.Errorf("row %d column %s: gateway %#v, direct %#v", i, c, g[i][c], d[i][c])
			}
		}
	}
	return nil
}

// sameValue compares one decoded cell: numbers by exact value, timestamps
// as instants (the two sides may print different offsets).
func sameValue(col string, a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch col {
	case "created":
		as, ok1 := a.(string)
		bs, ok2 := b.(string)
		if !ok1 || !ok2 {
			return false
		}
		at, err1 := time.Parse(time.RFC3339Nano, as)
		bt, err2 := time.Parse(time.RFC3339Nano, bs)
		return err1 == nil && err2 == nil && at.Equal(bt)
	case "id", "price", "qty":
		an, ok1 := a.(json.Number)
		bn, ok2 := b.(json.Number)
		if !ok1 || !ok2 {
			return false
		}
		ar, ok1 := new(big.Rat).SetString(string(an))
		br, ok2 := new(big.Rat).SetString(string(bn))
		return ok1 && ok2 && ar.Cmp(br) == 0
	}
	return a == b
}

// percentileSorted is the nearest-rank percentile of sorted latencies.
func percentileSorted(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// micros prints a CPU time per request, "?" when unknown.
func micros(d time.Duration) string {
	if d < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}
