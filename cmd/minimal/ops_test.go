package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// opsServer is a running `minimal serve` with extra flags, its logs kept
// under a lock (the tests read them while the server runs).
type opsServer struct {
	cmd     *exec.Cmd
	addr    string
	mcpAddr string
	mu      sync.Mutex
	logs    strings.Builder
	done    chan error
}

// startServe starts the binary on a data dir with extra serve flags and
// waits for both listeners.
func startServe(t *testing.T, dataDir string, extra ...string) *opsServer {
	t.Helper()
	args := append([]string{"serve", "--data-dir", dataDir, "--rest-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0", "--shutdown-grace", "10s"}, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "MINIMAL_CONTROL_DSN=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &opsServer{cmd: cmd, done: make(chan error, 1)}
	addrs := make(chan [2]string, 4)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.logs.WriteString(line + "\n")
			s.mu.Unlock()
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && (rec.Msg == "serving REST" || rec.Msg == "serving MCP") {
				addrs <- [2]string{rec.Msg, rec.Addr}
			}
		}
		s.done <- cmd.Wait()
	}()
	for s.addr == "" || s.mcpAddr == "" {
		select {
		case a := <-addrs:
			if a[0] == "serving REST" {
				s.addr = a[1]
			} else {
				s.mcpAddr = a[1]
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("server did not start:\n%s", s.logText())
		}
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

func (s *opsServer) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// alive reports whether the server process is still the one started.
func (s *opsServer) alive() bool {
	select {
	case err := <-s.done:
		s.done <- err
		return false
	default:
	}
	return s.cmd.Process.Signal(syscall.Signal(0)) == nil
}

// terminate sends SIGTERM and waits for a clean exit.
func (s *opsServer) terminate(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve exited with %v:\n%s", err, s.logText())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not stop on SIGTERM:\n%s", s.logText())
	}
}

// httpDo sends one request and returns status, headers and body.
func httpDo(t *testing.T, method, url, token, body string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	if token != "" {
		req.Header.Set("LB-Access-Token", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// pgTestSchema makes a schema of its own in MINIMAL_TEST_PG_DSN (dropped at
// the end) by running ddl with search_path set to it; it skips when the
// variable is unset, unless MINIMAL_TEST_REQUIRE_DBS=1.
func pgTestSchema(t *testing.T, prefix, ddl string) (dsn, schema string) {
	t.Helper()
	dsn = os.Getenv("MINIMAL_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("MINIMAL_TEST_REQUIRE_DBS") == "1" {
			t.Fatal("MINIMAL_TEST_PG_DSN is unset and MINIMAL_TEST_REQUIRE_DBS=1")
		}
		t.Skip("MINIMAL_TEST_PG_DSN is unset")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema = fmt.Sprintf("%s_%d", prefix, rand.Uint32())
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.Background())
	})
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema+"; SET search_path TO "+schema+"; "+ddl); err != nil {
		t.Fatal(err)
	}
	return dsn, schema
}

// registerAndWait registers a database with the CLI and waits until the
// running server serves path.
func registerAndWait(t *testing.T, dir string, s *opsServer, typ, schema, dsn, path, token string) {
	t.Helper()
	if _, errOut, code := cli(t, "db", "add", "--data-dir", dir, "--type", typ, "--schema", schema, "--dsn", dsn); code != 0 {
		t.Fatalf("db add: %s", errOut)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _, body := httpDo(t, "GET", "http://"+s.addr+path, token, "")
		if code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not served: %d %s", path, code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// identifiedAuditLines counts the operations logged with an identity (on
// their request's line, or on an "audit" line of their own): the entries
// the audit writer is to store.
func identifiedAuditLines(logs string) int {
	n := 0
	for _, line := range strings.Split(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && (rec["msg"] == "audit" || rec["msg"] == "request") &&
			rec["action"] != nil && rec["identity"] != nil {
			n++
		}
	}
	return n
}

// sample is one series of a Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// scrape reads /metrics in the text format.
func scrape(t *testing.T, addr string) []sample {
	t.Helper()
	code, hdr, body := httpDo(t, "GET", "http://"+addr+"/metrics", "", "")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", code, hdr.Get("Content-Type"))
	}
	var out []sample
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unparsable metrics line %q", line)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("bad value in %q", line)
		}
		s := sample{name: m[1], labels: map[string]string{}, value: v}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			s.labels[p[1]] = p[2]
		}
		out = append(out, s)
	}
	return out
}

