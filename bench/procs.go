package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a server process the bench started.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	addr    string
	mcpAddr string // the gateway's MCP address

	done    chan struct{} // closed when the process has exited
	waitErr error
	once    sync.Once
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop asks the process to end (SIGTERM), then kills it after a grace.
// It is idempotent.
func (c *child) stop() {
	c.once.Do(func() {
		if c.exited() {
			return
		}
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			logf("%s (pid %d) did not stop on SIGTERM; killing it", c.name, c.pid())
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
}

// logTail returns the last lines of the child's log, for error messages.
func (c *child) logTail(n int) string {
	b, err := os.ReadFile(c.logPath)
	if err != nil || len(b) == 0 {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// children tracks every child so that all are stopped on any exit path.
type children struct {
	mu   sync.Mutex
	list []*child
	seq  int
}

func (cs *children) start(name string, cmd *exec.Cmd, logDir string) (*child, error) {
	cs.mu.Lock()
	cs.seq++
	logPath := filepath.Join(logDir, fmt.Sprintf("%02d-%s.log", cs.seq, name))
	cs.mu.Unlock()
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer lf.Close() // the child holds its own descriptor
	if cmd.Stdout == nil {
		cmd.Stdout = lf
	}
	cmd.Stderr = lf
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	cs.mu.Lock()
	cs.list = append(cs.list, c)
	cs.mu.Unlock()
	return c, nil
}

func (cs *children) stopAll() {
	cs.mu.Lock()
	list := cs.list
	cs.mu.Unlock()
	for _, c := range list {
		c.stop()
	}
}

type gatewayConfig struct {
	bin, dataDir, logDir string
	maxPage              int
}

// startGateway starts bin/minimal serve on free ports and waits for its
// "serving REST" and "serving MCP" log lines, which name the addresses.
func startGateway(ctx context.Context, kids *children, cfg gatewayConfig) (*child, error) {
	// Free ports for both faces: a server already on the default MCP port
	// (a test, a developer's gateway) must not stop the bench's.
	cmd := exec.Command(cfg.bin, "serve",
		"--data-dir", cfg.dataDir,
		"--rest-addr", "127.0.0.1:0",
		"--mcp-addr", "127.0.0.1:0",
		"--max-page-size", fmt.Sprint(cfg.maxPage))
	cmd.Env = os.Environ()
	c, err := kids.start("gateway", cmd, cfg.logDir)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if addr, mcpAddr := servingAddr(c.logPath); addr != "" && mcpAddr != "" {
			c.addr, c.mcpAddr = addr, mcpAddr
			return c, nil
		}
		if c.exited() {
			return nil, fmt.Errorf("gateway exited before serving (%v); its log:\n%s", c.waitErr, c.logTail(20))
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("gateway did not log \"serving REST\" and \"serving MCP\" within 30 s; its log:\n%s", c.logTail(20))
		}
		if err := sleep(ctx, 25*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// servingAddr finds the REST and MCP addresses in the gateway's JSON log,
// "" if not yet.
func servingAddr(logPath string) (rest, mcp string) {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return "", ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Addr == "" {
			continue
		}
		switch line.Msg {
		case "serving REST":
			rest = line.Addr
		case "serving MCP":
			mcp = line.Addr
		}
	}
	return rest, mcp
}

// registerSchema runs bin/minimal db add for a bench schema (a PostgreSQL
// schema, a MariaDB or ClickHouse database).
func registerSchema(ctx context.Context, cfg gatewayConfig, typ, schema, dsn string) error {
	out, err := minimal(ctx, cfg, "db", "add",
		"--data-dir", cfg.dataDir, "--org", "demo", "--project", "demo",
		"--type", typ, "--schema", schema, "--dsn", dsn)
	if err != nil {
		return err
	}
	logf("%s", out)
	return nil
}

// minimal runs a bin/minimal command and returns its trimmed output.
func minimal(ctx context.Context, cfg gatewayConfig, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, cfg.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		name := args[0]
		if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
			name += " " + args[1]
		}
		return "", fmt.Errorf("minimal %s: %v: %s", name, err, bytes.TrimSpace(append(stdout.Bytes(), stderr.Bytes()...)))
	}
	return string(bytes.TrimSpace(stdout.Bytes())), nil
}

func readToken(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "admin.token"))
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", errors.New("admin token file is empty")
	}
	return tok, nil
}

// waitTable polls a one-row page until the gateway answers 200 for it (the
// running server picks a registration up within about a second).
func waitTable(ctx context.Context, gw *child, base, token string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	url := base + "?ps=1&pg=0&oy=id.as"
	client := &http.Client{Timeout: 5 * time.Second}
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("LB-Access-Token", token)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(body))
		} else {
			last = err.Error()
		}
		if gw.exited() {
			return fmt.Errorf("gateway exited (%v); its log:\n%s", gw.waitErr, gw.logTail(20))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("table %s.%s not served within %s (last answer: %s); gateway log:\n%s", benchSchema, benchTable, timeout, last, gw.logTail(20))
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// startDirect re-executes this binary as the direct baseline on a free port,
// serving pg and the dialects of codes; it prints "listening ADDR" on
// stdout when ready.
func startDirect(ctx context.Context, kids *children, self, logDir string, codes []string) (*child, error) {
	cmd := exec.Command(self, serveDirectFlag, "127.0.0.1:0", strings.Join(codes, ","))
	cmd.Env = os.Environ()
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	c, err := kids.start("direct", cmd, logDir)
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, err
	}
	addrc := make(chan string, 1)
	go func() {
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				addrc <- a
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case a := <-addrc:
		c.addr = a
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("direct baseline exited before listening (%v); its log:\n%s", c.waitErr, c.logTail(20))
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("direct baseline did not listen within 30 s; its log:\n%s", c.logTail(20))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
