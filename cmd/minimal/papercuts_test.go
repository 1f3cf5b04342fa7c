package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The operator's paper cuts (issue 16), one test each; the CLI test over
// every command (--help, no arguments, garbage) is TestCLIEveryCommand.

// TestPolicyExplainPathForms: a --path without its leading '/' (or any
// path that is no request path) is a usage error naming the expected form,
// not a panic; a valid one still explains.
func TestPolicyExplainPathForms(t *testing.T) {
	f := newCLIFixture(t)
	env := []string{"MINIMAL_DATA_DIR=" + f.data}
	for _, path := range []string{"pg/public/employees?ps=10&pg=0", "minimal/api/rest/auto/v1/demo/demo/mi/app/notes", "//evil/x", "http://h/x", " /x", "%zz"} {
		args := []string{"policy", "explain", "--identity", "admin", "--path", path}
		r := runIn(t, f.work, env, "", args...)
		noPanic(t, r, args)
		if r.code != 2 || !strings.Contains(r.stderr, "--path must be a request path such as '/minimal/api/rest/auto/v1/") {
			t.Errorf("--path %q: exit %d, stderr %q", path, r.code, r.stderr)
		}
	}
	if r := runIn(t, f.work, env, "", "policy", "explain", "--identity", "admin", "--method", "PATCH", "--path", "/x"); r.code != 2 || !strings.Contains(r.stderr, "--method") {
		t.Errorf("--method PATCH: %d %q", r.code, r.stderr)
	}
	r := runIn(t, f.work, env, "", "policy", "explain", "--identity", "admin", "--path", "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=10&pg=0")
	if r.code != 0 || !strings.Contains(r.stdout, "outcome  allowed (not executed)") {
		t.Errorf("valid path: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestOrgRenameKeepsEveryCommand: after the org and project are renamed
// through the admin API (as admin-api.md shows), every command still finds
// them by abbreviation, and serve starts again on the renamed store
// without creating a second org.
func TestOrgRenameKeepsEveryCommand(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	adm := "http://" + s.addr + "/minimal/api/admin/v1/orgs/demo"
	if code, _, body := httpDo(t, "PATCH", adm, admin, `{"name":"Demo Inc"}`); code != 200 {
		t.Fatalf("rename org: %d %s", code, body)
	}
	if code, _, body := httpDo(t, "PATCH", adm+"/projects/demo", admin, `{"name":"Demo Project"}`); code != 200 {
		t.Fatalf("rename project: %d %s", code, body)
	}
	s.stop(t)

	notes := "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=1&pg=0"
	for _, args := range [][]string{
		{"db", "list", "--org", "demo", "--project", "demo"},
		{"db", "test", "--org", "demo", "--project", "demo", "--type", "mi", "--schema", "app"},
		{"token", "mint", "--org", "demo", "--project", "demo", "--identity", "agent"},
		{"space", "mcp", "--org", "demo", "--project", "demo", "--space", "main"},
		{"policy", "show", "--project", "demo/demo"},
		{"policy", "explain", "--org", "demo", "--project", "demo", "--identity", "admin", "--path", notes},
		{"audit", "--project", "demo/demo"},
	} {
		if out, errOut, code := cli(t, append(args, "--data-dir", dir)...); code != 0 {
			t.Errorf("%v after the rename: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	// The exported policy names the abbreviations and applies back as
	// nothing to change.
	shown, errOut, code := cli(t, "policy", "show", "--project", "demo/demo", "--data-dir", dir)
	if code != 0 || !strings.Contains(shown, "org: demo\nproject: demo\n") {
		t.Fatalf("policy show: %d %s\n%s", code, errOut, shown)
	}
	file := writeFile(t, t.TempDir(), "p.yaml", shown)
	if out, errOut, code := cli(t, "apply", "-f", file, "--data-dir", dir); code != 0 || out != "= nothing to change\n" {
		t.Fatalf("apply of the export: %d %q %s", code, out, errOut)
	}

	s = startServer(t, dir) // bootstrap finds org demo by its abbreviation
	defer s.stop(t)
	code, _, body := httpDo(t, "GET", "http://"+s.addr+"/minimal/api/admin/v1/orgs", admin, "")
	if code != 200 || strings.Count(body, `"abbr"`) != 1 || !strings.Contains(body, `"Demo Inc"`) {
		t.Fatalf("orgs after restart: %d %s", code, body)
	}
	if code, _, _ := get(t, "http://"+s.addr+notes, admin); code != 200 {
		t.Fatalf("query after restart: %d", code)
	}
}

// TestOnlyServeAndInitCreateADataDir: every command but serve and init,
// given valid arguments and a data dir that does not exist, exits 1
// naming the directory it looked in and the ways to name another, and
// creates nothing; init creates an empty one, once.
func TestOnlyServeAndInitCreateADataDir(t *testing.T) {
	f := newCLIFixture(t)
	absent := filepath.Join(f.work, "nowhere")
	for _, c := range commands {
		switch c.name {
		case "serve", "init", "version", "help":
			continue
		}
		args := append(strings.Fields(c.name), f.validArgs(c.name)...)
		if c.name == "apply" {
			args = args[:len(args)-1] // without --dry-run, which plans against a throwaway store
		}
		for _, how := range [][]string{{"--data-dir", absent}, nil} {
			env := []string{"MINIMAL_DATA_DIR=" + absent}
			if how != nil {
				env = nil
			}
			r := runIn(t, f.work, env, "", append(args, how...)...)
			noPanic(t, r, args)
			if r.code != 1 || !strings.Contains(r.stderr, "no data dir at "+absent) || !strings.Contains(r.stderr, "--data-dir") ||
				!strings.Contains(r.stderr, "MINIMAL_DATA_DIR") || !strings.Contains(r.stderr, "minimal init") {
				t.Errorf("%v %v: exit %d, stderr %q", args, how, r.code, r.stderr)
			}
		}
	}
	// The default, ./.minimal, is relative to the working directory.
	if r := runIn(t, f.work, nil, "", "db", "list"); r.code != 1 || !strings.Contains(r.stderr, "no data dir at "+filepath.Join(f.work, ".minimal")) {
		t.Errorf("default data dir: %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(absent); !os.IsNotExist(err) {
		t.Fatalf("%s was created (%v)", absent, err)
	}
	if _, err := os.Stat(filepath.Join(f.work, ".minimal")); !os.IsNotExist(err) {
		t.Fatalf("./.minimal was created (%v)", err)
	}

	if r := runIn(t, f.work, nil, "", "init", "--data-dir", absent); r.code != 0 || !strings.Contains(r.stdout, "created data dir "+absent) {
		t.Fatalf("init: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, f.work, nil, "", "init", "--data-dir", absent); r.code != 0 || !strings.Contains(r.stdout, "already holds a store") {
		t.Fatalf("second init: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// An empty store: the commands answer from it, naming what is missing.
	if r := runIn(t, f.work, nil, "", "db", "list", "--data-dir", absent); r.code != 1 || !strings.Contains(r.stderr, `org abbreviation "demo" not found`) {
		t.Errorf("db list on an empty store: %d %q", r.code, r.stderr)
	}
	if r := runIn(t, f.work, nil, "", "migrate", "--data-dir", absent); r.code != 0 || !strings.Contains(r.stdout, "schema version") {
		t.Errorf("migrate after init: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestLogsOneFormat: every line serve writes is JSON by default, a
// dialect's (mi) warning included, and the lines logged while serving a
// request (audit, request) carry the request id sent back in
// X-Request-Id; --log-format text writes key=value lines instead, request
// id included.
func TestLogsOneFormat(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir)
	bad := filepath.Join(dir, "mini-app", "app", "broken")
	if err := os.MkdirAll(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "schema.yaml"), []byte("table: [unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	base := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo/mi/app/"
	code, h, _ := httpDo(t, "GET", base+"broken?ps=1&pg=0", admin, "")
	if code != 404 {
		t.Fatalf("broken table: %d", code)
	}
	id := h.Get("X-Request-Id")
	// An MCP request refused for its Origin is logged with its id too.
	req, _ := http.NewRequest("POST", "http://"+s.mcpAddr+"/minimal/mcp/rpc/v1", strings.NewReader(`{}`))
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mcpID := resp.Header.Get("X-Request-Id")
	if resp.StatusCode != 403 || mcpID == "" {
		t.Fatalf("MCP request from another origin: %d, X-Request-Id %q", resp.StatusCode, mcpID)
	}
	s.terminate(t)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(s.logText()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("not a JSON line: %q", line)
			continue
		}
		msg, _ := rec["msg"].(string)
		switch {
		case strings.HasPrefix(msg, "mi: ") && rec["table"] == "broken":
			seen["mi"] = true
		case strings.HasPrefix(msg, "mcp request refused"):
			if rec["request_id"] != mcpID {
				t.Errorf("an MCP line of request %s without its id: %s", mcpID, line)
			}
			seen["mcp"] = true
		case msg == "request" && rec["path"] == "/minimal/api/rest/auto/v1/demo/demo/mi/app/broken",
			msg == "audit" && rec["object"] == "mi/app/broken":
			if rec["request_id"] != id {
				t.Errorf("a line of request %s without its id: %s", id, line)
			}
			seen[msg] = true
			if rec["object"] == "mi/app/broken" {
				seen["operation"] = true // on the request's line, or a line of its own
			}
		}
	}
	if !seen["mi"] || !seen["request"] || !seen["operation"] || !seen["mcp"] {
		t.Errorf("lines seen %v:\n%s", seen, s.logText())
	}

	// --log-format text: key=value lines, the request id on the request's.
	t2 := startServeText(t, t.TempDir())
	code, h, _ = httpDo(t, "GET", "http://"+t2.addr+"/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=1&pg=0", readToken(t, filepath.Join(t2.dir, "admin.token")), "")
	if code != 200 {
		t.Fatalf("notes: %d", code)
	}
	t2.stop(t)
	text := t2.logs.String()
	if !regexp.MustCompile(`(?m)^time=\S+ level=INFO msg="serving REST" addr=127\.0\.0\.1:\d+`).MatchString(text) || strings.Contains(text, `{"time"`) ||
		!strings.Contains(text, "request_id="+h.Get("X-Request-Id")) {
		t.Errorf("text format (request id %s):\n%s", h.Get("X-Request-Id"), text)
	}
}

// textServer is serve started with --log-format text.
type textServer struct {
	dir  string
	cmd  *exec.Cmd
	addr string
	logs lockedBuf
	done chan error
}

// startServeText starts serve with --log-format text and reads its REST
// address from its text lines.
func startServeText(t *testing.T, dataDir string) *textServer {
	t.Helper()
	s := &textServer{dir: dataDir, done: make(chan error, 1)}
	s.cmd = exec.Command(binary, "serve", "--data-dir", dataDir, "--rest-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0", "--log-format", "text")
	s.cmd.Env = append(os.Environ(), "MINIMAL_CONTROL_DSN=")
	s.cmd.Stderr = &s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	re := regexp.MustCompile(`msg="serving REST" addr=(\S+)`)
	for deadline := time.Now().Add(20 * time.Second); s.addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(s.logs.String()); m != nil {
			s.addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("serve --log-format text did not start:\n%s", s.logs.String())
		}
	}
	return s
}

func (s *textServer) stop(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve exited with %v:\n%s", err, s.logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}

// TestMakeRun: make run serves on MINIMAL_REST_ADDR and MINIMAL_MCP_ADDR
// from DATA_DIR with the flags in ARGS; without variables it runs the
// README's command unchanged.
func TestMakeRun(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("make", "-s", "-n", "-C", repo, "run").Output()
	if err != nil || !strings.Contains(string(out), "bin/minimal serve --data-dir ./.minimal") {
		t.Fatalf("make -n run: %v\n%s", err, out)
	}
	work := t.TempDir()
	data := filepath.Join(work, "data")
	// -o build: the binary the tests built stands for make build's (its
	// recipe is not what this tests, and a cold build takes minutes).
	cmd := exec.Command("make", "-s", "-C", repo, "-o", "build", "run", "BIN="+binary, "DATA_DIR="+data, "ARGS=--log-format text --session-idle 5m")
	cmd.Env = append(os.Environ(), "MINIMAL_REST_ADDR=127.0.0.1:0", "MINIMAL_MCP_ADDR=127.0.0.1:0", "MINIMAL_DATA_DIR=", "MINIMAL_CONTROL_DSN=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var se lockedBuf
	cmd.Stdout, cmd.Stderr = &se, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	re := regexp.MustCompile(`msg="serving REST" addr=(\S+) data_dir=(\S+)`)
	var m []string
	for deadline := time.Now().Add(30 * time.Second); m == nil; time.Sleep(50 * time.Millisecond) {
		m = re.FindStringSubmatch(se.String())
		select {
		case err := <-done:
			t.Fatalf("make run ended: %v\n%s", err, se.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("make run did not serve:\n%s", se.String())
		}
	}
	if m[1] == "127.0.0.1:8080" || m[2] != data {
		t.Errorf("served on %s from %s, want a port of MINIMAL_REST_ADDR from %s", m[1], m[2], data)
	}
	if code, _, _ := httpDo(t, "GET", "http://"+m[1]+"/livez", "", ""); code != 200 {
		t.Errorf("livez: %d", code)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("make run did not stop on SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(data, "control.db")); err != nil {
		t.Errorf("DATA_DIR not used: %v", err)
	}
}

// TestDSNSources: db add, db set-dsn and db test read the connection
// string from --dsn-file, standard input (--dsn -) or MINIMAL_DSN, take
// URL-style DSNs of MariaDB, and say what is wrong with each mistake once.
func TestDSNSources(t *testing.T) {
	pgDSN, maDSN := os.Getenv("MINIMAL_TEST_PG_DSN"), os.Getenv("MINIMAL_TEST_MA_DSN")
	if pgDSN == "" || maDSN == "" {
		if os.Getenv("MINIMAL_TEST_REQUIRE_DBS") != "" {
			t.Fatal("MINIMAL_TEST_PG_DSN and MINIMAL_TEST_MA_DSN are required")
		}
		t.Skip("MINIMAL_TEST_PG_DSN or MINIMAL_TEST_MA_DSN is unset")
	}
	f := newCLIFixture(t)
	env := []string{"MINIMAL_DATA_DIR=" + f.data}
	run := func(stdin string, extra []string, args ...string) cliRun {
		t.Helper()
		r := runIn(t, f.work, append(append([]string{}, env...), extra...), stdin, args...)
		noPanic(t, r, args)
		return r
	}
	if r := run("", nil, "db", "add", "--type", "pg", "--schema", "public", "--dsn-file", f.dsnFile); r.code != 0 || !strings.Contains(r.stdout, "registered pg/public") {
		t.Fatalf("--dsn-file: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run("", nil, "db", "test", "--type", "pg", "--schema", "public"); r.code != 0 || !strings.Contains(r.stdout, "(the registered connection string)") {
		t.Fatalf("db test: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(pgDSN+"\n", nil, "db", "set-dsn", "--type", "pg", "--schema", "public", "--dsn", "-"); r.code != 0 || !strings.Contains(r.stdout, "replaced the connection string of pg/public") {
		t.Fatalf("set-dsn from stdin: %d %s %s", r.code, r.stdout, r.stderr)
	}

	// MariaDB as a URL, from the environment.
	mc, err := mysql.ParseDSN(maDSN)
	if err != nil {
		t.Fatal(err)
	}
	maURL := (&url.URL{Scheme: "mysql", User: url.UserPassword(mc.User, mc.Passwd), Host: mc.Addr, Path: "/" + mc.DBName}).String()
	if r := run("", []string{"MINIMAL_DSN=" + maURL}, "db", "test", "--type", "ma", "--schema", mc.DBName); r.code != 0 || !strings.Contains(r.stdout, "(the given connection string)") {
		t.Fatalf("db test of a mysql:// URL in MINIMAL_DSN: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run("", []string{"MINIMAL_DSN=" + maURL}, "db", "add", "--type", "ma", "--schema", mc.DBName); r.code != 0 {
		t.Fatalf("db add of a mysql:// URL: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run("", nil, "db", "test", "--type", "ma", "--schema", mc.DBName); r.code != 0 {
		t.Fatalf("db test of the stored mysql:// URL: %d %s %s", r.code, r.stdout, r.stderr)
	}

	empty := writeFile(t, f.work, "empty.dsn", "  \n")
	for _, tc := range []struct {
		stdin string
		args  []string
		code  int
		says  string
	}{
		{"", []string{"--dsn", "x", "--dsn-file", f.dsnFile}, 2, "give --dsn or --dsn-file, not both"},
		{"", []string{"--dsn-file", empty}, 2, "read from " + empty + " is empty"},
		{"", []string{"--dsn-file", filepath.Join(f.work, "missing.dsn")}, 2, "missing.dsn"},
		{"\n", []string{"--dsn", "-"}, 2, "read from standard input is empty"},
		{"", nil, 2, "--dsn-file PATH, --dsn - (standard input) or env MINIMAL_DSN"},
	} {
		args := append([]string{"db", "add", "--type", "pg", "--schema", "other"}, tc.args...)
		if r := run(tc.stdin, nil, args...); r.code != tc.code || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("%v: exit %d, stderr %q, want %d %q", tc.args, r.code, r.stderr, tc.code, tc.says)
		}
	}

	// Mistakes: each named once, the forms a type takes named.
	for _, tc := range []struct{ typ, dsn, says, once string }{
		{"pg", "postgres://nobody@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", "failed to connect: database unavailable", "database unavailable"},
		{"ma", "mysql://root@127.0.0.1:1/ux?timeout=2s", "failed to connect: database unavailable", "database unavailable"},
		{"ma", "root@127.0.0.1:3306/ux", "mysql://user:pass@host:3306/db", "invalid MySQL connection string"},
		{"ch", "clickhouse://[::1", "clickhouse://user:pass@host:9000/db", "invalid ClickHouse connection string"},
	} {
		r := run(tc.dsn, nil, "db", "add", "--type", tc.typ, "--schema", "ux", "--dsn", "-")
		if r.code != 1 || !strings.Contains(r.stderr, tc.says) || strings.Count(r.stderr, tc.once) != 1 ||
			strings.HasPrefix(tc.dsn, "mysql://") && strings.Contains(r.stderr, "default addr") {
			t.Errorf("%s %q: exit %d, stderr %q: want %q, %q once", tc.typ, tc.dsn, r.code, r.stderr, tc.says, tc.once)
		}
	}
}

// TestTokenMintJSON: --json prints the admin API's fields of a minted
// token; --ttl takes days; a TTL past the maximum or malformed is refused.
func TestTokenMintJSON(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	defer s.stop(t)
	before := time.Now()
	out, errOut, code := cli(t, "token", "mint", "--data-dir", dir, "--identity", "agent", "--key-type", "-r--", "--ttl", "30d", "--json")
	if code != 0 {
		t.Fatalf("mint --json: %d %s", code, errOut)
	}
	var m struct {
		Token     string    `json:"token"`
		JTI       string    `json:"jti"`
		Identity  string    `json:"identity"`
		Roles     []string  `json:"roles"`
		KeyType   string    `json:"key_type"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("mint --json printed %q: %v", out, err)
	}
	want := before.Add(30 * 24 * time.Hour)
	if m.JTI == "" || m.Identity != "agent" || m.KeyType != "-r--" || len(m.Roles) != 1 || m.Roles[0] != "admin" ||
		m.ExpiresAt.Before(want.Add(-time.Minute)) || m.ExpiresAt.After(want.Add(time.Minute)) {
		t.Fatalf("mint --json: %+v from %s", m, out)
	}
	if code, _, _ := get(t, "http://"+s.addr+"/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=1&pg=0", m.Token); code != 200 {
		t.Fatalf("the minted token: %d", code)
	}
	if out, _, code := cli(t, "token", "revoke", "--data-dir", dir, m.JTI); code != 0 || !strings.Contains(out, m.JTI) {
		t.Fatalf("revoke by the printed jti: %d %s", code, out)
	}
	for _, ttl := range []string{"30days", "0d", "-1d", "1.5d"} {
		if _, errOut, code := cli(t, "token", "mint", "--data-dir", dir, "--identity", "agent", "--ttl", ttl); code != 2 || !strings.Contains(errOut, "--ttl") || !strings.Contains(errOut, "30d") {
			t.Errorf("--ttl %s: %d %q", ttl, code, errOut)
		}
	}
	if _, errOut, code := cli(t, "token", "mint", "--data-dir", dir, "--identity", "agent", "--ttl", "400d"); code != 1 || !strings.Contains(errOut, "ttl") {
		t.Errorf("--ttl 400d: %d %q", code, errOut)
	}
}

// docBlock returns the first fenced block of a doc that follows after and
// holds want.
func docBlock(t *testing.T, doc, after, want string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, after)
	if i < 0 {
		t.Fatalf("%s has no %q", doc, after)
	}
	for _, m := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllStringSubmatch(text[i:], -1) {
		if strings.Contains(m[1], want) {
			return m[1]
		}
	}
	t.Fatalf("%s has no block with %q after %q", doc, want, after)
	return ""
}

// TestDocsMatchWhatRuns: the error envelope of rest.md is what the
// gateway answers (request_id included); permissions.md's worked example
// applies and its explain command runs as written in a shell; the global
// OpenAPI document has servers and info.license.
func TestDocsMatchWhatRuns(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	defer s.stop(t)
	admin := readToken(t, filepath.Join(dir, "admin.token"))

	var doc struct {
		Error struct{ Code, Message, RequestID string } `json:"error"`
	}
	block := docBlock(t, "rest.md", "## Errors", `"request_id"`)
	if err := json.Unmarshal([]byte(strings.ReplaceAll(block, `"request_id"`, `"RequestID"`)), &doc); err != nil {
		t.Fatalf("rest.md's error example: %v\n%s", err, block)
	}
	code, h, body := httpDo(t, "GET", "http://"+s.addr+"/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=1&pg=0&nosuch=eq.1", admin, "")
	var got struct {
		Error struct{ Code, Message, RequestID string } `json:"error"`
	}
	_ = json.Unmarshal([]byte(strings.ReplaceAll(body, `"request_id"`, `"RequestID"`)), &got)
	id := regexp.MustCompile(`^[0-9a-f]{16}$`)
	if code != 400 || got.Error.Code != doc.Error.Code || got.Error.Message != doc.Error.Message ||
		!id.MatchString(got.Error.RequestID) || !id.MatchString(doc.Error.RequestID) || h.Get("X-Request-Id") != got.Error.RequestID {
		t.Errorf("rest.md shows %+v; the gateway answers %d %s (X-Request-Id %s)", doc.Error, code, body, h.Get("X-Request-Id"))
	}

	policy := docBlock(t, "permissions.md", "## A worked example", "org: demo")
	if out, errOut, code := cli(t, "apply", "-f", writeFile(t, t.TempDir(), "p.yaml", policy), "--data-dir", dir); code != 0 {
		t.Fatalf("permissions.md's example: %d %s %s", code, out, errOut)
	}
	explain := docBlock(t, "permissions.md", "With this policy", "minimal policy explain")
	sh := exec.Command("sh", "-c", explain)
	sh.Env = append(os.Environ(), "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"), "MINIMAL_DATA_DIR="+dir)
	out, err := sh.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "request  GET /minimal/api/rest/auto/v1/demo/demo/pg/public/employees?ps=10&pg=0") {
		t.Errorf("permissions.md's explain command: %v\n%s", err, out)
	}

	code, _, body = httpDo(t, "GET", "http://"+s.addr+"/minimal/api/openapi.json", "", "")
	var oa struct {
		Servers []struct{ URL string }
		Info    struct{ License struct{ Name string } }
	}
	if err := json.Unmarshal([]byte(body), &oa); code != 200 || err != nil || len(oa.Servers) == 0 || oa.Servers[0].URL == "" || oa.Info.License.Name == "" {
		t.Errorf("openapi.json: %d %+v %v", code, oa, err)
	}
}
