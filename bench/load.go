package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// fullCheckEvery: each worker fully decodes one response in this many (and
// its first); every response gets the cheap byte checks.
const fullCheckEvery = 16

// pageSet is what a target reads: pages 0..pages-1 of pageSize rows in id
// order, with extra query parameters, and the id each row must have.
type pageSet struct {
	pages  int
	params string // appended to the query string: "" or "&grp=eq.3&fc=…"
	idAt   func(pg, i int) int64
}

// allRows pages through the whole table: row i of page pg has id
// pg*pageSize+i+1.
var allRows = pageSet{pages: pageCount, idAt: func(pg, i int) int64 { return int64(pg*pageSize + i + 1) }}

// target is one side of the comparison.
type target struct {
	name string
	urls []string
	idAt func(pg, i int) int64
	// size is the rows of each answer; keyed: each URL reads one row by
	// its id, answered as page 0 of size 1 (newKeyTarget).
	size   int
	keyed  bool
	token  string
	client *http.Client
	pid    int      // the server process, for its CPU time; 0 when unknown
	mcp    *mcpSide // reads through MCP auto_read_rows instead of REST GET
}

func newTarget(name, base, token string, pid, concurrency int, set pageSet) *target {
	t := &target{name: name, token: token, pid: pid, idAt: set.idAt, urls: make([]string, set.pages), size: pageSize}
	for p := range t.urls {
		t.urls[p] = fmt.Sprintf("%s?ps=%d&pg=%d&oy=id.as%s", base, pageSize, p, set.params)
	}
	t.client = newClient(concurrency)
	return t
}

// keyedRows is how many ids a keyed target reads (1..keyedRows, at
// random).
const keyedRows = 10000

// newKeyTarget returns a target reading one row by its id: url gives the
// URL of id (1..keyedRows).
func newKeyTarget(name string, url func(id int64) string, token string, pid, concurrency int) *target {
	t := &target{name: name, token: token, pid: pid, urls: make([]string, keyedRows), size: 1, keyed: true,
		idAt: func(pg, _ int) int64 { return int64(pg + 1) }, client: newClient(concurrency)}
	for i := range t.urls {
		t.urls[i] = url(int64(i + 1))
	}
	return t
}

// newClient is a keep-alive client for concurrency workers.
func newClient(concurrency int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        2 * concurrency,
			MaxIdleConnsPerHost: 2 * concurrency,
			IdleConnTimeout:     5 * time.Minute,
			DisableCompression:  true,
		},
	}
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
	client   time.Duration // CPU time of the bench process itself; -1 when unknown
}

func (p *phase) rps() float64 { return float64(p.requests) / p.elapsed.Seconds() }

// cpuPerReq is the server's CPU time per request, -1 when unknown.
func (p *phase) cpuPerReq() time.Duration {
	if p.cpu < 0 || p.requests == 0 {
		return -1
	}
	return p.cpu / time.Duration(p.requests)
}

// clientPerReq is the bench's own CPU time per request, -1 when unknown.
func (p *phase) clientPerReq() time.Duration {
	if p.client < 0 || p.requests == 0 {
		return -1
	}
	return p.client / time.Duration(p.requests)
}

// sideStats merges the measured rounds of one side.
type sideStats struct {
	name     string
	requests int
	elapsed  time.Duration
	p50, p99 time.Duration
	rounds   []float64     // req/s of each round
	cpu      time.Duration // server CPU time over the rounds; -1 when unknown
	client   time.Duration // the bench's own CPU time over the rounds; -1 when unknown
}

// cpuPerReq is the server's CPU time per request, -1 when unknown.
func (s sideStats) cpuPerReq() time.Duration {
	if s.cpu < 0 || s.requests == 0 {
		return -1
	}
	return s.cpu / time.Duration(s.requests)
}

// clientPerReq is the bench's own CPU time per request, -1 when unknown.
func (s sideStats) clientPerReq() time.Duration {
	if s.client < 0 || s.requests == 0 {
		return -1
	}
	return s.client / time.Duration(s.requests)
}

