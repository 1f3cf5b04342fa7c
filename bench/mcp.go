package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// The MCP comparison: auto_read_rows of a 100-row page through the
// gateway's MCP endpoint vs the REST GET of the same page, same gateway,
// in each protocol era clients speak: 2025-06-18 and 2025-11-25 (the
// handshake: initialize first, its Mcp-Session-Id on every call) and
// 2026-07-28 (stateless: _meta and the standard headers). Each MCP call is
// journaled in the control-plane store (a write before and one after the
// call), so it costs more than REST by design.
const (
	mcpPath     = "/minimal/mcp/rpc/v1"
	mcpProtocol = "2026-07-28"
	// mcpTarget is the throughput target of MCP over REST.
	mcpTarget = 0.90
)

// mcpEras are the protocol versions measured against REST; answerEras
// those whose answer size is printed (2025-03-26 clients get the text
// only).
var (
	mcpEras    = []string{"2025-06-18", "2025-11-25", mcpProtocol}
	answerEras = []string{"2025-03-26", "2025-06-18", "2025-11-25", mcpProtocol}
)

// The budgets of tools/list in cl100k tokens, in a project with pg and mi
// databases (the bench's): an admin agent's list and a read-only agent's.
const (
	adminListBudget    = 3000
	readOnlyListBudget = 1500
)

// listing is one role's tools/list: how many tools, how many tokens.
type listing struct {
	role          string
	tools, tokens int
	budget        int
}

// listTokens asks the MCP endpoint at addr for the tools token lists and
// counts the cl100k_base tokens of the tools array as it is sent (the
// encoding ships with the tokenizer package: nothing is fetched).
func listTokens(ctx context.Context, addr, token string) (tools, tokens int, err error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": map[string]any{"_meta": mcpMeta}})
	if err != nil {
		return 0, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+mcpPath, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("LB-Access-Token", token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", mcpProtocol)
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Result struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("tools/list: status %d, %v", resp.StatusCode, err)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(out.Result.Tools, &list); err != nil {
		return 0, 0, fmt.Errorf("tools/list: %w", err)
	}
	enc, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		return 0, 0, err
	}
	n, err := enc.Count(string(out.Result.Tools))
	return len(list), n, err
}

// mcpSide is what a target needs to read through MCP instead of REST.
type mcpSide struct {
	url     string   // http://ADDR/minimal/mcp/rpc/v1
	version string   // the protocol version spoken
	session string   // X-Session-Id
	bodies  [][]byte // the tools/call request of each page
	// transport is the Mcp-Session-Id initialize issued (handshake era).
	transport string
	// tail ends the members before structuredContent's value as the
	// gateway writes them in this era (structuredAt).
	tail []byte
}

// modern reports whether the side speaks the stateless era.
func (m *mcpSide) modern() bool { return m.version >= mcpProtocol }

// structured reports whether the side's answers carry structuredContent
// (2025-06-18 and later).
func (m *mcpSide) structured() bool { return m.version >= "2025-06-18" }

// mcpMeta is the params._meta every 2026-07-28 request carries.
var mcpMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    mcpProtocol,
	"io.modelcontextprotocol/clientCapabilities": map[string]any{},
}

// mcpRequest is a tools/call of version (with _meta in 2026-07-28).
func mcpRequest(version string, id int, tool string, args map[string]any) ([]byte, error) {
	params := map[string]any{"name": tool, "arguments": args}
	if version >= mcpProtocol {
		params["_meta"] = mcpMeta
	}
	return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

// readAgentToken reads the bootstrap's token of identity agent (kind mcp).
func readAgentToken(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "agent.token"))
	if err != nil {
		return "", fmt.Errorf("agent token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", errors.New("agent token file is empty")
	}
	return tok, nil
}

// newMCPTarget starts an AI session on the MCP endpoint at addr, speaking
// protocol version (a handshake-era one initializes first), and returns a
// target reading pages of set through auto_read_rows in it.
func newMCPTarget(ctx context.Context, name, addr, token, version string, pid, concurrency int, set pageSet) (*target, error) {
	t := newTarget(name, "", token, pid, concurrency, set)
	m := &mcpSide{url: "http://" + addr + mcpPath, version: version, bodies: make([][]byte, set.pages),
		tail: []byte(`,"isError":false,"structuredContent":`)}
	if m.modern() {
		m.tail = []byte(`,"resultType":"complete","structuredContent":`)
	} else if err := m.initialize(ctx, t); err != nil {
		return nil, err
	}
	t.mcp = m
	start, err := mcpRequest(version, 1, "start_ai_session", map[string]any{"name": "bench", "context": "make bench"})
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	if err := mcpCall(ctx, t, "start_ai_session", start, &body, true); err != nil {
		return nil, fmt.Errorf("start_ai_session: %w", err)
	}
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(body.Bytes(), &started); err != nil || started.SessionID == "" {
		return nil, fmt.Errorf("start_ai_session answered %.200s", body.Bytes())
	}
	m.session = started.SessionID
	for pg := range m.bodies {
		if set.params != "" {
			return nil, errors.New("mcp target: extra query parameters are not supported")
		}
		m.bodies[pg], err = mcpRequest(version, pg+2, "auto_read_rows", map[string]any{
			"type": "pg", "schema": benchSchema, "table": benchTable,
			"page_size": pageSize, "page_number": pg,
			"query": map[string]any{"oy": "id.as"},
		})
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// initialize sends the handshake of m's version and keeps the
// Mcp-Session-Id it is answered with.
func (m *mcpSide) initialize(ctx context.Context, t *target) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": m.version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("LB-Access-Token", t.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if m.transport = resp.Header.Get("Mcp-Session-Id"); resp.StatusCode != http.StatusOK || m.transport == "" {
		return fmt.Errorf("initialize %s: status %d, Mcp-Session-Id %q: %.200s", m.version, resp.StatusCode, m.transport, answer)
	}
	return nil
}

