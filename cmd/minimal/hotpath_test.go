package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAuditSurvivesCleanShutdown: at MINIMAL_LOG_LEVEL=warn a busy server
// writes no per-request lines, yet every operation it answered is in the
// audit table after a SIGTERM that comes right after the last answer (the
// audit writer's batch still lingering).
func TestAuditSurvivesCleanShutdown(t *testing.T) {
	dsn, schema := pgTestSchema(t, "shutdown", `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2);`)
	t.Setenv("MINIMAL_LOG_LEVEL", "warn")
	dir := t.TempDir()
	s := startQuietServe(t, dir)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	path := "/minimal/api/rest/auto/v1/demo/demo/pg/" + schema + "/t?ps=1&pg=0"
	registerAndWait(t, dir, s, "pg", schema, dsn, path, admin)

	const requests = 400
	var wg sync.WaitGroup
	errs := make(chan string, requests)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < requests; i += 16 {
				code, _, body := httpDo(t, "GET", "http://"+s.addr+path, admin, "")
				if code != 200 {
					errs <- fmt.Sprintf("%d %s", code, body)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("request refused: %s", e)
	}
	s.terminate(t)

	for _, line := range strings.Split(s.logText(), "\n") {
		if strings.Contains(line, `"msg":"request"`) || strings.Contains(line, `"msg":"audit"`) {
			t.Fatalf("a per-request line at MINIMAL_LOG_LEVEL=warn: %s", line)
		}
	}
	out, errOut, code := cli(t, "audit", "--data-dir", dir, "--project", "demo/demo", "--object", "pg/"+schema+"/t", "--limit", "1000", "--json")
	if code != 0 {
		t.Fatalf("audit: %s", errOut)
	}
	ok := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if e["outcome"] == "ok" && e["action"] == "read" {
			ok++
		}
	}
	// registerAndWait's successful read is audited too.
	if ok < requests+1 {
		t.Errorf("%d read entries in the audit table after a clean shutdown, want %d", ok, requests+1)
	}
}

// startQuietServe starts the binary on a data dir, on free ports chosen
// here (at warn level it logs no "serving" lines to read them from), and
// waits until REST answers /livez.
func startQuietServe(t *testing.T, dataDir string) *opsServer {
	t.Helper()
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}
	s := &opsServer{addr: free(), mcpAddr: free(), done: make(chan error, 1)}
	s.cmd = exec.Command(binary, "serve", "--data-dir", dataDir, "--rest-addr", s.addr, "--mcp-addr", s.mcpAddr, "--shutdown-grace", "10s")
	s.cmd.Env = append(os.Environ(), "MINIMAL_CONTROL_DSN=")
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		s.done <- s.cmd.Wait()
	}()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + s.addr + "/livez")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) || !s.alive() {
			t.Fatalf("server did not start:\n%s", s.logText())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