// value sums the samples of a name whose labels include want.
func value(ss []sample, name string, want map[string]string) (float64, bool) {
	sum, found := 0.0, false
outer:
	for _, s := range ss {
		if s.name != name {
			continue
		}
		for k, v := range want {
			if s.labels[k] != v {
				continue outer
			}
		}
		sum, found = sum+s.value, true
	}
	return sum, found
}

// documentedMetrics reads the metric names of the table in
// docs/operations.md (rows starting with | `minimal_…`).
func documentedMetrics(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(minimal_[a-z_]+)` \\| (counter|gauge|histogram) \\|")
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			out[m[1]] = m[2]
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d metrics documented in docs/operations.md", len(out))
	}
	return out
}

const autoRoute = "/minimal/api/rest/auto/v1/{org}/{project}/{type}/{schema}/{table}"

// TestMetricsAfterWorkload: after REST reads and writes, refusals on both
// faces and MCP calls, /metrics serves every documented series with
// values that match the workload, and only documented gateway series.
func TestMetricsAfterWorkload(t *testing.T) {
	dsn, schema := pgTestSchema(t, "metrics", `CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL); INSERT INTO items (name) VALUES ('a'), ('b');`)
	dir := t.TempDir()
	// Pools named org/project/type/schema (by default their ids: see
	// TestMetricsTenantLabels).
	s := startServe(t, dir, "--max-conns", "3", "--metrics-tenant-labels")
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	agent := readToken(t, filepath.Join(dir, "agent.token"))
	base := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo"
	registerAndWait(t, dir, s, "pg", schema, dsn, "/minimal/api/rest/auto/v1/demo/demo/pg/"+schema+"/items?ps=1&pg=0", admin)

	for range 3 {
		if code, _, body := httpDo(t, "GET", base+"/mi/app/notes?ps=10&pg=0", admin, ""); code != 200 {
			t.Fatalf("read: %d %s", code, body)
		}
	}
	if code, _, body := httpDo(t, "GET", base+"/pg/"+schema+"/items?ps=10&pg=0&oy=id.as", admin, ""); code != 200 || !strings.Contains(body, `"name":"b"`) {
		t.Fatalf("pg read: %d %s", code, body)
	}
	if code, _, body := httpDo(t, "POST", base+"/pg/"+schema+"/items", admin, `[{"name":"c"},{"name":"d"}]`); code != 201 {
		t.Fatalf("insert: %d %s", code, body)
	}
	if code, _, body := httpDo(t, "POST", base+"/mi/app/notes", admin, `{"title":"t","body":"b"}`); code != 201 {
		t.Fatalf("mi insert: %d %s", code, body)
	}
	ro, errOut, code := cli(t, "token", "mint", "--data-dir", dir, "--identity", "admin", "--key-type", "-r--")
	if code != 0 {
		t.Fatalf("mint: %s", errOut)
	}
	if code, _, _ := httpDo(t, "DELETE", base+"/pg/"+schema+"/items?id=eq.1", strings.TrimSpace(ro), ""); code != 403 {
		t.Fatalf("read-only delete: %d", code)
	}
	if code, _, _ := httpDo(t, "GET", "http://"+s.addr+"/no/such/path", "", ""); code != 404 {
		t.Fatalf("unknown path: %d", code)
	}

	text, isErr := toolText(t, s.mcpAddr, agent, "", "start_ai_session", map[string]any{"name": "metrics", "context": "metrics test"})
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(text), &started); err != nil || isErr {
		t.Fatalf("start: %s", text)
	}
	if text, isErr := toolText(t, s.mcpAddr, agent, started.SessionID, "auto_read_rows", map[string]any{"type": "pg", "schema": schema, "table": "items",
		"page_size": 10, "page_number": 0, "query": map[string]any{"oy": "id.as"}}); isErr || !strings.Contains(text, `"d"`) {
		t.Fatalf("mcp read: %s", text)
	}
	agentRO, errOut, code := cli(t, "token", "mint", "--data-dir", dir, "--identity", "agent", "--key-type", "-r--")
	if code != 0 {
		t.Fatalf("mint agent: %s", errOut)
	}
	text, _ = toolText(t, s.mcpAddr, strings.TrimSpace(agentRO), "", "start_ai_session", map[string]any{"name": "ro", "context": "read-only"})
	var roSession struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal([]byte(text), &roSession)
	if text, isErr := toolText(t, s.mcpAddr, strings.TrimSpace(agentRO), roSession.SessionID, "auto_delete_rows", map[string]any{"type": "pg", "schema": schema, "table": "items",
		"query": map[string]any{"id": "eq.1"}}); !isErr || !strings.Contains(text, "FORBIDDEN") {
		t.Fatalf("mcp read-only delete: %s", text)
	}

	// The audit writer is asynchronous: wait until it has written every
	// entry the server logged for a known caller (the polls of
	// registerAndWait add a machine-dependent number of NOT_FOUND entries,
	// so no fixed count will do). The log is buffered too: its lines are
	// counted again on every round, until the two MCP operations are in.
	var ss []sample
	var want float64
	deadline := time.Now().Add(5 * time.Second)
	for {
		logs := s.logText()
		want = float64(identifiedAuditLines(logs))
		ss = scrape(t, s.addr)
		n, _ := value(ss, "minimal_audit_written_total", nil)
		q, _ := value(ss, "minimal_audit_queue_length", nil)
		mcpOps := 0
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, `"face":"mcp"`) && strings.Contains(line, `"action":`) {
				mcpOps++
			}
		}
		if n >= want && n >= 10 && q == 0 && mcpOps >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit entries written: %v (queue %v), want %v", n, q, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	pgDB := "demo/demo/pg/" + schema
	checks := []struct {
		name   string
		labels map[string]string
		min    float64
		max    float64
	}{
		{"minimal_http_requests_total", map[string]string{"face": "rest", "route": autoRoute, "method": "GET", "status": "200"}, 4, 1e9},
		{"minimal_http_requests_total", map[string]string{"face": "rest", "route": autoRoute, "method": "POST", "status": "201"}, 2, 2},
		{"minimal_http_requests_total", map[string]string{"face": "rest", "route": autoRoute, "method": "DELETE", "status": "403"}, 1, 1},
		{"minimal_http_requests_total", map[string]string{"face": "rest", "route": "unmatched", "status": "404"}, 1, 1},
		{"minimal_http_requests_total", map[string]string{"face": "mcp", "route": "/minimal/mcp/rpc/v1", "method": "POST", "status": "200"}, 4, 4},
		{"minimal_http_request_duration_seconds_count", map[string]string{"face": "rest", "route": autoRoute, "method": "GET"}, 4, 1e9},
		{"minimal_http_request_duration_seconds_bucket", map[string]string{"face": "mcp", "le": "+Inf"}, 4, 4},
		{"minimal_http_request_duration_seconds_sum", map[string]string{"face": "rest"}, 1e-6, 60},
		{"minimal_http_requests_in_flight", map[string]string{"face": "rest"}, 1, 1}, // the scrape itself
		{"minimal_refusals_total", map[string]string{"face": "rest", "gate": "lock"}, 1, 1},
		{"minimal_refusals_total", map[string]string{"face": "mcp", "gate": "lock"}, 1, 1},
		{"minimal_ai_sessions_active", nil, 2, 2},
		{"minimal_db_pool_max_connections", map[string]string{"database": pgDB}, 3, 3},
		{"minimal_db_pool_connections", map[string]string{"database": pgDB, "state": "idle"}, 1, 3},
		{"minimal_db_pool_connections", map[string]string{"database": pgDB, "state": "acquired"}, 0, 0},
		{"minimal_db_pool_acquires_total", map[string]string{"database": pgDB}, 3, 1e9},
		{"minimal_db_pool_empty_acquires_total", map[string]string{"database": pgDB}, 1, 1e9},
		{"minimal_db_pool_canceled_acquires_total", map[string]string{"database": pgDB}, 0, 0},
		{"minimal_db_pool_acquire_wait_seconds_total", map[string]string{"database": pgDB}, 1e-9, 60},
		{"minimal_audit_written_total", nil, 10, 1e9},
		{"minimal_audit_queue_length", nil, 0, 0},
		{"minimal_audit_dropped_total", map[string]string{"reason": "queue_full"}, 0, 0},
		{"minimal_audit_dropped_total", map[string]string{"reason": "write_error"}, 0, 0},
		{"minimal_rate_limited_total", nil, 0, 0},
		{"minimal_build_info", map[string]string{"version": "dev"}, 1, 1},
	}
	for _, c := range checks {
		v, found := value(ss, c.name, c.labels)
		if c.name == "minimal_rate_limited_total" {
			found = true // no series until the first refusal; limits are off here
		}
		if !found || v < c.min || v > c.max {
			t.Errorf("%s%v = %v (found %v), want %v..%v", c.name, c.labels, v, found, c.min, c.max)
		}
	}

	// Every documented series is served, and every gateway series served is
	// documented (the rate-limit counter appears with its first refusal,
	// tested in TestRateLimitServe).
	doc := documentedMetrics(t)
	served := map[string]bool{}
	for _, smp := range ss {
		name := smp.name
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suf); ok && doc[base] == "histogram" {
				name = base
			}
		}
		served[name] = true
		if strings.HasPrefix(name, "minimal_") && doc[name] == "" {
			t.Errorf("%s is served but not documented in docs/operations.md", name)
		}
	}
	var missing []string
	for name := range doc {
		if !served[name] && name != "minimal_rate_limited_total" {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("documented but not served: %v", missing)
	}
	for _, std := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if !served[std] {
			t.Errorf("runtime series %s missing", std)
		}
	}

	// Request log lines carry request ids, and the operation of each
	// request (an operation of its own has an "audit" line); the audit CLI
	// shows both faces with the same ids.
	var requests, audits int
	ids := map[string]bool{}
	for _, line := range strings.Split(s.logText(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		switch rec["msg"] {
		case "request", "audit":
			id, _ := rec["request_id"].(string)
			if id == "" {
				t.Errorf("log line without request_id: %s", line)
			}
			if rec["action"] != nil {
				audits++
				ids[id] = true
			}
			if rec["msg"] == "request" {
				requests++
			}
		}
	}
	if requests < 10 || audits < 8 {
		t.Errorf("%d request lines, %d audit lines", requests, audits)
	}
	out, errOut, code := cli(t, "audit", "--data-dir", dir, "--project", "demo/demo", "--limit", "1000", "--json")
	if code != 0 {
		t.Fatalf("audit: %s", errOut)
	}
	faces := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		face, _ := raw["face"].(string)
		rid, _ := raw["request_id"].(string)
		faces[face]++
		if !ids[rid] {
			t.Errorf("audit entry %s has request id %q not seen in the audit log lines", line, rid)
		}
	}
	if faces["rest"] < 6 || faces["mcp"] < 2 {
		t.Errorf("audit entries by face: %v", faces)
	}
	out, _, code = cli(t, "audit", "--data-dir", dir, "--project", "demo/demo", "--outcome", "error", "--limit", "1000")
	if code != 0 || strings.Count(out, "FORBIDDEN") != 2 || !strings.Contains(out, "REQUEST") {
		t.Errorf("audit --outcome error: %d\n%s", code, out)
	}
	if _, _, code := cli(t, "audit", "--data-dir", dir, "--limit", "0"); code != 2 {
		t.Errorf("audit --limit 0: exit %d", code)
	}
	s.terminate(t)
}

// TestRateLimitServe: --rate-limit and --rate-burst limit each identity
// across both faces with 429 and Retry-After; other identities and the
// health endpoints are not affected.
func TestRateLimitServe(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--rate-limit", "0.5", "--rate-burst", "2")
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	agent := readToken(t, filepath.Join(dir, "agent.token"))
	notes := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=1&pg=0"
	for i := range 2 {
		if code, _, body := httpDo(t, "GET", notes, admin, ""); code != 200 {
			t.Fatalf("request %d: %d %s", i, code, body)
		}
	}
	code, hdr, body := httpDo(t, "GET", notes, admin, "")
	if code != 429 || hdr.Get("Retry-After") != "2" || !strings.Contains(body, `"RATE_LIMITED"`) || hdr.Get("X-Request-Id") == "" {
		t.Fatalf("third request: %d %v %s", code, hdr, body)
	}
	// MCP: the agent has its own bucket …
	for i := range 2 {
		if status, m := mcpPost(t, s.mcpAddr, agent, "", "tools/call", map[string]any{"name": "help", "arguments": map[string]any{}}); status != 200 {
			t.Fatalf("mcp call %d: %d %v", i, status, m)
		}
	}
	// … and spends it like anyone: refused before JSON-RPC is read.
	req, _ := http.NewRequest("POST", "http://"+s.mcpAddr+"/minimal/mcp/rpc/v1", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("LB-Access-Token", agent)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "RATE_LIMITED") {
		t.Fatalf("mcp over the limit: %d %s", resp.StatusCode, b)
	}
	for range 5 {
		if code, _, _ := httpDo(t, "GET", "http://"+s.addr+"/livez", "", ""); code != 200 {
			t.Fatalf("livez limited: %d", code)
		}
	}
	ss := scrape(t, s.addr)
	if v, _ := value(ss, "minimal_rate_limited_total", map[string]string{"face": "rest"}); v != 1 {
		t.Errorf("rest rate-limited = %v", v)
	}
	if v, _ := value(ss, "minimal_rate_limited_total", map[string]string{"face": "mcp"}); v != 1 {
		t.Errorf("mcp rate-limited = %v", v)
	}
	if v, _ := value(ss, "minimal_http_requests_total", map[string]string{"face": "rest", "status": "429"}); v != 1 {
		t.Errorf("429 requests = %v", v)
	}
	s.terminate(t)
	if _, errOut, code := cli(t, "serve", "--data-dir", dir, "--rate-limit", "-1"); code != 2 || !strings.Contains(errOut, "rate-limit") {
		t.Errorf("negative rate: %d %s", code, errOut)
	}
}

// TestSIGTERMDrainsInFlight: a slow request in flight when SIGTERM arrives
// is answered in full; the process then exits 0 and no longer accepts
// connections.
func TestSIGTERMDrainsInFlight(t *testing.T) {
	dsn, schema := pgTestSchema(t, "drain", `CREATE VIEW slow AS SELECT 1 AS id, pg_sleep(2)::text AS s; CREATE TABLE t (id int PRIMARY KEY);`)
	dir := t.TempDir()
	s := startServe(t, dir)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	registerAndWait(t, dir, s, "pg", schema, dsn, "/minimal/api/rest/auto/v1/demo/demo/pg/"+schema+"/t?ps=1&pg=0", admin)

	type result struct {
		code int
		body string
		err  error
		at   time.Time
	}
	res := make(chan result, 1)
	start := time.Now()
	go func() {
		req, _ := http.NewRequest("GET", "http://"+s.addr+"/minimal/api/rest/auto/v1/demo/demo/pg/"+schema+"/slow?ps=1&pg=0", nil)
		req.Header.Set("LB-Access-Token", admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		res <- result{code: resp.StatusCode, body: string(b), err: err, at: time.Now()}
	}()
	// Wait until the statement runs on the database.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%`+schema+`%slow%' AND state = 'active'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("slow statement never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sent := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil || r.code != 200 || !strings.Contains(r.body, `"id":1`) {
		t.Fatalf("in-flight request: %v %d %s\n%s", r.err, r.code, r.body, s.logText())
	}
	if r.at.Before(sent) {
		t.Fatal("the slow request finished before SIGTERM: the test proved nothing")
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve exited with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after draining")
	}
	logs := s.logText()
	if !strings.Contains(logs, "draining in-flight requests") || !strings.Contains(logs, `"msg":"stopped"`) {
		t.Errorf("no drain in logs:\n%s", logs)
	}
	if _, err := http.Get("http://" + s.addr + "/livez"); err == nil {
		t.Error("still accepting connections after stopping")
	}
	t.Logf("in-flight request answered %v after SIGTERM", r.at.Sub(sent).Round(time.Millisecond))
}
