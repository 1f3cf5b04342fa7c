package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/sessions"
)

// handler is a tool's mcp-go handler: invoke, its reply made a result.
func (s *Server) handler(t *tool, tools []*tool) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		r, err := s.invoke(ctx, t, tools, rawArguments(req))
		if err != nil {
			return nil, err
		}
		defer r.free()
		return r.result(), nil
	}
}

// invoke runs one tool call: the session check and the journal entry come
// first (the arguments are recorded before anything else happens:
// committed for a tool that writes, queued for a read-only one), then the strict decoding of the arguments and the tool, then
// the outcome, queued for the journal writer without waiting. raw are the
// arguments as rawArguments gives them (compact JSON text). An error is
// the one the call is answered with as a JSON-RPC error (see refusal).
func (s *Server) invoke(ctx context.Context, t *tool, tools []*tool, raw []byte) (reply, error) {
	p, err := s.principal(ctx)
	if err != nil {
		// Only over stdio: HTTP refused the request before JSON-RPC.
		return reply{}, s.rpcError(t, err)
	}
	c := &call{p: p, tools: tools}
	var journaled *sessions.Call
	if t.session {
		id, err := s.sessionOf(ctx, p, t.sessionArg, raw)
		switch {
		case err == nil && t.readOnly:
			// A read's entry may be written just after it runs
			// (sessions.Manager.BeginRead); its session holds what the
			// check read (store.BeginReadCall): id, owner, times, idle
			// timeout — all a read-only tool uses of it.
			journaled, c.session, err = s.sess.BeginRead(ctx, owner(p), id, t.name, string(raw))
		case err == nil:
			journaled, c.session, err = s.sess.Begin(ctx, owner(p), id, t.name, string(raw))
		}
		if err != nil {
			return s.refusal(t, err)
		}
	}
	a, err := s.run(ctx, t, c, raw)
	if journaled != nil {
		journaled.FinishLater(err, a.rows, s.journalFailed(t.name, c.session.ID))
	}
	if err != nil {
		return s.refusal(t, err)
	}
	return reply{text: a.text, key: a.key, buf: a.buf}, nil
}

// reply is a tool's answer as both faces write it: the JSON text, which is
// also the structured content (an array wrapped in an object under key,
// since structuredContent is an object), and whether it is a refusal. The
// text may live in a pooled buffer, handed back by free.
type reply struct {
	text    []byte
	key     string
	isError bool
	buf     *bytes.Buffer
}

// free hands the reply's buffer back; text is not to be read after.
func (r reply) free() { putBuffer(r.buf) }

// result is the reply as an mcp-go result, holding copies of the text. A
// refusal has no structured content: what a tool's output schema describes
// is its answer, and a client checks structured content against it.
func (r reply) result() *mcpgo.CallToolResult {
	res := &mcpgo.CallToolResult{
		Content: []mcpgo.Content{mcpgo.TextContent{Type: mcpgo.ContentTypeText, Text: string(r.text)}},
		IsError: r.isError,
	}
	switch {
	case r.isError:
	case r.key != "":
		res.StructuredContent = json.RawMessage(`{"` + r.key + `":` + string(r.text) + `}`)
	default:
		res.StructuredContent = json.RawMessage(bytes.Clone(r.text))
	}
	return res
}

// journalFailed logs an outcome the journal could not record.
func (s *Server) journalFailed(tool, session string) func(error) {
	return func(err error) {
		s.log.Error("mcp journal: outcome not recorded", "tool", tool, "session", session, "err", err)
	}
}

// run decodes the arguments and runs the tool; a panic is an internal
// error, journaled like any other.
func (s *Server) run(ctx context.Context, t *tool, c *call, raw []byte) (a answer, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.ErrorContext(ctx, "mcp tool panicked", "tool", t.name, "panic", v)
			a, err = answer{}, fault.New(fault.Internal, "internal error")
		}
	}()
	if c.args, err = decodeArgs(t.name, t.params, raw); err != nil {
		return answer{}, err
	}
	return t.run(s, ctx, c)
}

// rawArguments returns the arguments as the agent sent them (compacted),
// "{}" when there are none or they are not valid JSON.
func rawArguments(req mcpgo.CallToolRequest) []byte {
	raw := []byte(req.Params.RawArguments)
	if len(raw) == 0 && req.Params.Arguments != nil {
		raw, _ = json.Marshal(req.Params.Arguments)
	}
	return compactArguments(raw)
}

// compactArguments returns the JSON text raw compacted, "{}" when it is
// empty or not valid JSON.
func compactArguments(raw []byte) []byte {
	var buf bytes.Buffer
	if len(bytes.TrimSpace(raw)) == 0 || json.Compact(&buf, raw) != nil {
		return []byte("{}")
	}
	return buf.Bytes()
}

// validArguments is rawArguments for arguments already checked to be one
// valid JSON value (the direct road checks the whole body), nil when none
// were sent: without a white-space byte they are compact as they are, so
// they are neither copied nor scanned again.
func validArguments(raw []byte) []byte {
	if len(raw) == 0 || bytes.ContainsAny(raw, " \t\r\n") {
		return compactArguments(raw)
	}
	return raw
}

// refusal shapes an error of a tool. Everything the caller can fix —
// validation, permission, not found, conflict, size, timeout, the session
// rules — is a normal result with isError true and {"code","message"}. An
// internal error or an unavailable database is a JSON-RPC error.
func (s *Server) refusal(t *tool, err error) (reply, error) {
	fe := fault.As(err)
	switch fe.Kind {
	case fault.Internal, fault.Unavailable, fault.Unauthenticated:
		return reply{}, s.rpcError(t, err)
	}
	body, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{fe.WireCode(), fe.Message})
	return reply{text: body, isError: true}, nil
}

// rpcError is the error a handler returns for mcp-go to answer as JSON-RPC
// error -32603: the caller-safe message only, the cause in the log.
func (s *Server) rpcError(t *tool, err error) error {
	fe := fault.As(err)
	if fe.Kind == fault.Internal {
		s.log.Error("mcp tool failed", "tool", t.name, "err", err)
		return errors.New("internal error")
	}
	return errors.New(fe.Message)
}
