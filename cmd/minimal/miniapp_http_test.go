package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// httpDropIn is a running `minimal mcp --http` process in drop-in mode.
type httpDropIn struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	logs strings.Builder
	done chan error
}

func (p *httpDropIn) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// startHTTPDropIn starts the binary on 127.0.0.1:0 over a user dir holding
// the contract's emo table, and reads the bound address from its log.
func startHTTPDropIn(t *testing.T, env ...string) *httpDropIn {
	t.Helper()
	work := t.TempDir()
	user := filepath.Join(work, "user")
	contractTable(t, user, "emo", emoYAML, map[string]string{"0b0e7d41-5c1f-4e57-9c53-3f8a3a1f0001": `{"tags":["a","b"],"text":"seeded"}`})
	cmd := exec.Command(binary, "mcp", "--http", "--bind", "127.0.0.1:0")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), append([]string{"MINI_APP_USER_DIR=" + user, "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "nope"), "MINI_APP_HTTP_TOKEN="}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &httpDropIn{cmd: cmd, done: make(chan error, 1)}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
				Path string `json:"path"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "serving MCP over streamable HTTP" {
				addrc <- "http://" + rec.Addr + rec.Path
			}
		}
		p.done <- cmd.Wait()
	}()
	select {
	case p.url = <-addrc:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("mcp --http did not start:\n%s", p.log())
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *httpDropIn) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.log())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("no exit after SIGTERM:\n%s", p.log())
	}
	if !strings.Contains(p.log(), `"msg":"stopped"`) {
		t.Fatalf("no graceful stop in the log:\n%s", p.log())
	}
}

// dial performs the 2025-03-26 handshake with mcp-go's client.
func dial(t *testing.T, ctx context.Context, url string, headers map[string]string) (*client.Client, error) {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	cl := client.NewClient(tr, client.WithProtocolVersion("2025-03-26"))
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	init, err := cl.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ProtocolVersion: "2025-03-26",
		ClientInfo:      mcpgo.Implementation{Name: "drop-in-http-test", Version: "1"},
	}})
	if err != nil {
		return nil, err
	}
	if init.ProtocolVersion != "2025-03-26" {
		t.Fatalf("negotiated %s", init.ProtocolVersion)
	}
	return cl, nil
}

func callText(t *testing.T, ctx context.Context, cl *client.Client, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cl.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tc, ok := res.Content[0].(mcpgo.TextContent)
	if !ok {
		t.Fatalf("%s: content[0] is %T", name, res.Content[0])
	}
	return tc.Text, res.IsError
}

// TestMiniAppDropInHTTP: `minimal mcp --http` serves the drop-in tools at
// /mcp to mcp-go's client on the 2025-03-26 handshake, with the implicit
// session (no start_ai_session), and stops cleanly on SIGTERM.
func TestMiniAppDropInHTTP(t *testing.T) {
	p := startHTTPDropIn(t)
	if !strings.HasSuffix(p.url, "/mcp") {
		t.Fatalf("url %s", p.url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := dial(t, ctx, p.url, nil)
	if err != nil {
		t.Fatalf("initialize: %v\n%s", err, p.log())
	}
	tools, err := cl.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, x := range tools.Tools {
		have[x.Name] = true
	}
	for _, n := range []string{"info", "create", "get", "list", "update", "delete", "reload"} {
		if !have[n] {
			t.Errorf("tools/list lacks %s", n)
		}
	}
	if have["start_ai_session"] || have["end_ai_session"] {
		t.Errorf("tools/list offers the session tools: %v", have)
	}
	text, isErr := callText(t, ctx, cl, "create", map[string]any{"table": "emo", "data": map[string]any{"text": "over http", "tags": []any{"x"}}})
	if isErr || !strings.Contains(text, `"data":{"tags":["x"],"text":"over http"}`) {
		t.Fatalf("create: %v %s", isErr, text)
	}
	text, isErr = callText(t, ctx, cl, "list", map[string]any{"table": "emo"})
	if isErr || !strings.Contains(text, "over http") || !strings.Contains(text, "seeded") {
		t.Fatalf("list: %v %s", isErr, text)
	}
	text, isErr = callText(t, ctx, cl, "list", map[string]any{"table": "emo", "filter": map[string]any{"type": "array_contains", "field": "tags", "value": "x"}})
	if isErr || !strings.Contains(text, "over http") || strings.Contains(text, "seeded") {
		t.Fatalf("list array_contains: %v %s", isErr, text)
	}
	// DNS-rebinding protection: another Host is refused on a loopback bind.
	req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Host = "evil.example:8484"
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("Host evil.example: %d", resp.StatusCode)
	}
	p.stop(t)
}

// TestMiniAppDropInHTTPNonLoopback: a non-loopback bind without
// MINI_APP_HTTP_TOKEN is refused with exit code 1, as mini-app-mcp does.
func TestMiniAppDropInHTTPNonLoopback(t *testing.T) {
	for _, bind := range []string{"0.0.0.0:0", ":0"} {
		cmd := exec.Command(binary, "mcp", "--http", "--bind", bind)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "MINI_APP_HTTP_TOKEN=", "MINI_APP_USER_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "not a loopback address") || !strings.Contains(string(out), "MINI_APP_HTTP_TOKEN") {
			t.Fatalf("bind %s: %v %s", bind, err, out)
		}
	}
}

// TestMiniAppDropInHTTPToken: with MINI_APP_HTTP_TOKEN every request needs
// the bearer: without it or with another one 401 (JSON body), with it the
// tools work.
func TestMiniAppDropInHTTPToken(t *testing.T) {
	p := startHTTPDropIn(t, "MINI_APP_HTTP_TOKEN=s3cret-token")
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret-token-and-more", "Basic s3cret-token", "s3cret-token"} {
		req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		derr := json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || derr != nil || e.Error.Code == "" || !strings.Contains(e.Error.Message, "bearer") ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("Authorization %q: %d %+v %v", auth, resp.StatusCode, e, derr)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := dial(t, ctx, p.url, map[string]string{"Authorization": "Bearer wrong"}); err == nil {
		t.Fatal("initialize with a wrong bearer succeeded")
	}
	cl, err := dial(t, ctx, p.url, map[string]string{"Authorization": "Bearer s3cret-token"})
	if err != nil {
		t.Fatalf("initialize: %v\n%s", err, p.log())
	}
	if text, isErr := callText(t, ctx, cl, "list", map[string]any{"table": "emo"}); isErr || !strings.Contains(text, "seeded") {
		t.Fatalf("list: %v %s", isErr, text)
	}
	p.stop(t)
}