// mcpPost POSTs one tools/call request of t's era, with its headers.
func mcpPost(ctx context.Context, t *target, tool string, reqBody []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.mcp.url, bytes.NewReader(reqBody))
	if err != nil {
		return nil, err
	}
	req.Header.Set("LB-Access-Token", t.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", t.mcp.version)
	if t.mcp.modern() {
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
	} else {
		req.Header.Set("Mcp-Session-Id", t.mcp.transport)
	}
	if t.mcp.session != "" {
		req.Header.Set("X-Session-Id", t.mcp.session)
	}
	return t.client.Do(req)
}

// answerSize is the size in bytes of the whole answer to t's call for
// page pg.
func answerSize(ctx context.Context, t *target, pg int) (int, error) {
	resp, err := mcpPost(ctx, t, "auto_read_rows", t.mcp.bodies[pg])
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && (resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"isError":false`))) {
		err = fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	return len(b), err
}

// mcpCall POSTs one tools/call request and leaves in body the tool's
// answer; a JSON-RPC error, isError or any status but 200 is an error.
//
// With full, the envelope is decoded and the answer is
// result.content[0].text, which must equal result.structuredContent. Else
// — the checks' cadence is the REST side's: a byte scan on every answer, a
// full decode on every fullCheckEvery-th — the envelope is checked by byte
// scans and the answer is the structuredContent, cut out of the body (see
// structuredAt). The full check compares the text with structuredContent
// byte for byte first, and as JSON values only when the bytes differ; for
// a page of rows in an era with structuredContent it checks the text block
// alone after the byte scans (checkTextBlock), as strictly.
func mcpCall(ctx context.Context, t *target, tool string, reqBody []byte, body *bytes.Buffer, full bool) error {
	resp, err := mcpPost(ctx, t, tool, reqBody)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body.Reset()
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, bytes.TrimSpace(body.Bytes()))
	}
	if !full || (tool == "auto_read_rows" && t.mcp.structured()) {
		b := bytes.TrimSpace(body.Bytes())
		tail := t.mcp.tail
		i := structuredAt(b, tail)
		switch {
		case !bytes.HasPrefix(b, rpcOpen) || !bytes.Contains(b[:min(len(b), 64)], resultOpen):
			return fmt.Errorf("not a JSON-RPC result: %.200s", b)
		case i < 0 || !bytes.HasSuffix(b, []byte("}}")):
			return fmt.Errorf("no structuredContent: %.200s", b)
		case bytes.HasSuffix(b[:i], isErrorBefore):
			return fmt.Errorf("tool error: %.200s", b)
		}
		answer := b[i+len(tail) : len(b)-2]
		if full {
			if err := checkTextBlock(b, i, answer); err != nil {
				return err
			}
		}
		// Move the answer to the front of body (b aliases it).
		n := copy(body.Bytes(), answer)
		body.Truncate(n)
		return nil
	}
	var env struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError    bool            `json:"isError"`
			Structured json.RawMessage `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body.Bytes(), &env); err != nil {
		return fmt.Errorf("decode JSON-RPC answer: %w: %.100s", err, body.Bytes())
	}
	switch {
	case env.Error != nil:
		return fmt.Errorf("JSON-RPC error %d: %s", env.Error.Code, env.Error.Message)
	case env.Result == nil || len(env.Result.Content) == 0:
		return fmt.Errorf("no result content: %.200s", body.Bytes())
	case env.Result.IsError:
		return fmt.Errorf("tool error: %.200s", env.Result.Content[0].Text)
	case env.Result.Structured != nil && !bytes.Equal(env.Result.Structured, []byte(env.Result.Content[0].Text)) &&
		!sameJSON(env.Result.Structured, []byte(env.Result.Content[0].Text)):
		return fmt.Errorf("structuredContent differs from the text answer: %.200s", body.Bytes())
	}
	body.Reset()
	body.WriteString(env.Result.Content[0].Text)
	return nil
}

