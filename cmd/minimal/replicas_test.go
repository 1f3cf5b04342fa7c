package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/store"
)

// replica is a `minimal serve` process started with its own environment.
type replica struct {
	name    string
	cmd     *exec.Cmd
	addr    string
	mcpAddr string
	done    chan error
	ready   chan error

	mu   sync.Mutex
	logs strings.Builder
}

// launchReplica starts `minimal serve` on dataDir with env added to the
// test's environment, without waiting for it to listen (see waitReady), so
// that two replicas can start at the same moment.
func launchReplica(t *testing.T, name, dataDir string, env []string) *replica {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--data-dir", dataDir, "--rest-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0", "--shutdown-grace", "5s")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, cmd: cmd, done: make(chan error, 1), ready: make(chan error, 2)}
	go func() {
		sc := bufio.NewScanner(stderr)
		var rest, mcp string
		reported := false
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			r.logs.WriteString(line + "\n")
			r.mu.Unlock()
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			switch rec.Msg {
			case "serving REST":
				rest = rec.Addr
			case "serving MCP":
				mcp = rec.Addr
			}
			if rest != "" && mcp != "" && !reported {
				r.mu.Lock()
				r.addr, r.mcpAddr = rest, mcp
				r.mu.Unlock()
				r.ready <- nil
				reported = true
			}
		}
		err := cmd.Wait()
		r.ready <- fmt.Errorf("exited before listening: %v", err)
		r.done <- err
	}()
	// After stop this finds the process gone; it matters when a test fails
	// with the replica still running.
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return r
}

// waitReady waits until the replica listens on both faces.
func (r *replica) waitReady(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.ready:
		if err != nil {
			t.Fatalf("replica %s: %v\n%s", r.name, err, r.log())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("replica %s did not start:\n%s", r.name, r.log())
	}
}

func (r *replica) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.String()
}

func (r *replica) rest(path string) string { return "http://" + r.addr + path }

// stop sends SIGTERM and waits for a clean exit.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("replica %s exited with %v:\n%s", r.name, err, r.log())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("replica %s did not stop", r.name)
	}
}

// cliEnv runs a subcommand with env added to the test's environment and
// returns stdout, stderr and the exit code.
func cliEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return so.String(), se.String(), code
}

// freshControlPlane creates an empty database next to the one of
// MINIMAL_TEST_PG_DSN (whose role may create databases), drops it when the
// test ends, and returns its DSN.
func freshControlPlane(t *testing.T) string {
	t.Helper()
	base := dialecttest.DSN(t, "MINIMAL_TEST_PG_DSN")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("minimal_replicas_%d_%08x", os.Getpid(), mrand.Uint32())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create the control-plane database: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		return u.String()
	}
	return base + " dbname=" + name
}