func (s sideStats) rps() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.requests) / s.elapsed.Seconds()
}

// loadPhase is the main comparison: gateway and direct on the pg table,
// G, D, G, D.
func loadPhase(ctx context.Context, g, d *target, o options, sum *summary) error {
	gs, ds, failures, err := compare(ctx, g, d, o, 2, false, sum)
	if err != nil {
		return err
	}
	sum.gateway, sum.direct, sum.loadDone = gs, ds, true
	if failures > 0 {
		return fmt.Errorf("%d requests failed in the load phase", failures)
	}
	return nil
}

// compare warms both sides up, then measures them alternately in rounds
// of o.duration/rounds each: a, b, a, b … or, with abba, a, b, b, a, a, b …
// so that a steady drift of the machine weighs on both alike. Failed
// requests are counted (also in sum, with a note); err is only the
// context's.
func compare(ctx context.Context, a, b *target, o options, rounds int, abba bool, sum *summary) (sa, sb sideStats, failures int, err error) {
	run := func(t *target, round string, dur time.Duration) (*phase, error) {
		logf("load %-10s %-7s %s with %d clients", t.name, round, dur, o.concurrency)
		p := runPhase(ctx, t, round, o.concurrency, dur)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		logf("      %-10s %-7s %6d req  %6.0f req/s  p50 %5.2f ms  p99 %5.2f ms  server CPU %s/req  bench CPU %s/req  failures %d",
			t.name, round, p.requests, p.rps(), ms(percentileSorted(p.lat, 50)), ms(percentileSorted(p.lat, 99)), micros(p.cpuPerReq()), micros(p.clientPerReq()), p.failures)
		sum.failures += p.failures
		failures += p.failures
		if p.failures > 0 {
			sum.failureNotes = append(sum.failureNotes, fmt.Sprintf("%s round %s: %d failed requests, first: %s", t.name, round, p.failures, p.firstErr))
		}
		return p, nil
	}
	for _, t := range []*target{a, b} {
		if _, err := run(t, "warm-up", warmup); err != nil {
			return sa, sb, 0, err
		}
	}
	each := o.duration / time.Duration(rounds)
	var pa, pb []*phase
	for round := 1; round <= rounds; round++ {
		order := []*target{a, b}
		if abba && round%2 == 0 {
			order = []*target{b, a}
		}
		for _, t := range order {
			p, err := run(t, strconv.Itoa(round), each)
			if err != nil {
				return sa, sb, 0, err
			}
			if t == a {
				pa = append(pa, p)
			} else {
				pb = append(pb, p)
			}
		}
	}
	return merge(a.name, pa), merge(b.name, pb), failures, nil
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
		if p.client < 0 || s.client < 0 {
			s.client = -1
		} else {
			s.client += p.client
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
	self0, selfErr := procCPU(os.Getpid())
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
				pg := rng.IntN(len(t.urls))
				t0 := time.Now()
				full := k%fullCheckEvery == 0
				err := fetch(ctx, t, pg, &body, full)
				lat := time.Since(t0)
				if err == nil {
					err = checkPage(body.Bytes(), t, pg, full)
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
	p := &phase{target: t.name, round: round, elapsed: time.Since(start), cpu: -1, client: -1}
	if cpu1, err := procCPU(t.pid); err == nil && cpuErr == nil {
		p.cpu = cpu1 - cpu0
	}
	if self1, err := procCPU(os.Getpid()); err == nil && selfErr == nil {
		p.client = self1 - self0
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

// fetch GETs page pg into body (through MCP, the tool's answer); any
// status but 200 is an error. full asks MCP for the full check of the
// JSON-RPC envelope (see mcpCall).
func fetch(ctx context.Context, t *target, pg int, body *bytes.Buffer, full bool) error {
	if t.mcp != nil {
		return mcpCall(ctx, t, "auto_read_rows", t.mcp.bodies[pg], body, full)
	}
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

// checkPage verifies an answer of t to the request of page (or key) pg:
// the envelope, t.size row objects and the page object by byte scans; with
// full, a JSON decode checking every id against t.idAt. (Inside a JSON
// string a quote is escaped, so {"id": only opens a row.)
func checkPage(b []byte, t *target, pg int, full bool) error {
	number := pg
	if t.keyed {
		number = 0
	}
	if !bytes.HasPrefix(b, dataOpen) {
		return fmt.Errorf("body does not start with %s: %.100s", dataOpen, b)
	}
	if n := bytes.Count(b, rowMarker); n != t.size {
		return fmt.Errorf("%d rows, want %d", n, t.size)
	}
	if want := fmt.Sprintf(`"page":{"number":%d,"size":%d}`, number, t.size); !bytes.Contains(b, []byte(want)) {
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
	if len(doc.Data) != t.size || doc.Page.Number != number || doc.Page.Size != t.size {
		return fmt.Errorf("decoded %d rows, page %d size %d; want %d rows of page %d", len(doc.Data), doc.Page.Number, doc.Page.Size, t.size, number)
	}
	for i, r := range doc.Data {
		if want := t.idAt(pg, i); r.ID != want || r.Name == "" {
			return fmt.Errorf("row %d: id %d name %q, want id %d", i, r.ID, r.Name, want)
		}
	}
	return nil
}

// crossCheck fetches page 3 from both targets and compares every value of
// cols (and that there are no others), so both are known to do the same
// work.
func crossCheck(ctx context.Context, a, b *target, cols []string) error {
	const pg = 3
	if len(a.urls) <= pg || len(b.urls) <= pg {
		return fmt.Errorf("fewer than %d pages", pg+1)
	}
	get := func(t *target) ([]map[string]any, error) {
		var body bytes.Buffer
		if err := fetch(ctx, t, pg, &body, true); err != nil {
			return nil, err
		}
		if err := checkPage(body.Bytes(), t, pg, true); err != nil {
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
	g, err := get(a)
	if err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	d, err := get(b)
	if err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	for i := range g {
		if len(g[i]) != len(cols) || len(d[i]) != len(cols) {
			return fmt.Errorf("row %d: %d columns from %s, %d from %s, want %d", i, len(g[i]), a.name, len(d[i]), b.name, len(cols))
		}
		for _, c := range cols {
			if _, ok := g[i][c]; !ok {
				return fmt.Errorf("row %d: no column %s from %s", i, c, a.name)
			}
			if _, ok := d[i][c]; !ok {
				return fmt.Errorf("row %d: no column %s from %s", i, c, b.name)
			}
			if !sameValue(c, g[i][c], d[i][c]) {
				return fmt.Errorf("row %d column %s: %s %#v, %s %#v", i, c, a.name, g[i][c], b.name, d[i][c])
			}
		}
	}
	return nil
}

// sameValue compares one decoded cell: numbers by exact value (a driver
// may write a decimal as a JSON string), timestamps as instants (the two
// sides may print different offsets).
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
	case "id", "price", "qty", "grp":
		an, ok1 := numberText(a)
		bn, ok2 := numberText(b)
		if !ok1 || !ok2 {
			return false
		}
		ar, ok1 := new(big.Rat).SetString(an)
		br, ok2 := new(big.Rat).SetString(bn)
		return ok1 && ok2 && ar.Cmp(br) == 0
	}
	return a == b
}

// numberText is a decoded number (or a number written as a string) as text.
func numberText(v any) (string, bool) {
	switch v := v.(type) {
	case json.Number:
		return string(v), true
	case string:
		return v, true
	}
	return "", false
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

// medianRatio is the median over the measured rounds of a's throughput
// over b's in the same round pair (compare runs them side by side), 0 when
// there is none.
func medianRatio(a, b sideStats) float64 {
	var r []float64
	for i := range min(len(a.rounds), len(b.rounds)) {
		if b.rounds[i] > 0 {
			r = append(r, a.rounds[i]/b.rounds[i])
		}
	}
	if len(r) == 0 {
		return 0
	}
	slices.Sort(r)
	if len(r)%2 == 1 {
		return r[len(r)/2]
	}
	return (r[len(r)/2-1] + r[len(r)/2]) / 2
}