// checkTextBlock is the full check of a page's answer b (the checks of
// every answer passed: structuredContent's value, answer, follows the
// tail at i), as strict as decoding the whole message and cheaper — the
// bench's own CPU is on the machine it measures. The members before the
// text block must be well-formed JSON, the text block the only content
// block, the text one valid JSON string equal to answer (byte for byte,
// or as a JSON value); checkPage then decodes answer itself. With the
// fixed bytes around them, that is all of the message.
func checkTextBlock(b []byte, i int, answer []byte) error {
	// The content array closes right before the tail, or before the
	// isError member in front of 2026-07-28's.
	end := i
	if e := bytes.TrimSuffix(b[:i], isErrorFalse); len(e) < i {
		end = len(e)
	}
	at := bytes.Index(b[:end], textOpen)
	if at < 0 || !bytes.HasSuffix(b[:end], []byte("}]")) {
		return fmt.Errorf("no text block before structuredContent: %.200s", b)
	}
	head := append(bytes.Clone(b[:at+len(textOpen)]), `""}]}}`...)
	if !json.Valid(head) {
		return fmt.Errorf("malformed JSON-RPC result: %.200s", b)
	}
	var text string
	if err := json.Unmarshal(b[at+len(textOpen):end-2], &text); err != nil {
		return fmt.Errorf("text block: %w: %.100s", err, b[at:])
	}
	if text != string(answer) && !sameJSON([]byte(text), answer) {
		return fmt.Errorf("structuredContent differs from the text answer: %.200s", b)
	}
	return nil
}

// sameJSON reports whether a and b are the same JSON value (numbers
// compared as written).
func sameJSON(a, b []byte) bool {
	decode := func(raw []byte) (any, error) {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		return v, d.Decode(&v)
	}
	va, errA := decode(a)
	vb, errB := decode(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

var (
	rpcOpen = []byte(`{"jsonrpc":"2.0","id":`)
	// textOpen opens the one content block of a tool's answer, up to its
	// text's value.
	textOpen   = []byte(`"content":[{"type":"text","text":`)
	resultOpen = []byte(`"result":{`)
	// isErrorBefore precedes the tail (mcpSide.tail) in a tool error,
	// isErrorFalse in a 2026-07-28 success.
	isErrorBefore = []byte(`,"isError":true`)
	isErrorFalse  = []byte(`,"isError":false`)
)

// structuredAt is the index of tail, the members before
// structuredContent's value, in b, or -1. It looks only where the byte 'C'
// of "structuredContent" is (IndexByte runs far faster than a search for a
// pattern opening with a quote, the commonest byte of JSON), and inside
// the escaped text a quote is always escaped, so the first match is the
// member.
func structuredAt(b, tail []byte) int {
	cAt := bytes.IndexByte(tail, 'C')
	for off := cAt; off < len(b); {
		j := bytes.IndexByte(b[off:], 'C')
		if j < 0 {
			return -1
		}
		at := off + j - cAt
		if bytes.HasPrefix(b[at:], tail) {
			return at
		}
		off += j + 1
	}
	return -1
}

// mcpPhase compares MCP auto_read_rows with the REST GET of the same
// pages on the running gateway.
func mcpPhase(ctx context.Context, gw *child, dataDir, gwBase, token, readerToken string, o options, sum *summary) error {
	if gw.mcpAddr == "" {
		return errors.New("the gateway did not log \"serving MCP\"")
	}
	agent, err := readAgentToken(dataDir)
	if err != nil {
		return err
	}
	// tools/list per role, counted in tokens.
	for _, c := range []struct {
		l     listing
		token string
	}{
		{listing{role: "admin agent (identity agent)", budget: adminListBudget}, agent},
		{listing{role: "read-only agent (identity " + readerIdentity + ")", budget: readOnlyListBudget}, readerToken},
	} {
		l := c.l
		if l.tools, l.tokens, err = listTokens(ctx, gw.mcpAddr, c.token); err != nil {
			return fmt.Errorf("%s: %w", l.role, err)
		}
		sum.listings = append(sum.listings, l)
		logf("tools/list of the %s: %d tools, %d tokens", l.role, l.tools, l.tokens)
	}
	r := newTarget("rest", gwBase, token, gw.pid(), o.concurrency, allRows)
	targets := map[string]*target{}
	for _, v := range answerEras {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		m, err := newMCPTarget(cctx, "mcp "+v, gw.mcpAddr, agent, v, gw.pid(), o.concurrency, allRows)
		if err == nil {
			targets[v] = m
			var size int
			if size, err = answerSize(cctx, m, 3); err == nil {
				sum.answerSizes = append(sum.answerSizes, eraSize{version: v, bytes: size})
			}
		}
		cancel()
		if err != nil {
			return fmt.Errorf("mcp %s on %s: %w", v, gw.mcpAddr, err)
		}
		if err := crossCheck(ctx, m, r, dialectColumns); err != nil {
			return fmt.Errorf("mcp %s auto_read_rows and REST GET disagree: %w", v, err)
		}
	}
	logf("cross-check: page 3 identical through MCP (every era) and REST")
	for _, v := range mcpEras {
		mst, rst, failures, err := compare(ctx, targets[v], r, o.stretched(mcpRounds), mcpRounds, true, sum)
		if err != nil {
			return err
		}
		sum.mcpEras = append(sum.mcpEras, mcpEra{version: v, mcp: mst, rest: rst})
		if failures > 0 {
			return fmt.Errorf("%d requests failed in the MCP %s comparison", failures, v)
		}
	}
	return nil
}
