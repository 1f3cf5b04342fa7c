package main

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes every export
// request and keeps the spans with their resource's service.name.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	service map[string]bool
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				o.service[kv.GetValue().GetStringValue()] = true
			}
		}
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// find waits for a span matching ok.
func (o *otlpReceiver) find(t *testing.T, what string, ok func(*tracepb.Span) bool) *tracepb.Span {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		o.mu.Lock()
		for _, s := range o.spans {
			if ok(s) {
				o.mu.Unlock()
				return s
			}
		}
		o.mu.Unlock()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var names []string
	for _, s := range o.spans {
		names = append(names, s.Name)
	}
	t.Fatalf("no span %s among %v", what, names)
	return nil
}

func attr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// TestTracing: with the OpenTelemetry environment set, serve exports a
// server span per request of each face — continuing a caller's
// traceparent — and a span per data operation under it, with the outcome;
// the request log carries the trace id; a protocol the gateway does not
// export refuses to start.
func TestTracing(t *testing.T) {
	rcv := &otlpReceiver{service: map[string]bool{}}
	collector := httptest.NewServer(rcv)
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "minimal-test")

	dir := t.TempDir()
	s := startServe(t, dir)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	agent := readToken(t, filepath.Join(dir, "agent.token"))
	base := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo/mi/app/"

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest("GET", base+"notes?ps=10&pg=0", nil)
	req.Header.Set("LB-Access-Token", admin)
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("read: %d", resp.StatusCode)
	}
	if code, _, _ := httpDo(t, "GET", base+"nope?ps=1&pg=0", admin, ""); code != 404 {
		t.Fatalf("unknown table: %d", code)
	}
	text, isErr := toolText(t, s.mcpAddr, agent, "", "start_ai_session", map[string]any{"name": "trace", "context": "tracing test"})
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(text), &started); err != nil || isErr {
		t.Fatalf("start: %s", text)
	}
	if text, isErr := toolText(t, s.mcpAddr, agent, started.SessionID, "auto_read_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes",
		"page_size": 2, "page_number": 0, "query": map[string]any{"oy": "title.as"}}); isErr {
		t.Fatalf("mcp read: %s", text)
	}

	hexOf := func(b []byte) string { return hex.EncodeToString(b) }
	rest := rcv.find(t, "of the REST read", func(sp *tracepb.Span) bool {
		return sp.Name == "GET "+autoRoute && hexOf(sp.TraceId) == traceID
	})
	if hexOf(rest.ParentSpanId) != parentID || rest.Kind != tracepb.Span_SPAN_KIND_SERVER ||
		attr(rest, "http.response.status_code").GetIntValue() != 200 || attr(rest, "minimal.face").GetStringValue() != "rest" {
		t.Fatalf("REST span: %v", rest)
	}
	op := rcv.find(t, "of the read operation", func(sp *tracepb.Span) bool { return sp.Name == "read mi/app/notes" && hexOf(sp.TraceId) == traceID })
	if hexOf(op.ParentSpanId) != hexOf(rest.SpanId) || attr(op, "minimal.rows").GetIntValue() != 3 ||
		attr(op, "db.system.name").GetStringValue() != "sqlite" || attr(op, "minimal.identity").GetStringValue() != "admin" ||
		op.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR || op.StartTimeUnixNano < rest.StartTimeUnixNano {
		t.Fatalf("operation span: %v", op)
	}
	missing := rcv.find(t, "of the refused read", func(sp *tracepb.Span) bool { return sp.Name == "read mi/app/nope" })
	if missing.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || missing.Status.GetMessage() != "table not found" ||
		attr(missing, "minimal.outcome").GetStringValue() != "NOT_FOUND" || hexOf(missing.TraceId) == traceID {
		t.Fatalf("refused operation span: %v", missing)
	}
	mcpOp := rcv.find(t, "of the MCP read operation", func(sp *tracepb.Span) bool { return sp.Name == "read mi/app/notes" && hexOf(sp.TraceId) != traceID })
	mcpCall := rcv.find(t, "of the MCP call above it", func(sp *tracepb.Span) bool { return string(sp.SpanId) == string(mcpOp.ParentSpanId) })
	if mcpCall.Name != "POST /minimal/mcp/rpc/v1" || attr(mcpCall, "minimal.face").GetStringValue() != "mcp" || attr(mcpOp, "minimal.rows").GetIntValue() != 2 {
		t.Fatalf("MCP spans: %v under %v", mcpOp, mcpCall)
	}
	if !rcv.service["minimal-test"] {
		t.Errorf("service names %v", rcv.service)
	}
	// The request log line of the REST read carries the caller's trace id
	// (read after the exit: lines wait in the log buffer for a moment).
	s.terminate(t)
	found := false
	for _, line := range strings.Split(s.logText(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "request" && rec["trace_id"] == traceID {
			found = true
		}
	}
	if !found {
		t.Error("no request log line with the caller's trace id")
	}

	// A protocol the gateway does not export refuses to start.
	_, errOut, code := cliEnv(t, []string{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}, "serve", "--data-dir", t.TempDir(), "--rest-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0")
	if code == 0 || !strings.Contains(errOut, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not served") {
		t.Fatalf("grpc protocol: exit %d: %s", code, errOut)
	}
}
