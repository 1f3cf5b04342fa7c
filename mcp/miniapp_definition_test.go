package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/mcp"
	"github.com/littlebitlabs/minimal/store"
)

// TestDefinitionReadGates: on the gateway, a table's schema.yaml reaches
// the mini-app face only through the engine (Definition: the read right
// on the table, audited), and query_aggregate reads each source through
// Execute. Over real HTTP, a caller who sees notes but may not read it is
// refused by info, by the schema:// resources and by query_aggregate with
// the pipeline's message, and every attempt is in the audit log; an admin
// reads the definition, audited as a read.
func TestDefinitionReadGates(t *testing.T) {
	g, sid, _ := schemaFixture(t)
	ctx := context.Background()
	pol := store.Policy{
		Templates: []store.Template{{Name: "no-read", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"read"}, Effect: store.EffectDeny}}}},
		Bindings:  []store.Binding{{Role: "unread", Templates: []string{"no-read"}}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	_, tok := g.identity("unread", "mcp", []string{"admin", "unread"}, nil, auth.MintOptions{})
	usid := g.start(tok)
	refusal := fmt.Sprintf("insufficient permissions for this operation on this table, got [%s]", "admin, unread")
	// The policy reaches the engine within its poll interval.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		text, isErr := g.miniToolAs(tok, usid, "info", map[string]any{"table": "notes"})
		if isErr && text == refusal {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("info before the policy: %v %s", isErr, text)
		}
	}
	const notes = "mi/app/notes"
	audits := func(who, action, outcome string) int {
		t.Helper()
		es, err := g.st.AuditLog(ctx, g.proj.ID, store.AuditFilter{Identity: who, Object: notes, Action: action, Limit: store.MaxAuditLimit})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range es {
			if e.Outcome == outcome && (outcome == "ok" || e.Message == refusal) {
				n++
			}
		}
		return n
	}
	// waitAudits waits until who has n audit entries of the outcome.
	waitAudits := func(who, action, outcome string, n int) {
		t.Helper()
		got := 0
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if got = audits(who, action, outcome); got >= n || time.Now().After(deadline) {
				break
			}
		}
		if got != n {
			t.Fatalf("audit of %s %s %s: %d entries, want %d", who, action, outcome, got, n)
		}
	}
	// The refused calls of the wait are audited (asynchronously) too.
	seen := 0
	for deadline := time.Now().Add(5 * time.Second); seen == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		seen = audits("unread", "read", "FORBIDDEN")
	}
	if seen == 0 {
		t.Fatal("the refused info calls are not audited")
	}
	time.Sleep(100 * time.Millisecond)
	seen = audits("unread", "read", "FORBIDDEN")

	g.refused(tok, usid, "info", map[string]any{"table": "notes"}, refusal)
	seen++
	waitAudits("unread", "read", "FORBIDDEN", seen)

	for _, uri := range []string{"schema://yaml?table=notes", "schema://json?table=notes", "schema://json-schema?table=notes"} {
		h := map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": "resources/read", "Mcp-Name": uri,
			"LB-Access-Token": tok, mcp.SessionHeader: usid}
		r := g.post(h, rpcBody("resources/read", map[string]any{"uri": uri, "_meta": meta()}))
		var m struct {
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(r.raw, &m); err != nil || m.Error == nil || !strings.Contains(m.Error.Message, refusal) {
			t.Fatalf("resources/read %s: %d %s, want the refusal", uri, r.status, r.raw)
		}
		seen++
		waitAudits("unread", "read", "FORBIDDEN", seen)
	}

	agg := map[string]any{"sources": map[string]any{"kind": "single", "value": "notes"}, "aggregator": map[string]any{"kind": "count"}}
	g.refused(tok, usid, "query_aggregate", agg, refusal)
	seen++
	waitAudits("unread", "read", "FORBIDDEN", seen)

	// The admin reads the definition: one read of notes audited per call.
	before := audits("agent", "read", "ok")
	var info struct{ Table string }
	if err := json.Unmarshal([]byte(g.must(g.agent, sid, "info", map[string]any{"table": "notes"})), &info); err != nil || info.Table != "notes" {
		t.Fatalf("info: %v %+v", err, info)
	}
	waitAudits("agent", "read", "ok", before+1)
}
