package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/bootstrap"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/observe"
	"github.com/littlebitlabs/minimal/store"
)

// opsGateway is newGateway with the operational parts switched on: the
// audit writer, metrics and the rate limit given in acfg.
type opsGateway struct {
	*gateway
	audit   *store.AuditWriter
	metrics *observe.Metrics
}

func newOpsGateway(t *testing.T, cfg engine.Config, acfg api.Config) *opsGateway {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ver := auth.NewVerifier(st, key)
	if _, err := bootstrap.Ensure(ctx, st, dir, key, ver, log); err != nil {
		t.Fatal(err)
	}
	aw := store.NewAuditWriter(st, 1000, log)
	t.Cleanup(func() { _ = aw.Close(context.Background()) })
	m := acfg.Metrics
	cfg.Logger, cfg.PollInterval, cfg.Audit = log, 50*time.Millisecond, aw
	cfg.Refused = func(ctx context.Context, g engine.RefusalGate) { m.Refused(ctx, string(g)) }
	eng, err := engine.New(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	go eng.Run(rctx)
	acfg.Logger, acfg.MaxBodyBytes, acfg.MaxPageSize = log, 1<<16, 100
	srv := httptest.NewServer(api.New(api.Deps{Engine: eng, Verifier: ver, Store: st, SigningKey: key}, acfg))
	t.Cleanup(func() { srv.Close(); cancel(); eng.Close() })
	tok, err := os.ReadFile(dir + "/admin.token")
	if err != nil {
		t.Fatal(err)
	}
	org, _ := st.Org(ctx, "demo")
	proj, _ := st.Project(ctx, org.ID, "demo")
	g := &gateway{t: t, dir: dir, st: st, key: key, srv: srv, admin: strings.TrimSpace(string(tok)), proj: proj, eng: eng}
	return &opsGateway{gateway: g, audit: aw, metrics: m}
}

// auditFor waits until the audit log holds an entry of the request id.
func (g *opsGateway) auditFor(requestID string) store.AuditEntry {
	g.t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		es, err := g.st.AuditLog(context.Background(), g.proj.ID, store.AuditFilter{Limit: store.MaxAuditLimit})
		if err != nil {
			g.t.Fatal(err)
		}
		for _, e := range es {
			if e.RequestID == requestID {
				return e
			}
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("no audit entry for request %s in %d entries", requestID, len(es))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (g *opsGateway) doID(method, path, token, requestID string, body io.Reader) (*http.Response, string) {
	g.t.Helper()
	req, _ := http.NewRequest(method, g.srv.URL+path, body)
	req.Header.Set("LB-Access-Token", token)
	req.Header.Set(observe.RequestIDHeader, requestID)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := g.srv.Client().Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestAuditEntries: every data operation, allowed or refused, lands in the
// audit table with who, what, how many rows, the outcome and the request
// id the caller saw.
func TestAuditEntries(t *testing.T) {
	g := newOpsGateway(t, engine.Config{}, api.Config{})
	notes := auto + "/mi/app/notes"
	resp, body := g.doID("GET", notes+"?ps=10&pg=0", g.admin, "audit-read-1", nil)
	if resp.StatusCode != 200 || resp.Header.Get(observe.RequestIDHeader) != "audit-read-1" {
		t.Fatalf("read: %d %s", resp.StatusCode, body)
	}
	e := g.auditFor("audit-read-1")
	if e.Identity != "admin" || e.Action != "read" || e.Object != "mi/app/notes" || e.Rows != 3 || e.Outcome != "ok" ||
		e.Face != observe.FaceREST || len(e.Roles) == 0 || e.ProjectID != g.proj.ID || e.At.IsZero() || e.IdentityID == "" {
		t.Fatalf("read entry %+v", e)
	}

	resp, body = g.doID("POST", notes, g.admin, "audit-insert-1", strings.NewReader(`[{"title":"a","body":"x"},{"title":"b","body":"y"}]`))
	if resp.StatusCode != 201 {
		t.Fatalf("insert: %d %s", resp.StatusCode, body)
	}
	if e := g.auditFor("audit-insert-1"); e.Action != "create" || e.Rows != 2 || e.Outcome != "ok" {
		t.Fatalf("insert entry %+v", e)
	}

	ro := g.mint("admin", auth.MintOptions{KeyType: "-r--"})
	resp, _ = g.doID("DELETE", notes+"?title=eq.a", ro, "audit-refused-1", nil)
	if resp.StatusCode != 403 {
		t.Fatalf("read-only delete: %d", resp.StatusCode)
	}
	if e := g.auditFor("audit-refused-1"); e.Action != "delete" || e.Outcome != "FORBIDDEN" || e.Rows != 0 || !strings.Contains(e.Message, "admin") {
		t.Fatalf("refusal entry %+v", e)
	}
	if st := g.audit.Stats(); st.DroppedFull+st.DroppedError != 0 {
		t.Fatalf("audit drops %+v", st)
	}

	// The admin API serves the log: filtered, newest first, admins only.
	adminAudit := "/minimal/api/admin/v1/orgs/demo/projects/demo/audit"
	r := g.do("GET", adminAudit+"?outcome=FORBIDDEN", g.admin, nil)
	expect(t, r, 200)
	got := r.data(t)
	if len(got) != 1 || got[0]["request_id"] != "audit-refused-1" || got[0]["action"] != "delete" || got[0]["face"] != "rest" {
		t.Fatalf("audit via admin API: %s", r.body)
	}
	r = g.do("GET", adminAudit+"?limit=2", g.admin, nil)
	if rows := r.data(t); len(rows) != 2 || rows[0]["request_id"] != "audit-refused-1" {
		t.Fatalf("newest first: %s", r.body)
	}
	expect(t, g.do("GET", adminAudit+"?limit=0", g.admin, nil), 400)
	expect(t, g.do("GET", adminAudit+"?since=yesterday", g.admin, nil), 400)
	expect(t, g.do("GET", adminAudit, "", nil), 401)
}

// TestReadyzTruthful: ready while the store answers; 503 with Retry-After
// once it does not, while /livez stays 200.
func TestReadyzTruthful(t *testing.T) {
	g := newOpsGateway(t, engine.Config{}, api.Config{})
	r := g.do("GET", api.ReadyzPath, "", nil)
	expect(t, r, 200)
	if err := g.st.Close(); err != nil {
		t.Fatal(err)
	}
	r = g.do("GET", api.ReadyzPath, "", nil)
	expect(t, r, 503)
	if r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "store") {
		t.Fatalf("readyz: %v %s", r.header, r.body)
	}
	expect(t, g.do("GET", api.LivezPath, "", nil), 200)
}

// TestRateLimitREST: the token bucket per identity answers 429 with
// Retry-After once the burst is spent, leaves other identities alone, and
// counts the refusals.
func TestRateLimitREST(t *testing.T) {
	m := observe.NewMetrics("test")
	g := newOpsGateway(t, engine.Config{}, api.Config{Metrics: m, Limiter: observe.NewLimiter(1, 3, m)})
	notes := auto + "/mi/app/notes?ps=1&pg=0"
	for i := range 3 {
		expect(t, g.do("GET", notes, g.admin, nil), 200)
		_ = i
	}
	r := g.do("GET", notes, g.admin, nil)
	expect(t, r, 429)
	if ra := r.header.Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After %q", ra)
	}
	if code := r.json(t)["error"].(map[string]any)["code"]; code != observe.CodeRateLimited {
		t.Fatalf("code %v", code)
	}
	// Another identity has its own bucket; a bad token is refused by
	// authentication, not by the limit.
	agent, err := os.ReadFile(g.dir + "/agent.token")
	if err != nil {
		t.Fatal(err)
	}
	expect(t, g.do("GET", notes, strings.TrimSpace(string(agent)), nil), 200)
	expect(t, g.do("GET", notes, "not-a-token", nil), 401)
	// The bucket refills at the rate.
	time.Sleep(1100 * time.Millisecond)
	expect(t, g.do("GET", notes, g.admin, nil), 200)
	// Health endpoints are never limited.
	for range 5 {
		expect(t, g.do("GET", api.LivezPath, "", nil), 200)
	}
	scrape := g.do("GET", api.MetricsPath, "", nil)
	expect(t, scrape, 200)
	if !strings.Contains(string(scrape.body), `minimal_rate_limited_total{face="rest"} 1`) {
		t.Fatalf("rate-limited counter missing:\n%s", grepLines(string(scrape.body), "minimal_rate"))
	}
}

// TestPoolExhausted: with one connection per pool and a statement holding
// it, the next call waits the acquisition timeout and answers 504 saying the
// pool is exhausted; the pool metrics show it; once the slow statement is
// done the pool serves again.
func TestPoolExhausted(t *testing.T) {
	dsn := pgDSN(t)
	m := observe.NewMetrics("test")
	g := newOpsGateway(t, engine.Config{MaxConns: 1, AcquireTimeout: 300 * time.Millisecond}, api.Config{Metrics: m, MetricsTenantLabels: true})
	s := g.pgSchema(dsn)

	var wg sync.WaitGroup
	wg.Add(1)
	var slow reply
	go func() {
		defer wg.Done()
		slow = g.do("GET", auto+"/pg/"+s+"/slow?ps=1&pg=0", g.admin, nil)
	}()
	// Wait until the slow statement holds the only connection.
	deadline := time.Now().Add(3 * time.Second)
	for {
		ps := g.eng.Pools()
		if len(ps) == 1 && ps[0].Acquired == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slow statement never took the connection: %+v", ps)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	r := g.do("GET", auto+"/pg/"+s+"/departments?ps=1&pg=0", g.admin, nil)
	waited := time.Since(start)
	expect(t, r, 504)
	if msg := r.errorMessage(t); !strings.Contains(msg, "pool exhausted") {
		t.Fatalf("504 message %q", msg)
	}
	if waited < 250*time.Millisecond || waited > 2*time.Second {
		t.Fatalf("answered after %v, want about the 300ms acquisition timeout", waited)
	}
	ps := g.eng.Pools()
	if len(ps) != 1 || ps[0].MaxConns != 1 || ps[0].CanceledAcquires < 1 || ps[0].Database != "demo/demo/pg/"+s {
		t.Fatalf("pool stats %+v", ps)
	}
	scrape := string(g.do("GET", api.MetricsPath, "", nil).body)
	for _, want := range []string{
		`minimal_db_pool_max_connections{database="demo/demo/pg/` + s + `"} 1`,
		`minimal_db_pool_connections{database="demo/demo/pg/` + s + `",state="acquired"} 1`,
		`minimal_db_pool_canceled_acquires_total{database="demo/demo/pg/` + s + `"} 1`,
	} {
		if !strings.Contains(scrape, want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(scrape, "minimal_db_pool"))
		}
	}
	wg.Wait()
	expect(t, slow, 200)
	expect(t, g.do("GET", auto+"/pg/"+s+"/departments?ps=1&pg=0", g.admin, nil), 200)
}

// grepLines returns the lines of s that contain sub, for failure messages.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestRefusalsByGate: each permission gate that refuses an operation is
// counted once under its own label, and the refusal is audited.
func TestRefusalsByGate(t *testing.T) {
	m := observe.NewMetrics("test")
	g := newOpsGateway(t, engine.Config{}, api.Config{Metrics: m})
	ctx := context.Background()
	if err := mi.CreateTable(g.dir+"/mini-app/app", "tasks", []byte(tasksSchema)); err != nil {
		t.Fatal(err)
	}
	pol := store.Policy{
		Templates: []store.Template{
			{Name: "all", Rules: []store.Rule{{Object: "*", Actions: []string{"create", "read", "update", "delete"}}}},
			{Name: "notes-read", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"read"}}}},
			{Name: "tasks", Rules: []store.Rule{{Object: "mi/app/tasks", Actions: []string{"create", "read"}}}},
		},
		Bindings: []store.Binding{
			{Role: "admin", Templates: []string{"all"}},
			{Role: "reader", Templates: []string{"notes-read"}},
			{Role: "tasker", Templates: []string{"tasks"}},
		},
		Scopes: []store.Scope{{Role: "tasker", Object: "mi/app/tasks", Filter: "owner=eq.{identity}"}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	for name, roles := range map[string][]string{"rdr": {"reader"}, "tsk": {"tasker"}} {
		if _, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: space.ID, Name: name, Kind: "user", Roles: roles, KeyType: "crud", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	rdr, tsk := g.mint("rdr", auth.MintOptions{}), g.mint("tsk", auth.MintOptions{})
	ro := g.mint("admin", auth.MintOptions{KeyType: "-r--"})
	waitStatus(t, g.gateway, auto+"/mi/app/tasks?ps=1&pg=0", tsk, 200)
	before := map[string]float64{}
	for _, gate := range []string{"lock", "template", "scope", "hidden"} {
		before[gate] = refusals(t, g, gate)
	}

	steps := []struct {
		gate, method, path, token, body string
		status                          int
	}{
		{"lock", "DELETE", auto + "/mi/app/notes?title=eq.x", ro, "", 403},
		{"template", "POST", auto + "/mi/app/notes", rdr, `{"title":"t","body":"b"}`, 403},
		{"hidden", "GET", auto + "/mi/app/tasks?ps=1&pg=0", rdr, "", 404},
		{"scope", "POST", auto + "/mi/app/tasks", tsk, `{"title":"t","owner":"someone-else"}`, 403},
	}
	for _, s := range steps {
		var body io.Reader
		if s.body != "" {
			body = strings.NewReader(s.body)
		}
		resp, text := g.doID(s.method, s.path, s.token, "gate-"+s.gate, body)
		if resp.StatusCode != s.status {
			t.Fatalf("%s: %d %s", s.gate, resp.StatusCode, text)
		}
		for _, gate := range []string{"lock", "template", "scope", "hidden"} {
			want := before[gate]
			if gate == s.gate {
				want++
				before[gate] = want
			}
			if got := refusals(t, g, gate); got != want {
				t.Errorf("after the %s refusal: refusals{gate=%s} = %v, want %v", s.gate, gate, got, want)
			}
		}
		if e := g.auditFor("gate-" + s.gate); e.Outcome == "ok" {
			t.Errorf("%s refusal audited as %+v", s.gate, e)
		}
	}
	// Allowed calls count nothing.
	expect(t, g.do("POST", auto+"/mi/app/tasks", tsk, map[string]any{"title": "mine", "owner": "tsk"}), 201)
	expect(t, g.do("GET", auto+"/mi/app/notes?ps=1&pg=0", rdr, nil), 200)
	for gate, want := range before {
		if got := refusals(t, g, gate); got != want {
			t.Errorf("allowed calls moved refusals{gate=%s} to %v", gate, got)
		}
	}
}

// refusals reads minimal_refusals_total{face="rest",gate=…} from /metrics.
func refusals(t *testing.T, g *opsGateway, gate string) float64 {
	t.Helper()
	r := g.do("GET", api.MetricsPath, "", nil)
	expect(t, r, 200)
	prefix := `minimal_refusals_total{face="rest",gate="` + gate + `"} `
	for _, l := range strings.Split(string(r.body), "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return 0
}