// within polls check every 25 ms until it returns true, failing the test
// when that takes longer than limit; it returns how long it took.
func within(t *testing.T, limit time.Duration, what string, check func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, last := check()
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v; last: %s", what, limit, last)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestTwoReplicas runs two `serve` processes on one PostgreSQL control
// plane, each with its own data dir and the same master key, started at the
// same moment on an empty store: one bootstrap, one signing key, tokens and
// AI sessions good on both, and a role revoked, a token revoked or a
// database registered through one replica in force on the other within 2 s.
func TestTwoReplicas(t *testing.T) {
	dsn := freshControlPlane(t)
	key := make([]byte, store.MasterKeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyText := base64.StdEncoding.EncodeToString(key)
	env := []string{store.EnvControlDSN + "=" + dsn, store.EnvMasterKey + "=" + keyText}
	dirA, dirB := t.TempDir(), t.TempDir()

	// Both start at once on the empty control plane: they race to migrate,
	// to create the signing key and to bootstrap.
	a := launchReplica(t, "A", dirA, env)
	b := launchReplica(t, "B", dirB, env)
	a.waitReady(t)
	b.waitReady(t)
	for _, r := range []*replica{a, b} {
		if !strings.Contains(r.log(), `"control_plane":"PostgreSQL"`) {
			t.Fatalf("replica %s does not say it serves from PostgreSQL:\n%s", r.name, r.log())
		}
		if strings.Contains(r.log(), dsn) {
			t.Fatalf("replica %s logs the control-plane DSN", r.name)
		}
	}
	for _, dir := range []string{dirA, dirB} {
		if _, err := os.Stat(filepath.Join(dir, store.DBFile)); !os.IsNotExist(err) {
			t.Fatalf("%s has a %s although the control plane is PostgreSQL", dir, store.DBFile)
		}
	}

	// One bootstrap: one org, two identities, one mini-app database.
	t.Setenv(store.EnvMasterKey, keyText)
	ctx := t.Context()
	st, err := store.OpenControl(ctx, t.TempDir(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	orgs, err := st.Orgs(ctx)
	if err != nil || len(orgs) != 1 {
		t.Fatalf("orgs after two bootstraps: %v %v", orgs, err)
	}
	proj, err := st.Project(ctx, orgs[0].ID, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := st.ListIdentities(ctx, proj.ID); err != nil || len(ids) != 2 {
		t.Fatalf("identities after two bootstraps: %v %v", ids, err)
	}
	if dbs, err := st.DatabasesOf(ctx, proj.ID); err != nil || len(dbs) != 1 {
		t.Fatalf("databases after two bootstraps: %v %v", dbs, err)
	}

	// One signing key: the token files each replica wrote verify on both.
	notes := "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=10&pg=0"
	adminA := readToken(t, filepath.Join(dirA, "admin.token"))
	adminB := readToken(t, filepath.Join(dirB, "admin.token"))
	for _, c := range []struct {
		who   string
		r     *replica
		token string
	}{{"A's token on B", b, adminA}, {"B's token on A", a, adminB}, {"A's token on A", a, adminA}} {
		if code, _, body := get(t, c.r.rest(notes), c.token); code != 200 || strings.Count(body, `"title"`) != 3 {
			t.Fatalf("%s: %d %s", c.who, code, body)
		}
	}

	// A token minted by A's CLI verifies on B.
	out, errOut, code := cliEnv(t, env, "token", "mint", "--data-dir", dirA, "--identity", "admin", "--ttl", "1h")
	if code != 0 {
		t.Fatalf("token mint on A: %d %s", code, errOut)
	}
	minted := strings.TrimSpace(out)
	if code, _, body := get(t, b.rest(notes), minted); code != 200 {
		t.Fatalf("token minted on A, used on B: %d %s", code, body)
	}

	// An AI session started on A is used on B, ended on B, refused on A.
	agent := readToken(t, filepath.Join(dirA, "agent.token"))
	text, isErr := toolText(t, a.mcpAddr, agent, "", "start_ai_session", map[string]any{"name": "replicas", "context": "two-replica test"})
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(text), &started); err != nil || isErr || started.SessionID == "" {
		t.Fatalf("start on A: %s", text)
	}
	sid := started.SessionID
	read := map[string]any{"type": "mi", "schema": "app", "table": "notes", "page_size": 10, "page_number": 0}
	if text, isErr := toolText(t, b.mcpAddr, agent, sid, "auto_read_rows", read); isErr || strings.Count(text, `"title"`) != 3 {
		t.Fatalf("read on B in the session of A: %s", text)
	}
	if text, isErr := toolText(t, a.mcpAddr, agent, sid, "auto_read_rows", read); isErr {
		t.Fatalf("read on A: %s", text)
	}
	out, errOut, code = cliEnv(t, env, "session", "journal", "--data-dir", dirB, sid)
	if code != 0 || strings.Count(out, "auto_read_rows") != 2 {
		t.Fatalf("journal through B's CLI: %d %s %s", code, out, errOut)
	}
	if text, isErr := toolText(t, b.mcpAddr, agent, sid, "end_ai_session", map[string]any{}); isErr {
		t.Fatalf("end on B: %s", text)
	}
	if text, isErr := toolText(t, a.mcpAddr, agent, sid, "auto_read_rows", read); !isErr || !strings.Contains(text, "SESSION_ENDED") {
		t.Fatalf("session ended on B, used on A: %s", text)
	}

	// A role revoked through A (minimal apply) is refused on B within 2 s.
	policy := `org: demo
project: demo
identities:
  - {name: reader, kind: service, space: main, roles: [notes-reader]}
templates:
  - name: notes-read
    rules:
      - {object: "mi/app/notes", actions: [read]}
bindings:
  - {role: notes-reader, templates: [notes-read]}
`
	file := writeFile(t, t.TempDir(), "policy.yaml", policy)
	if out, errOut, code := cliEnv(t, env, "apply", "-f", file, "--data-dir", dirA); code != 0 || !strings.Contains(out, "+ identity reader") {
		t.Fatalf("apply on A: %d %s %s", code, out, errOut)
	}
	out, errOut, code = cliEnv(t, env, "token", "mint", "--data-dir", dirA, "--identity", "reader", "--ttl", "1h")
	if code != 0 {
		t.Fatalf("mint for reader on A: %s", errOut)
	}
	reader := strings.TrimSpace(out)
	took := within(t, 2*time.Second, "reader served on B after apply on A", func() (bool, string) {
		code, _, body := get(t, b.rest(notes), reader)
		return code == 200, fmt.Sprint(code, " ", body)
	})
	t.Logf("grant through A in force on B after %v", took.Round(time.Millisecond))
	revoked := strings.Replace(policy, "roles: [notes-reader]", "roles: []", 1)
	file = writeFile(t, t.TempDir(), "revoked.yaml", revoked)
	if out, errOut, code := cliEnv(t, env, "apply", "-f", file, "--data-dir", dirA); code != 0 || !strings.Contains(out, "~ identity reader: roles [notes-reader] -> []") {
		t.Fatalf("revoking apply on A: %d %s %s", code, out, errOut)
	}
	took = within(t, 2*time.Second, "revoked role refused on B", func() (bool, string) {
		code, _, body := get(t, b.rest(notes), reader)
		return code == 403 || code == 404, fmt.Sprint(code, " ", body)
	})
	t.Logf("role revoked through A refused on B after %v", took.Round(time.Millisecond))

	// A token revoked through A is refused on B within 2 s.
	if _, errOut, code := cliEnv(t, env, "token", "revoke", "--data-dir", dirA, "--token", minted); code != 0 {
		t.Fatalf("token revoke on A: %s", errOut)
	}
	took = within(t, 2*time.Second, "revoked token refused on B", func() (bool, string) {
		code, _, body := get(t, b.rest(notes), minted)
		return code == 401, fmt.Sprint(code, " ", body)
	})
	t.Logf("token revoked through A refused on B after %v", took.Round(time.Millisecond))

	// A database registered through A is served by B within 2 s.
	base := os.Getenv("MINIMAL_TEST_PG_DSN")
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("replicas_%08x", mrand.Uint32())
	defer func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.Background())
	}()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".t (id serial PRIMARY KEY, v text); INSERT INTO "+schema+".t (v) VALUES ('a'),('b')"); err != nil {
		t.Fatal(err)
	}
	table := "/minimal/api/rest/auto/v1/demo/demo/pg/" + schema + "/t?ps=10&pg=0&oy=id.as"
	if code, _, _ := get(t, b.rest(table), adminB); code != 404 {
		t.Fatalf("B serves %s before it is registered: %d", schema, code)
	}
	if out, errOut, code := cliEnv(t, env, "db", "add", "--data-dir", dirA, "--type", "pg", "--schema", schema, "--dsn", base); code != 0 {
		t.Fatalf("db add on A: %d %s %s", code, out, errOut)
	}
	took = within(t, 2*time.Second, "database registered through A served by B", func() (bool, string) {
		code, _, body := get(t, b.rest(table), adminB)
		return code == 200 && strings.Contains(body, `"v":"a"`), fmt.Sprint(code, " ", body)
	})
	t.Logf("db add through A served by B after %v", took.Round(time.Millisecond))
	if out, _, _ := cliEnv(t, env, "db", "list", "--data-dir", dirB); !strings.Contains(out, schema) || strings.Contains(out, "postgres://") {
		t.Fatalf("db list through B: %q", out)
	}

	a.stop(t)
	b.stop(t)
}
