package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// This file holds the plumbing of TestReplayMiniApp: a data directory
// written by plain SQL and files in mini-app-mcp's layout, and two JSON-RPC
// clients of the real binary, one over stdio and one over HTTP.

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) String() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("rpc error %d %q %s", e.Code, e.Message, e.Data)
}

// replayConn is one connection to a running `minimal mcp`: rpc sends a
// request and waits for its answer.
type replayConn interface {
	rpc(t *testing.T, method string, params any) (json.RawMessage, *rpcError)
	// initResult is the initialize answer of the handshake.
	initResult() map[string]any
}

// replayTransport starts the binary over a working directory with extra
// environment and performs the handshake with the given protocol version.
type replayTransport struct {
	name string
	open func(t *testing.T, work string, env []string, version string) replayConn
}

var replayTransports = []replayTransport{
	{name: "stdio", open: openReplayStdio},
	{name: "http", open: openReplayHTTP},
}

// replayEnvOf is the environment of a drop-in process: only the variables
// given count (the inherited MINI_APP_* are cleared).
func replayEnvOf(env []string) []string {
	out := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MINI_APP_") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

func initParams(version string) map[string]any {
	return map[string]any{"protocolVersion": version, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "replay", "version": "1"}}
}

// --- stdio ---

type replayStdio struct {
	mu      sync.Mutex
	in      io.WriteCloser
	id      int
	answers chan map[string]json.RawMessage
	stderr  *lockedBuffer
	init    map[string]any
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func openReplayStdio(t *testing.T, work string, env []string, version string) replayConn {
	t.Helper()
	cmd := exec.Command(binary, "mcp", "--stdio")
	cmd.Dir = work
	cmd.Env = replayEnvOf(env)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &replayStdio{in: stdin, answers: make(chan map[string]json.RawMessage, 16), stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.answers <- m
			}
		}
		close(c.answers)
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	res, rerr := c.rpc(t, "initialize", initParams(version))
	if rerr != nil {
		t.Fatalf("initialize %s: %v\n%s", version, rerr, c.stderr.String())
	}
	if err := json.Unmarshal(res, &c.init); err != nil {
		t.Fatalf("initialize: %s", res)
	}
	c.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *replayStdio) initResult() map[string]any { return c.init }

func (c *replayStdio) send(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("write stdin: %v\n%s", err, c.stderr.String())
	}
}

func (c *replayStdio) rpc(t *testing.T, method string, params any) (json.RawMessage, *rpcError) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.id++
	id := c.id
	c.send(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-c.answers:
			if !ok {
				t.Fatalf("%s: stdout closed; stderr:\n%s", method, c.stderr.String())
			}
			if string(m["id"]) != fmt.Sprint(id) {
				continue // a notification, or a late answer
			}
			return answerOf(t, method, m)
		case <-deadline:
			t.Fatalf("no answer to %s; stderr:\n%s", method, c.stderr.String())
		}
	}
}

// answerOf splits a JSON-RPC response into its result or error.
func answerOf(t *testing.T, method string, m map[string]json.RawMessage) (json.RawMessage, *rpcError) {
	t.Helper()
	if string(m["jsonrpc"]) != `"2.0"` {
		t.Fatalf("%s: jsonrpc member %s", method, m["jsonrpc"])
	}
	if e, ok := m["error"]; ok {
		var re rpcError
		if err := json.Unmarshal(e, &re); err != nil {
			t.Fatalf("%s: error member %s", method, e)
		}
		return nil, &re
	}
	res, ok := m["result"]
	if !ok {
		t.Fatalf("%s: neither result nor error: %v", method, m)
	}
	return res, nil
}

// --- HTTP ---

type replayHTTP struct {
	url     string
	version string
	// session is the Mcp-Session-Id initialize issued, sent back on every
	// later request (as upstream's backup script does).
	session string
	logs    *lockedBuffer
	mu      sync.Mutex
	id      int
	init    map[string]any
}

