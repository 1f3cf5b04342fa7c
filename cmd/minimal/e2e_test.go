package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/store"
)

var binary string

// TestMain builds the real binary once; the tests drive it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "minimal-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "minimal")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs a subcommand and returns stdout, stderr and the exit code.
func cli(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
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

type server struct {
	cmd     *exec.Cmd
	addr    string
	mcpAddr string
	logs    *strings.Builder
	done    chan error
}

// startServer runs serve on dataDir with free ports, and flags extra.
func startServer(t *testing.T, dataDir string, extra ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--data-dir", dataDir, "--rest-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0", "--shutdown-grace", "5s"}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, logs: &strings.Builder{}, done: make(chan error, 1)}
	addrc, mcpc := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.logs.WriteString(line + "\n")
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving REST" {
				addrc <- rec.Addr
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving MCP" {
				mcpc <- rec.Addr
			}
		}
		s.done <- cmd.Wait()
	}()
	for _, c := range []struct {
		ch  chan string
		dst *string
	}{{addrc, &s.addr}, {mcpc, &s.mcpAddr}} {
		select {
		case *c.dst = <-c.ch:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("server did not start:\n%s", s.logs)
		}
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return s
}

func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve exited with %v:\n%s", err, s.logs)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}

func get(t *testing.T, url, token string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("LB-Access-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func readToken(t *testing.T, path string) string {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v, want 0600", path, st.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

func TestServeBootstrapAndRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	agent := readToken(t, filepath.Join(dir, "agent.token"))
	if !strings.Contains(s.logs.String(), "admin.token") {
		t.Errorf("log does not say where the tokens are:\n%s", s.logs)
	}
	notes := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=10&pg=0"
	code, ct, body := get(t, notes, admin)
	if code != 200 || ct != "application/json" || strings.Count(body, `"title"`) != 3 {
		t.Fatalf("notes: %d %s %s", code, ct, body)
	}
	code, ct, body = get(t, notes+"&format=csv", admin)
	if code != 200 || !strings.HasPrefix(ct, "text/csv") || !strings.HasPrefix(body, "id,created_at,updated_at,title,body\n") {
		t.Fatalf("csv: %d %s %q", code, ct, body)
	}
	if code, _, _ := get(t, notes, agent); code != 200 {
		t.Fatalf("agent token: %d", code)
	}
	code, _, _ = get(t, "http://"+s.addr+"/readyz", "")
	if code != 200 {
		t.Fatalf("readyz %d", code)
	}
	s.stop(t)
	if !strings.Contains(s.logs.String(), `"msg":"stopped"`) {
		t.Errorf("no clean stop in logs:\n%s", s.logs)
	}

	// A later start reuses everything: same tokens, same rows.
	s = startServer(t, dir)
	if again := readToken(t, filepath.Join(dir, "admin.token")); again != admin {
		t.Error("admin.token was rewritten on restart")
	}
	code, _, body = get(t, "http://"+s.addr+"/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=10&pg=0", admin)
	if code != 200 || strings.Count(body, `"title"`) != 3 {
		t.Fatalf("after restart: %d %s", code, body)
	}
	s.stop(t)
}

func TestTokenMint(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	defer s.stop(t)
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	org, _ := st.Org(ctx, "demo")
	proj, _ := st.Project(ctx, org.ID, "demo")
	space, _ := st.Space(ctx, proj.ID, "main")
	if _, err := st.CreateIdentity(ctx, store.Identity{ProjectID: proj.ID, SpaceID: space.ID, Name: "reader", Kind: "service", Roles: []string{"admin", "analyst"}, KeyType: "-r--", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out, errOut, code := cli(t, "token", "mint", "--data-dir", dir, "--identity", "reader")
	if code != 0 || strings.Count(out, ".") != 2 || strings.Contains(out, " ") || errOut != "" {
		t.Fatalf("mint: code %d out %q err %q", code, out, errOut)
	}
	tok := strings.TrimSpace(out)
	notes := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes"
	if code, _, _ := get(t, notes+"?ps=1&pg=0", tok); code != 200 {
		t.Fatalf("minted token refused: %d", code)
	}
	refusals := [][]string{
		{"--identity", "reader", "--key-type", "crud"},
		{"--identity", "reader", "--key-type", "-ru-"},
		{"--identity", "reader", "--roles", "superuser"},
		{"--identity", "reader", "--roles", "analyst,superuser"},
		{"--identity", "reader", "--ttl", "100000h"},
		{"--identity", "nobody"},
		{"--identity", "reader", "--key-type", "rw"},
	}
	for _, args := range refusals {
		out, errOut, code := cli(t, append([]string{"token", "mint", "--data-dir", dir}, args...)...)
		if code == 0 || out != "" || errOut == "" {
			t.Errorf("%v: code %d out %q err %q", args, code, out, errOut)
		}
	}
	if _, _, code := cli(t, "token", "mint", "--data-dir", dir); code != 2 {
		t.Errorf("missing --identity: exit %d", code)
	}
	// Revocation through the CLI (by JTI) reaches the running server within seconds.
	var claims struct {
		JTI string `json:"jti"`
	}
	seg, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err := json.Unmarshal(seg, &claims); err != nil || claims.JTI == "" {
		t.Fatalf("jti: %v", err)
	}
	if out, errOut, code := cli(t, "token", "revoke", "--data-dir", dir, claims.JTI); code != 0 || !strings.Contains(out, claims.JTI) {
		t.Fatalf("revoke: %s %s", out, errOut)
	}
	other, _, _ := cli(t, "token", "mint", "--data-dir", dir, "--identity", "reader")
	if _, errOut, code := cli(t, "token", "revoke", "--data-dir", dir, "--token", strings.TrimSpace(other)); code != 0 {
		t.Fatalf("revoke --token: %s", errOut)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		code, _, _ := get(t, notes+"?ps=1&pg=0", tok)
		if code == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoked token still accepted: %d", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestDBAddWhileServing(t *testing.T) {
	dsn := os.Getenv("MINIMAL_TEST_PG_DSN")
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
	schema := fmt.Sprintf("e2e_%d", rand.Uint32())
	defer func() {
		_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(ctx)
	}()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".t (id serial PRIMARY KEY, v text); INSERT INTO "+schema+".t (v) VALUES ('a'),('b')"); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	s := startServer(t, dir)
	defer s.stop(t)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	url := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo/pg/" + schema + "/t?ps=10&pg=0&oy=id.as"
	if code, _, _ := get(t, url, admin); code != 404 {
		t.Fatalf("before db add: %d", code)
	}

	if _, errOut, code := cli(t, "db", "add", "--data-dir", dir, "--type", "pg", "--schema", schema, "--dsn", "postgres://nobody@127.0.0.1:1/x?connect_timeout=2"); code == 0 || !strings.Contains(errOut, "connection test") {
		t.Fatalf("db add of a dead server: %d %s", code, errOut)
	}
	out, errOut, code := cli(t, "db", "add", "--data-dir", dir, "--type", "pg", "--schema", schema, "--dsn", dsn)
	if code != 0 {
		t.Fatalf("db add: %s", errOut)
	}
	added := time.Now()
	if !strings.Contains(out, "registered pg/"+schema) {
		t.Fatalf("db add said %q", out)
	}
	for {
		code, _, body := get(t, url, admin)
		if code == 200 {
			if !strings.Contains(body, `"v":"a"`) {
				t.Fatalf("rows: %s", body)
			}
			break
		}
		if time.Since(added) > 2*time.Second {
			t.Fatalf("not served within 2 s of db add: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("served %v after db add", time.Since(added).Round(time.Millisecond))

	if _, errOut, code := cli(t, "db", "add", "--data-dir", dir, "--type", "pg", "--schema", schema, "--dsn", dsn); code == 0 || !strings.Contains(errOut, "conflict") {
		t.Fatalf("duplicate db add: %d %s", code, errOut)
	}
	out, _, _ = cli(t, "db", "list", "--data-dir", dir)
	if !strings.Contains(out, "pg      "+schema) && !strings.Contains(out, schema) || strings.Contains(out, "postgres://") {
		t.Fatalf("db list: %q", out)
	}
	if out, errOut, code := cli(t, "db", "test", "--data-dir", dir, "--type", "pg", "--schema", schema); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("db test: %s %s", out, errOut)
	}
	if _, errOut, code := cli(t, "db", "remove", "--data-dir", dir, "--type", "pg", "--schema", schema); code != 0 {
		t.Fatalf("db remove: %s", errOut)
	}
	removed := time.Now()
	for {
		code, _, _ := get(t, url, admin)
		if code == 404 {
			break
		}
		if time.Since(removed) > 2*time.Second {
			t.Fatalf("still served 2 s after db remove: %d", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
