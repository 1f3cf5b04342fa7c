package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ownPostgres is a PostgreSQL server of the test's own: a cluster made by
// initdb in a temporary directory, on a port of its own, with its unix
// socket in that directory, run as the postgres OS user when the test runs
// as root (PostgreSQL refuses to run as root).
type ownPostgres struct {
	t    *testing.T
	bin  string // directory of initdb, pg_ctl, postgres
	dir  string
	data string
	port int
	user string // OS user running the server, "" for the current one
}

// startOwnPostgres initdb's and starts a throwaway server. It skips when
// the server binaries are missing, unless MINIMAL_TEST_REQUIRE_DBS=1.
func startOwnPostgres(t *testing.T) *ownPostgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if p, err := exec.LookPath("initdb"); err == nil {
		bins = append(bins, p)
	}
	sort.Slice(bins, func(i, j int) bool { return pgVersion(bins[i]) > pgVersion(bins[j]) })
	if len(bins) == 0 {
		if os.Getenv("MINIMAL_TEST_REQUIRE_DBS") == "1" {
			t.Fatal("PostgreSQL server binaries (initdb, pg_ctl) not found and MINIMAL_TEST_REQUIRE_DBS=1")
		}
		t.Skip("PostgreSQL server binaries (initdb, pg_ctl) not found")
	}
	pg := &ownPostgres{t: t, bin: filepath.Dir(bins[0])}
	if os.Geteuid() == 0 {
		pg.user = "postgres"
	}
	dir, err := os.MkdirTemp("", "minimal-ownpg-")
	if err != nil {
		t.Fatal(err)
	}
	pg.dir, pg.data = dir, filepath.Join(dir, "data")
	// The server user must reach its directory through ours.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if pg.user != "" {
		if out, err := exec.Command("chown", pg.user, dir).CombinedOutput(); err != nil {
			t.Fatalf("chown %s: %v %s", dir, err, out)
		}
	}
	t.Cleanup(func() {
		_ = pg.ctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	pg.port = freePort(t)
	if out, err := pg.run("initdb", "-D", pg.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// fsync off is safe here: the test kills the server process, not the
	// machine, and written WAL survives in the page cache. Commits stay
	// synchronous, so an acknowledged batch must survive the kill.
	conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\nfull_page_writes = off\nmax_connections = 40\nshared_buffers = 16MB\n", pg.port, dir)
	f, err := os.OpenFile(filepath.Join(pg.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pg.start()
	return pg
}

// pgVersion is the major version in a /usr/lib/postgresql/N/bin path.
func pgVersion(path string) int {
	parts := strings.Split(path, string(filepath.Separator))
	for i, p := range parts {
		if p == "postgresql" && i+1 < len(parts) {
			n, _ := strconv.Atoi(parts[i+1])
			return n
		}
	}
	return 0
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// run runs a server binary as the server user.
func (pg *ownPostgres) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(pg.bin, name)
	var cmd *exec.Cmd
	if pg.user != "" {
		cmd = exec.Command("runuser", append([]string{"-u", pg.user, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = pg.dir
	return cmd.CombinedOutput()
}

func (pg *ownPostgres) ctl(args ...string) error {
	out, err := pg.run("pg_ctl", append([]string{"-D", pg.data}, args...)...)
	if err != nil {
		return fmt.Errorf("pg_ctl %v: %v\n%s", args, err, out)
	}
	return nil
}

// start starts the server and waits until it accepts connections.
func (pg *ownPostgres) start() {
	pg.t.Helper()
	if err := pg.ctl("start", "-w", "-t", "60", "-l", filepath.Join(pg.dir, "server.log")); err != nil {
		log, _ := os.ReadFile(filepath.Join(pg.dir, "server.log"))
		pg.t.Fatalf("%v\n%s", err, log)
	}
}

// stopImmediate kills the server the hard way: no checkpoint, every
// connection cut, crash recovery at the next start.
func (pg *ownPostgres) stopImmediate() {
	pg.t.Helper()
	if err := pg.ctl("stop", "-m", "immediate", "-w"); err != nil {
		pg.t.Fatal(err)
	}
}

func (pg *ownPostgres) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=3", pg.port)
}

// faultResult is one request of the load.
type faultResult struct {
	phase      string
	kind       string // read or insert
	batch      string
	status     int
	retryAfter string
	code       string
	err        error
	at         time.Time
}

// TestDatabaseOutageRecovery is the fault test: a load of reads and
// multi-row inserts runs against a registered PostgreSQL of the test's own;
// the server is killed (pg_ctl stop -m immediate) under load and started
// again. While it is down every call answers 503 with Retry-After (a
// statement cut in flight may answer 504); the gateway process keeps
// running and stays ready; once the database is back, calls succeed again
// without any restart of the gateway; and no insert batch is half applied.
func TestDatabaseOutageRecovery(t *testing.T) {
	pg := startOwnPostgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.dsn())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA fault; CREATE TABLE fault.batches (id bigserial PRIMARY KEY, batch text NOT NULL, n int NOT NULL, v text NOT NULL, UNIQUE (batch, n))`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	dir := t.TempDir()
	s := startServe(t, dir, "--max-conns", "4", "--acquire-timeout", "2s", "--statement-timeout", "5s")
	pid := s.cmd.Process.Pid
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	base := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo/pg/fault/batches"
	registerAndWait(t, dir, s, "pg", "fault", pg.dsn(), "/minimal/api/rest/auto/v1/demo/demo/pg/fault/batches?ps=1&pg=0", admin)

	const rowsPerBatch = 5
	client := &http.Client{Timeout: 15 * time.Second}
	var (
		mu      sync.Mutex
		results []faultResult
		phase   = "healthy"
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	curPhase := func() string { mu.Lock(); defer mu.Unlock(); return phase }
	setPhase := func(p string) { mu.Lock(); phase = p; mu.Unlock() }
	request := func(worker, i int) faultResult {
		r := faultResult{phase: curPhase(), kind: "read"}
		var req *http.Request
		if i%2 == 0 {
			req, _ = http.NewRequest("GET", base+"?ps=20&pg=0&oy=id.ds", nil)
		} else {
			r.kind, r.batch = "insert", fmt.Sprintf("w%d-%d", worker, i)
			rows := make([]map[string]any, rowsPerBatch)
			for n := range rows {
				rows[n] = map[string]any{"batch": r.batch, "n": n, "v": strings.Repeat("x", 50)}
			}
			body, _ := json.Marshal(rows)
			req, _ = http.NewRequest("POST", base, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("LB-Access-Token", admin)
		resp, err := client.Do(req)
		r.at = time.Now()
		if err != nil {
			r.err = err
			return r
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		r.status, r.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		if json.Unmarshal(b, &env) == nil {
			r.code = env.Error.Code
		}
		return r
	}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := request(w, i)
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	stopLoad := func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}
	defer stopLoad()

	time.Sleep(1500 * time.Millisecond)
	setPhase("down")
	downAt := time.Now()
	pg.stopImmediate()
	time.Sleep(2500 * time.Millisecond)

	// Down: the gateway is the same process, alive and ready (its control
	// plane is fine; one team's database being down must not take every
	// replica out of the load balancer).
	if !s.alive() || s.cmd.Process.Pid != pid {
		t.Fatalf("gateway process gone during the outage:\n%s", s.logText())
	}
	for _, p := range []string{"/livez", "/readyz"} {
		if code, _, body := httpDo(t, "GET", "http://"+s.addr+p, "", ""); code != 200 {
			t.Fatalf("%s during the outage: %d %s", p, code, body)
		}
	}

	setPhase("recovering")
	upAt := time.Now()
	pg.start()
	// Recovery: wait for the first success after the restart, then keep the
	// load running for a while: from then on everything must succeed.
	var firstOK time.Time
	deadline := time.Now().Add(20 * time.Second)
	for firstOK.IsZero() {
		mu.Lock()
		for _, r := range results {
			if r.phase == "recovering" && r.err == nil && r.status/100 == 2 && r.at.After(upAt) {
				firstOK = r.at
				break
			}
		}
		mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no success within 20 s of the database coming back:\n%s", tail(s.logText(), 30))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // connections cut by the outage are retired by now
	setPhase("recovered")
	time.Sleep(1500 * time.Millisecond)
	stopLoad()

	// Judge the phases.
	count := map[string]map[string]int{}
	var recoveredFailures []faultResult
	for _, r := range results {
		key := strconv.Itoa(r.status)
		if r.err != nil {
			key = "transport error"
		}
		if count[r.phase] == nil {
			count[r.phase] = map[string]int{}
		}
		count[r.phase][key]++
		switch r.phase {
		case "healthy", "recovered":
			if r.err != nil || r.status/100 != 2 {
				recoveredFailures = append(recoveredFailures, r)
			}
		case "down":
			switch {
			case r.err != nil:
				t.Errorf("down: transport error %v (the gateway must answer)", r.err)
			case r.status == 503:
				if r.retryAfter == "" || r.code != "UNAVAILABLE" {
					t.Errorf("down: 503 without Retry-After or code UNAVAILABLE: %+v", r)
				}
			case r.status == 504 && r.at.Sub(downAt) < 3*time.Second:
				// A statement cut in flight, or an acquisition racing the stop.
			case r.status/100 == 2 && r.at.Sub(downAt) < 500*time.Millisecond:
				// Answered before the kill took effect.
			default:
				t.Errorf("down: unexpected answer %+v", r)
			}
		}
	}
	t.Logf("answers by phase: %v; first success %v after restart (%v after the kill)",
		count, firstOK.Sub(upAt).Round(time.Millisecond), firstOK.Sub(downAt).Round(time.Millisecond))
	if count["healthy"]["200"] == 0 || count["healthy"]["201"] == 0 {
		t.Errorf("no healthy reads and inserts: %v", count["healthy"])
	}
	if count["down"]["503"] < 5 {
		t.Errorf("too few 503s while down: %v", count["down"])
	}
	if count["recovered"]["200"] == 0 || count["recovered"]["201"] == 0 {
		t.Errorf("no reads and inserts after recovery: %v", count["recovered"])
	}
	for _, r := range recoveredFailures {
		t.Errorf("%s: failed %+v", r.phase, r)
	}
	if !s.alive() || s.cmd.Process.Pid != pid {
		t.Fatal("gateway process restarted or gone")
	}

	// No half-applied batch: each batch is all there or not at all, and a
	// batch answered 201 is all there.
	conn, err = pgx.Connect(ctx, pg.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT batch, count(*) FROM fault.batches GROUP BY batch`)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for rows.Next() {
		var b string
		var n int
		if err := rows.Scan(&b, &n); err != nil {
			t.Fatal(err)
		}
		stored[b] = n
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	inDoubt, acked := 0, 0
	for _, r := range results {
		if r.kind != "insert" {
			continue
		}
		n := stored[r.batch]
		if n != 0 && n != rowsPerBatch {
			t.Errorf("batch %s half applied: %d of %d rows (answer %+v)", r.batch, n, rowsPerBatch, r)
		}
		if r.status == 201 {
			acked++
			if n != rowsPerBatch {
				t.Errorf("batch %s answered 201 but has %d rows", r.batch, n)
			}
		} else if n == rowsPerBatch {
			inDoubt++ // committed, answer lost with the connection
		}
	}
	for b, n := range stored {
		if n != rowsPerBatch {
			t.Errorf("stored batch %s has %d rows", b, n)
		}
	}
	t.Logf("%d batches acknowledged, %d stored in all, %d committed without acknowledgement", acked, len(stored), inDoubt)

	// The gateway's own view: the outage was logged as unavailability, not
	// as internal errors.
	if logs := s.logText(); strings.Contains(logs, `"msg":"internal error"`) {
		t.Errorf("internal errors logged during the outage:\n%s", grepLog(logs, "internal error"))
	}
	s.terminate(t)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func grepLog(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return tail(strings.Join(out, "\n"), 20)
}