// openReplayHTTP starts `minimal mcp --http --bind 127.0.0.1:0`, reads
// the bound address from its `serving MCP` log line and performs the
// handshake with plain JSON-RPC POSTs to /mcp.
func openReplayHTTP(t *testing.T, work string, env []string, version string) replayConn {
	t.Helper()
	cmd := exec.Command(binary, "mcp", "--http", "--bind", "127.0.0.1:0")
	cmd.Dir = work
	cmd.Env = replayEnvOf(env)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &replayHTTP{logs: &lockedBuffer{}}
	addrc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.logs.Write(append(sc.Bytes(), '\n'))
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
				Path string `json:"path"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "serving MCP over streamable HTTP" {
				addrc <- "http://" + rec.Addr + rec.Path
			}
		}
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	select {
	case c.url = <-addrc:
	case <-done:
		t.Fatalf("mcp --http exited:\n%s", c.logs.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("mcp --http did not start:\n%s", c.logs.String())
	}
	res, rerr := c.rpc(t, "initialize", initParams(version))
	if rerr != nil {
		t.Fatalf("initialize %s: %v\n%s", version, rerr, c.logs.String())
	}
	if err := json.Unmarshal(res, &c.init); err != nil {
		t.Fatalf("initialize: %s", res)
	}
	c.version, _ = c.init["protocolVersion"].(string)
	c.post(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *replayHTTP) initResult() map[string]any { return c.init }

// post sends one JSON-RPC message and returns the response message, if
// any, from a JSON or an event-stream body.
func (c *replayHTTP) post(t *testing.T, msg any) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.version != "" {
		req.Header.Set("MCP-Protocol-Version", c.version)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v\n%s", c.url, err, c.logs.String())
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && c.session == "" {
		c.session = sid
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusAccepted || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(body), "\n") {
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:"); ok {
				var m map[string]json.RawMessage
				if json.Unmarshal([]byte(strings.TrimSpace(data)), &m) == nil && m["id"] != nil {
					return m
				}
			}
		}
		t.Fatalf("no response in the event stream: %s", body)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("POST: status %d, body %s", resp.StatusCode, body)
	}
	return m
}

func (c *replayHTTP) rpc(t *testing.T, method string, params any) (json.RawMessage, *rpcError) {
	t.Helper()
	c.mu.Lock()
	c.id++
	id := c.id
	c.mu.Unlock()
	m := c.post(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if m == nil {
		t.Fatalf("%s: no response", method)
	}
	if string(m["id"]) != fmt.Sprint(id) {
		t.Fatalf("%s: response id %s, want %d", method, m["id"], id)
	}
	return answerOf(t, method, m)
}

// --- the data directory, by plain SQL and files ---

// uuid4 is a random UUID version 4, lowercase and hyphenated.
func uuid4(t *testing.T) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// contractDDL is the per-table database of the contract's §6.
var contractDDL = []string{
	`PRAGMA journal_mode=WAL`,
	`CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, data TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS _aliases (name TEXT PRIMARY KEY, filter TEXT NOT NULL, default_limit INTEGER, description TEXT, params_schema TEXT)`,
	`CREATE TABLE IF NOT EXISTS _row_history (id INTEGER PRIMARY KEY AUTOINCREMENT, table_name TEXT NOT NULL, row_id TEXT NOT NULL, version INTEGER NOT NULL, recorded_at INTEGER NOT NULL, op TEXT NOT NULL CHECK (op IN ('create','update','delete')), data_json TEXT, prev_data_json TEXT)`,
	`CREATE UNIQUE INDEX IF NOT EXISTS idx_row_history_row_version ON _row_history(table_name, row_id, version)`,
	`CREATE INDEX IF NOT EXISTS idx_row_history_row_recorded ON _row_history(table_name, row_id, recorded_at DESC)`,
	`CREATE TABLE IF NOT EXISTS _row_history_archive (id INTEGER PRIMARY KEY AUTOINCREMENT, table_name TEXT NOT NULL, row_id TEXT NOT NULL, version_start INTEGER NOT NULL, version_end INTEGER NOT NULL, recorded_start INTEGER NOT NULL, recorded_end INTEGER NOT NULL, entry_count INTEGER NOT NULL, format TEXT NOT NULL DEFAULT 'jsonl-zstd', blob BLOB NOT NULL)`,
}

// seedEntry is one history entry of a seeded row: the row's data after it.
type seedEntry struct {
	at   int64
	op   string
	data string
}

// plainTable writes <dir>/<name>/schema.yaml as text and creates
// <dir>/<name>/<name>.db with the contract's DDL.
func plainTable(t *testing.T, dir, name, yaml string) *sql.DB {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "schema.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	db := plainDB(t, dir, name)
	for _, q := range contractDDL {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db
}

// plainDB opens a table's database with plain database/sql.
func plainDB(t *testing.T, dir, name string) *sql.DB {
	t.Helper()
	return plainDBFile(t, filepath.Join(dir, name, name+".db"))
}

// plainDBFile opens a SQLite file with plain database/sql.
func plainDBFile(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// plainRow inserts a row under a new UUIDv4 with its history entries (the
// row's data is the last entry's; created_at the first's, updated_at the
// last's) and returns the id. data must be compact JSON.
func plainRow(t *testing.T, db *sql.DB, table string, hist ...seedEntry) string {
	t.Helper()
	id := uuid4(t)
	last := hist[len(hist)-1]
	if _, err := db.Exec(`INSERT INTO rows (id, data, created_at, updated_at) VALUES (?, ?, ?, ?)`, id, last.data, hist[0].at, last.at); err != nil {
		t.Fatal(err)
	}
	for i, h := range hist {
		if _, err := db.Exec(`INSERT INTO _row_history (table_name, row_id, version, recorded_at, op, data_json) VALUES (?, ?, ?, ?, ?, ?)`,
			table, id, i+1, h.at, h.op, h.data); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// compactJSON encodes v as compact JSON with sorted keys, as mini-app-mcp
// stores data.
func compactJSON(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// historyOps lists a row's history ops in version order, comma-separated.
func historyOps(t *testing.T, db *sql.DB, id string) string {
	t.Helper()
	rows, err := db.Query(`SELECT op FROM _row_history WHERE row_id = ? ORDER BY version`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ops []string
	for rows.Next() {
		var op string
		if err := rows.Scan(&op); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	return strings.Join(ops, ",")
}

func sqlOpen(path string) (*sql.DB, error) { return sql.Open("sqlite", path) }

// rawCall runs a tool with its arguments as raw JSON text, so number
// literals (5.0, 12345678901234567890) reach the server as written.
func (e *replayEnv) rawCall(t *testing.T, tool, args string) (string, bool, *rpcError) {
	t.Helper()
	raw, rerr := e.c.rpc(t, "tools/call", map[string]any{"name": tool, "arguments": json.RawMessage(args)})
	if rerr != nil {
		return "", false, rerr
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError *bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" || res.IsError == nil {
		t.Fatalf("%s: result %s", tool, raw)
	}
	return res.Content[0].Text, *res.IsError, nil
}

// rawRecord is a RowRecord with its members as raw JSON text.
type rawRecord map[string]json.RawMessage

// rawOK runs a tool that must succeed with a RowRecord.
func (e *replayEnv) rawOK(t *testing.T, tool, args string) rawRecord {
	t.Helper()
	text, isErr, rerr := e.rawCall(t, tool, args)
	if rerr != nil || isErr {
		t.Fatalf("%s %s: isError %v %q %v", tool, args, isErr, text, rerr)
	}
	checkRecord(t, text)
	var r rawRecord
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("%s: %s", tool, text)
	}
	return r
}

// rawRows runs a tool that must succeed with an array of RowRecords.
func (e *replayEnv) rawRows(t *testing.T, tool, args string) []rawRecord {
	t.Helper()
	text, isErr, rerr := e.rawCall(t, tool, args)
	if rerr != nil || isErr {
		t.Fatalf("%s %s: isError %v %q %v", tool, args, isErr, text, rerr)
	}
	var rs []rawRecord
	if err := json.Unmarshal([]byte(text), &rs); err != nil {
		t.Fatalf("%s: %s", tool, text)
	}
	return rs
}

func (r rawRecord) id(t *testing.T) string {
	t.Helper()
	var id string
	if err := json.Unmarshal(r["id"], &id); err != nil {
		t.Fatalf("id %s", r["id"])
	}
	return id
}

// data checks the record's data, as text.
func (r rawRecord) data(t *testing.T, want string) {
	t.Helper()
	if string(r["data"]) != want {
		t.Fatalf("data\n got %s\nwant %s", r["data"], want)
	}
}

// storedData checks a row's stored data, as text, in the table's file.
func (e *replayEnv) storedData(t *testing.T, table, id, want string) {
	t.Helper()
	var data string
	if err := plainDB(t, e.user, table).QueryRow(`SELECT data FROM rows WHERE id = ?`, id).Scan(&data); err != nil || data != want {
		t.Fatalf("stored data of %s\n got %q %v\nwant %q", id, data, err, want)
	}
}
