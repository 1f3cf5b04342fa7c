package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// The MCP comparison: auto_read_rows of a 100-row page through the
// gateway's MCP endpoint vs the REST GET of the same page, same gateway.
// Each MCP call is journaled in the control-plane store (a write before
// and one after the call), so it costs more than REST by design.
const (
	mcpPath     = "/minimal/mcp/rpc/v1"
	mcpProtocol = "2026-07-28"
	// mcpTarget is the throughput target of MCP over REST.
	mcpTarget = 0.80
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
	session string   // X-Session-Id
	bodies  [][]byte // the tools/call request of each page
}

// mcpMeta is the params._meta every 2026-07-28 request carries.
var mcpMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    mcpProtocol,
	"io.modelcontextprotocol/clientCapabilities": map[string]any{},
}

func mcpRequest(id int, tool string, args map[string]any) ([]byte, error) {
	return json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": mcpMeta},
	})
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

// newMCPTarget starts an AI session on the MCP endpoint at addr and returns
// a target reading pages of set through auto_read_rows in it.
func newMCPTarget(ctx context.Context, name, addr, token string, pid, concurrency int, set pageSet) (*target, error) {
	t := newTarget(name, "", token, pid, concurrency, set)
	m := &mcpSide{url: "http://" + addr + mcpPath, bodies: make([][]byte, set.pages)}
	t.mcp = m
	start, err := mcpRequest(1, "start_ai_session", map[string]any{"name": "bench", "context": "make bench"})
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
		m.bodies[pg], err = mcpRequest(pg+2, "auto_read_rows", map[string]any{
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

// mcpCall POSTs one tools/call request and leaves in body the tool's
// answer; a JSON-RPC error, isError or any status but 200 is an error.
//
// With full, the envelope is decoded and the answer is
// result.content[0].text, which must equal result.structuredContent. Else
// — the checks' cadence is the REST side's: a byte scan on every answer, a
// full decode on every fullCheckEvery-th — the envelope is checked by byte
// scans and the answer is the structuredContent, cut out of the body (see
// structuredAt). The full check compares the text with structuredContent
// byte for byte first, and as JSON values only when the bytes differ.
func mcpCall(ctx context.Context, t *target, tool string, reqBody []byte, body *bytes.Buffer, full bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.mcp.url, bytes.NewReader(reqBody))
	if err != nil {
		return err
	}
	req.Header.Set("LB-Access-Token", t.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", mcpProtocol)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	if t.mcp.session != "" {
		req.Header.Set("X-Session-Id", t.mcp.session)
	}
	resp, err := t.client.Do(req)
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
	if !full {
		b := bytes.TrimSpace(body.Bytes())
		i := structuredAt(b)
		switch {
		case !bytes.HasPrefix(b, rpcOpen) || !bytes.Contains(b[:min(len(b), 64)], resultOpen):
			return fmt.Errorf("not a JSON-RPC result: %.200s", b)
		case i < 0 || !bytes.HasSuffix(b, []byte("}}")):
			return fmt.Errorf("no structuredContent: %.200s", b)
		case bytes.HasSuffix(b[:i], isErrorBefore):
			return fmt.Errorf("tool error: %.200s", b)
		}
		// Move the answer to the front of body (b aliases it).
		n := copy(body.Bytes(), b[i+len(structuredTail):len(b)-2])
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
	rpcOpen    = []byte(`{"jsonrpc":"2.0","id":`)
	resultOpen = []byte(`"result":{`)
	// structuredTail ends the members before structuredContent's value, in
	// the order the gateway writes them; isErrorBefore precedes it in a
	// tool error.
	structuredTail = []byte(`,"resultType":"complete","structuredContent":`)
	isErrorBefore  = []byte(`,"isError":true`)
)

// structuredAt is the index of structuredTail in b, or -1. It looks only
// where the byte 'C' of "structuredContent" is (IndexByte runs far faster
// than a search for a pattern opening with a quote, the commonest byte of
// JSON), and inside the escaped text a quote is always escaped, so the
// first match is the member.
func structuredAt(b []byte) int {
	const cAt = len(`,"resultType":"complete","structured`)
	for off := cAt; off < len(b); {
		j := bytes.IndexByte(b[off:], 'C')
		if j < 0 {
			return -1
		}
		at := off + j - cAt
		if bytes.HasPrefix(b[at:], structuredTail) {
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
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	m, err := newMCPTarget(cctx, "mcp", gw.mcpAddr, agent, gw.pid(), o.concurrency, allRows)
	cancel()
	if err != nil {
		return fmt.Errorf("mcp on %s: %w", gw.mcpAddr, err)
	}
	logf("mcp on %s: session %s as identity agent", gw.mcpAddr, m.mcp.session)
	r := newTarget("rest", gwBase, token, gw.pid(), o.concurrency, allRows)
	if err := crossCheck(ctx, m, r, dialectColumns); err != nil {
		return fmt.Errorf("mcp auto_read_rows and REST GET disagree: %w", err)
	}
	logf("cross-check: page 3 identical through MCP and REST")
	mst, rst, failures, err := compare(ctx, m, r, o, scopedRounds, true, sum)
	if err != nil {
		return err
	}
	sum.mcp, sum.rest, sum.mcpDone = mst, rst, true
	if failures > 0 {
		return fmt.Errorf("%d requests failed in the MCP comparison", failures)
	}
	return nil
}
