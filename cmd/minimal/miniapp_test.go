package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

const emoYAML = `table: emo
title: Emotions
fields:
  - name: text
    type: string
    required: true
  - name: tags
    type: array
  - name: body
    type: string
`

// contractTable writes a table exactly as mini-app-mcp's layout says, with
// plain SQL: schema.yaml, <name>/<name>.db with rows and _row_history.
func contractTable(t *testing.T, dir, name, yaml string, rows map[string]string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "schema.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, name, name+".db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`PRAGMA journal_mode=WAL`,
		`CREATE TABLE rows (id TEXT PRIMARY KEY, data TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
		`CREATE TABLE _aliases (name TEXT PRIMARY KEY, filter TEXT NOT NULL, default_limit INTEGER, description TEXT, params_schema TEXT)`,
		`CREATE TABLE _row_history (id INTEGER PRIMARY KEY AUTOINCREMENT, table_name TEXT NOT NULL, row_id TEXT NOT NULL, version INTEGER NOT NULL, recorded_at INTEGER NOT NULL, op TEXT NOT NULL CHECK (op IN ('create','update','delete')), data_json TEXT, prev_data_json TEXT)`,
		`CREATE UNIQUE INDEX idx_row_history_version ON _row_history(table_name, row_id, version)`,
		`CREATE TABLE _row_history_archive (id INTEGER PRIMARY KEY AUTOINCREMENT, table_name TEXT NOT NULL, row_id TEXT NOT NULL, version_start INTEGER NOT NULL, version_end INTEGER NOT NULL, recorded_start INTEGER NOT NULL, recorded_end INTEGER NOT NULL, entry_count INTEGER NOT NULL, format TEXT NOT NULL DEFAULT 'jsonl-zstd', blob BLOB NOT NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for id, data := range rows {
		if _, err := db.Exec(`INSERT INTO rows VALUES (?, ?, 1700000000, 1700000000)`, id, data); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO _row_history (table_name,row_id,version,recorded_at,op,data_json) VALUES ('emo', ?, 1, 1700000000, 'create', ?)`, id, data); err != nil {
			t.Fatal(err)
		}
	}
}

// stdioClient drives a `minimal mcp --stdio` process.
type stdioClient struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      interface{ Write([]byte) (int, error) }
	answers chan map[string]any
	stderr  *strings.Builder
	id      int
}

func startStdio(t *testing.T, dir string, env []string, args ...string) *stdioClient {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp", "--stdio"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	c := &stdioClient{t: t, cmd: cmd, in: stdin, answers: make(chan map[string]any, 16), stderr: &strings.Builder{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.answers <- m
			}
		}
		close(c.answers)
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	c.rpc("initialize", map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *stdioClient) send(v map[string]any) {
	b, _ := json.Marshal(v)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

func (c *stdioClient) rpc(method string, params map[string]any) map[string]any {
	c.t.Helper()
	c.id++
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	select {
	case m, ok := <-c.answers:
		if !ok {
			c.t.Fatalf("stdout closed; stderr:\n%s", c.stderr.String())
		}
		return m
	case <-time.After(15 * time.Second):
		c.t.Fatalf("no answer to %s; stderr:\n%s", method, c.stderr.String())
	}
	return nil
}

// tool calls a tool and returns its text and isError.
func (c *stdioClient) tool(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	m := c.rpc("tools/call", map[string]any{"name": name, "arguments": args})
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s: no result: %v", name, m)
	}
	return res["content"].([]any)[0].(map[string]any)["text"].(string), res["isError"] == true
}

func (c *stdioClient) ok(name string, args map[string]any) map[string]any {
	c.t.Helper()
	text, isErr := c.tool(name, args)
	if isErr {
		c.t.Fatalf("%s %v: %s", name, args, text)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		c.t.Fatalf("%s: %s", name, text)
	}
	return m
}

func (c *stdioClient) refused(name string, args map[string]any, want string) {
	c.t.Helper()
	text, isErr := c.tool(name, args)
	if !isErr || !strings.Contains(text, want) {
		c.t.Fatalf("%s %v: %v %s, want isError %q", name, args, isErr, text, want)
	}
}

// TestMiniAppDropIn replays the contract's scenarios over the real binary's
// stdio in drop-in mode, on a user dir written by plain SQL.
func TestMiniAppDropIn(t *testing.T) {
	work := t.TempDir()
	user := filepath.Join(work, "user")
	const seeded = "0b0e7d41-5c1f-4e57-9c53-3f8a3a1f0001"
	contractTable(t, user, "emo", emoYAML, map[string]string{seeded: `{"tags":["a","b"],"text":"seeded"}`})
	// The env file names the user dir; the project dir does not exist.
	if err := os.WriteFile(filepath.Join(work, ".mini-app-mcp.env"), []byte("MINI_APP_USER_DIR=user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startStdio(t, work, []string{"MINI_APP_USER_DIR=", "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "nope")})

	// tools/list: the mini-app tools; create/update take data as an object.
	tl := c.rpc("tools/list", map[string]any{})["result"].(map[string]any)["tools"].([]any)
	have := map[string]map[string]any{}
	for _, x := range tl {
		have[x.(map[string]any)["name"].(string)] = x.(map[string]any)
	}
	for _, n := range []string{"info", "create", "get", "list", "update", "delete", "reload", "row_restore", "content_view", "content_replace", "content_insert"} {
		if have[n] == nil {
			t.Fatalf("tools/list lacks %s", n)
		}
	}
	for _, n := range []string{"create", "update"} {
		if typ := have[n]["inputSchema"].(map[string]any)["properties"].(map[string]any)["data"].(map[string]any)["type"]; typ != "object" {
			t.Fatalf("%s data type %v", n, typ)
		}
	}
	if a := have["delete"]["annotations"].(map[string]any); a["destructiveHint"] != true || a["idempotentHint"] != true {
		t.Fatalf("delete annotations %v", a)
	}

	// Multi-table mode: table is required; unknown tables are named.
	c.refused("info", map[string]any{}, "table argument is required in multi-table mode")
	c.refused("list", map[string]any{"table": "nope"}, "table not found: nope")
	info := c.ok("info", map[string]any{"table": "emo"})
	if info["table"] != "emo" || info["title"] != "Emotions" || info["history"] != "full" || len(info["fields"].([]any)) != 3 {
		t.Fatalf("info %v", info)
	}

	// The seeded row (written by plain SQL) is served unchanged, by prefix.
	got := c.ok("get", map[string]any{"table": "emo", "id": seeded[:8]})
	if got["id"] != seeded || got["data"].(map[string]any)["text"] != "seeded" || got["created_at"] != float64(1700000000) {
		t.Fatalf("get seeded %v", got)
	}

	// Round trip.
	c.refused("create", map[string]any{"table": "emo", "data": `{"text":"x"}`}, "value must be a JSON object")
	c.refused("create", map[string]any{"table": "emo", "data": map[string]any{"tags": []any{"a"}}}, "validation error on field 'text': required field missing")
	c.refused("create", map[string]any{"table": "emo", "data": map[string]any{"text": 5}}, "validation error on field 'text': expected type 'string', got 'number'")
	rec := c.ok("create", map[string]any{"table": "emo", "data": map[string]any{"text": "hello", "tags": []any{"x"}, "body": "one\ntwo\nthree"}})
	id := rec["id"].(string)
	if len(id) != 36 || rec["created_at"] != rec["updated_at"] {
		t.Fatalf("create %v", rec)
	}
	up := c.ok("update", map[string]any{"table": "emo", "id": id, "data": map[string]any{"tags": nil}})
	if d := up["data"].(map[string]any); d["text"] != "hello" || d["tags"] != nil || d["body"] != "one\ntwo\nthree" {
		t.Fatalf("merge %v", up)
	}
	c.refused("update", map[string]any{"table": "emo", "id": id, "data": map[string]any{"text": nil}}, "required field cannot be deleted via null")
	rep := c.ok("update", map[string]any{"table": "emo", "id": id, "mode": "replace", "data": map[string]any{"text": "only", "body": "one\ntwo\nthree"}})
	if d := rep["data"].(map[string]any); len(d) != 2 || d["text"] != "only" {
		t.Fatalf("replace %v", rep)
	}
	text, _ := c.tool("list", map[string]any{"table": "emo", "limit": 10})
	var rows []map[string]any
	if err := json.Unmarshal([]byte(text), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("list %s", text)
	}
	text, _ = c.tool("list", map[string]any{"table": "emo", "filter": map[string]any{"type": "eq", "field": "text", "value": "seeded"},
		"fields": map[string]any{"mode": "list", "fields": []any{"text"}}})
	if text != `[{"id":"`+seeded+`","data":{"text":"seeded"},"created_at":1700000000,"updated_at":1700000000}]` {
		t.Fatalf("filtered list %s", text)
	}
	c.refused("list", map[string]any{"table": "emo", "filter": map[string]any{"type": "eq", "field": "nope", "value": 1}}, "only schema-registered fields are allowed in filter")
	// order_by as mini-app-mcp: any key (json_extract), direction required.
	if text, isErr := c.tool("list", map[string]any{"table": "emo", "order_by": []any{map[string]any{"field": "nope", "direction": "desc"}}}); isErr {
		t.Fatalf("order_by an unnamed key: %s", text)
	}
	if m := c.rpc("tools/call", map[string]any{"name": "list", "arguments": map[string]any{"table": "emo", "order_by": []any{map[string]any{"field": "text"}}}}); fmt.Sprint(m["error"]) != "map[code:-32602 message:invalid params: order_by[0]: missing field `direction`]" {
		t.Fatalf("order_by without direction: %v", m)
	}
	text, _ = c.tool("list", map[string]any{"table": "emo", "order_by": []any{map[string]any{"field": "text", "direction": "asc"}}, "fields": map[string]any{"mode": "list", "fields": []any{"text"}}})
	if !strings.Contains(text, `"only"`) || strings.Index(text, `"only"`) > strings.Index(text, `"seeded"`) {
		t.Fatalf("order_by asc: %s", text)
	}
	c.refused("get", map[string]any{"table": "emo", "id": "ffffffff"}, "row not found: ffffffff")

	// Content tools.
	view := c.ok("content_view", map[string]any{"table": "emo", "id": id, "field": "body", "view_range": []any{2, 9}})
	if view["content"] != "     2  two\n     3  three\n" {
		t.Fatalf("view %q", view["content"])
	}
	if m := c.ok("content_replace", map[string]any{"table": "emo", "id": id, "field": "body", "old_str": "two", "new_str": "TWO"}); m["matches"] != float64(1) {
		t.Fatalf("replace %v", m)
	}
	if m := c.ok("content_replace", map[string]any{"table": "emo", "id": id, "field": "body", "old_str": "zzz", "new_str": "y"}); m["error"] != "STRING_NOT_FOUND" {
		t.Fatalf("not found %v", m)
	}
	if m := c.ok("content_replace", map[string]any{"table": "emo", "id": id, "field": "body", "old_str": "e", "new_str": "E"}); m["error"] != "AMBIGUOUS" ||
		m["data"].(map[string]any)["code"] != "AMBIGUOUS_MATCH" || len(m["data"].(map[string]any)["candidates"].([]any)) != 3 {
		t.Fatalf("ambiguous %v", m)
	}
	if m := c.ok("content_replace", map[string]any{"table": "emo", "id": id, "field": "body", "old_str": "", "new_str": "y"}); m["error"] != "VALIDATION" {
		t.Fatalf("empty old_str %v", m)
	}
	if m := c.ok("content_insert", map[string]any{"table": "emo", "id": id, "field": "body", "line": 0, "content": "zero"}); m["inserted_lines"] != float64(1) {
		t.Fatalf("insert %v", m)
	}
	if m := c.ok("content_insert", map[string]any{"table": "emo", "id": id, "field": "body", "line": 9, "content": "x"}); m["error"] != "OUT_OF_RANGE" ||
		m["data"].(map[string]any)["total_lines"] != float64(4) {
		t.Fatalf("out of range %v", m)
	}
	if m := c.ok("content_view", map[string]any{"table": "emo", "id": id, "field": "tags"}); m["error"] != "TYPE_ERROR" || m["data"].(map[string]any)["actual_type"] != "array" {
		t.Fatalf("type error %v", m)
	}
	if got := c.ok("get", map[string]any{"table": "emo", "id": id})["data"].(map[string]any)["body"]; got != "zero\none\nTWO\nthree" {
		t.Fatalf("body %q", got)
	}

	// Delete, then restore from history under the same id.
	if d := c.ok("delete", map[string]any{"table": "emo", "id": id[:13]}); d["deleted"] != id[:13] {
		t.Fatalf("delete %v", d)
	}
	c.refused("get", map[string]any{"table": "emo", "id": id}, "row not found")
	c.refused("row_restore", map[string]any{"table": "emo", "id": id, "at_unix_secs": 1}, "row not found")
	back := c.ok("row_restore", map[string]any{"table": "emo", "id": id, "at_unix_secs": time.Now().Unix() + 5})
	if back["id"] != id || back["data"].(map[string]any)["body"] != "zero\none\nTWO\nthree" {
		t.Fatalf("restore %v", back)
	}

	// Resources: one table → 3 schema resources + 5 docs.
	rl := c.rpc("resources/list", map[string]any{})["result"].(map[string]any)["resources"].([]any)
	if len(rl) != 8 {
		t.Fatalf("resources %v", rl)
	}
	rr := c.rpc("resources/read", map[string]any{"uri": "schema://json-schema?table=emo"})
	contents := rr["result"].(map[string]any)["contents"].([]any)[0].(map[string]any)
	if !strings.Contains(contents["text"].(string), `"required": [`) || contents["mimeType"] != "application/schema+json" {
		t.Fatalf("json-schema %v", rr)
	}
	if e := c.rpc("resources/read", map[string]any{"uri": "schema://yaml"})["error"].(map[string]any); !strings.Contains(e["message"].(string), "table argument is required") {
		t.Fatalf("schema without table %v", e)
	}
	if e, _ := c.rpc("resources/read", map[string]any{"uri": "nope://x"})["error"].(map[string]any); e == nil || e["code"] != float64(-32002) {
		t.Fatalf("unknown uri %v", e)
	}
	if rr := c.rpc("resources/read", map[string]any{"uri": "docs://quickstart"}); rr["result"] == nil {
		t.Fatalf("docs %v", rr)
	}

	// reload sees a new table written behind the server's back.
	contractTable(t, user, "later", "table: later\nfields:\n  - name: n\n    type: number\n", nil)
	if r := c.ok("reload", map[string]any{}); r["mounted"] != float64(2) || len(r["added"].([]any)) != 1 || r["added"].([]any)[0] != "later" {
		t.Fatalf("reload %v", r)
	}
	if rec := c.ok("create", map[string]any{"table": "later", "data": map[string]any{"n": 5}}); rec["data"].(map[string]any)["n"] != float64(5) {
		t.Fatalf("create in new table %v", rec)
	}

	// Our writes leave the directory in the contract's layout.
	db, err := sql.Open("sqlite", filepath.Join(user, "emo", "emo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var data string
	if err := db.QueryRow(`SELECT data FROM rows WHERE id = ?`, id).Scan(&data); err != nil || data != `{"body":"zero\none\nTWO\nthree","text":"only"}` {
		t.Fatalf("stored row %q %v", data, err)
	}
	hist, err := db.Query(`SELECT op, version FROM _row_history WHERE table_name = 'emo' AND row_id = ? ORDER BY version`, id)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for hist.Next() {
		var op string
		var v int
		hist.Scan(&op, &v)
		ops = append(ops, op)
	}
	hist.Close()
	if strings.Join(ops, ",") != "create,update,update,update,update,delete,create" {
		t.Fatalf("history %v", ops)
	}
	sort.Strings(ops)
}
