package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/miniapp"
)

// The mini-app face: mini-app-mcp's tools and resources on the mi
// databases, with mini-app-mcp's argument rules (unknown keys ignored) and
// answer shapes (compact JSON text, a plain error text with isError true).
// Like every data tool, each call needs a live session and is journaled
// before it runs; the data operations go through engine.Execute.

// miniAppOptions are the server options of the mini-app face.
func (s *Server) miniAppOptions() []mcpserver.ServerOption {
	return []mcpserver.ServerOption{mcpserver.WithResourceCapabilities(false, false)}
}

// miniAppListed reports whether tools/list shows a mini-app tool to the
// caller: its key_type and roles allow the tool's action somewhere.
func (s *Server) miniAppListed(ctx context.Context, name string) bool {
	t := miniapp.Lookup(name)
	if t == nil {
		return false
	}
	p, err := s.principal(ctx)
	return err == nil && (t.Action == 0 || s.eng.CanAnywhere(p, t.Action))
}

// addMiniApp registers the mini-app tools (through add) and resources on
// srv, and the hook that lists each caller's schema resources. With
// sessionArg (the HTTP face) each tool takes the session_id argument too.
func (s *Server) addMiniApp(srv *mcpserver.MCPServer, hooks *mcpserver.Hooks, add func(mcpgo.Tool, mcpserver.ToolHandlerFunc), sessionArg bool) {
	for _, t := range s.mini.Tools() {
		if t.Name == "reload" && !s.dropIn {
			continue // it re-scans the mounted directories of drop-in mode only
		}
		in := t.InputSchema
		if s.dropIn {
			in = withoutParam(in, "schema") // one local control plane: the table names the database
		}
		if sessionArg {
			in = withParam(in, pSession)
		}
		def := mcpgo.NewToolWithRawSchema(t.Name, t.Description, in)
		def.Annotations = mcpgo.ToolAnnotation{
			ReadOnlyHint:    mcpgo.ToBoolPtr(t.ReadOnly),
			DestructiveHint: mcpgo.ToBoolPtr(t.Destructive),
			IdempotentHint:  mcpgo.ToBoolPtr(t.Idempotent),
			OpenWorldHint:   mcpgo.ToBoolPtr(false),
		}
		add(def, s.miniAppHandler(t, in, sessionArg))
	}
	for _, k := range miniapp.SchemaKinds {
		// Other query parameters are allowed too: table is found among them.
		srv.AddResourceTemplate(mcpgo.NewResourceTemplate("schema://"+k.Kind+"{?table,schema,params*}", k.Name, mcpgo.WithTemplateMIMEType(k.MIME)), s.miniAppResource)
	}
	for _, d := range miniapp.DocNames {
		srv.AddResource(mcpgo.NewResource("docs://"+d, "Docs: "+d, mcpgo.WithMIMEType("text/markdown")), s.miniAppResource)
	}
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcpgo.ListResourcesRequest, res *mcpgo.ListResourcesResult) {
		p, err := s.principal(ctx)
		res.Resources = []mcpgo.Resource{}
		if err != nil {
			return
		}
		for _, r := range s.mini.Resources(ctx, p) {
			res.Resources = append(res.Resources, mcpgo.NewResource(r.URI, r.Name, mcpgo.WithMIMEType(r.MIMEType)))
		}
	})
}

func (s *Server) miniAppResource(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	p, err := s.principal(ctx)
	if err != nil {
		return nil, errors.New(fault.As(err).Message)
	}
	mime, text, err := s.mini.ReadResource(ctx, p, req.Params.URI)
	if err != nil {
		var re *miniapp.RPCError
		if errors.As(err, &re) {
			return nil, re // mini-app-mcp's data rides with it (finish.go)
		}
		return nil, errors.New(fault.As(err).Message)
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: mime, Text: text}}, nil
}

func (s *Server) miniAppHandler(t *miniapp.Tool, in json.RawMessage, sessionArg bool) mcpserver.ToolHandlerFunc {
	props := schemaProperties(in)
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		p, err := s.principal(ctx)
		if err != nil {
			return nil, errors.New(fault.As(err).Message)
		}
		raw := rawArguments(req)
		id, err := s.sessionOf(ctx, p, sessionArg, raw)
		if err != nil {
			return gatewayRefusal(err), nil // a session_id argument: the gateway's
		}
		journaled, sess, err := s.sess.Begin(ctx, owner(p), id, t.Name, string(raw))
		if err != nil {
			return miniAppText(fault.As(err).Message, true), nil
		}
		if !s.dropIn {
			// The gateway's rule for arguments: one it does not know of, or
			// one of another JSON type than its schema's, is refused
			// (drop-in mode ignores unknown ones, as mini-app-mcp).
			if err := checkArguments(t.Name, raw, props); err != nil {
				journaled.FinishLater(err, 0, s.journalFailed(t.Name, sess.ID))
				return gatewayRefusal(err), nil
			}
		}
		out := s.mini.Call(ctx, p, t, raw)
		journaled.FinishLater(out.Cause, 0, s.journalFailed(t.Name, sess.ID))
		var ae *miniapp.ArgsError
		if !s.dropIn && errors.As(out.Err, &ae) {
			// A bad argument is the caller's to fix: a result with isError,
			// as the gateway's own tools answer it (drop-in mode answers
			// mini-app-mcp's JSON-RPC error).
			return gatewayRefusal(fault.New(fault.Invalid, "%s", strings.TrimPrefix(ae.Msg, "invalid params: "))), nil
		}
		if errors.As(out.Err, &ae) {
			return nil, &invalidParams{msg: ae.Msg} // -32602, as mini-app-mcp answers it
		}
		if out.Err != nil {
			fe := fault.As(out.Err)
			if fe.Kind == fault.Internal {
				s.log.Error("mcp tool failed", "tool", t.Name, "err", out.Err)
				return nil, errors.New("internal error")
			}
			var re *miniapp.RPCError
			if errors.As(out.Err, &re) {
				return nil, re // reload: mini-app-mcp's data rides with it (finish.go)
			}
			return nil, errors.New(out.Err.Error())
		}
		return miniAppText(out.Text, out.IsError), nil
	}
}

// gatewayRefusal is the gateway's refusal result for err, as its own
// tools answer one: {"code","message"} in the text and structuredContent.
func gatewayRefusal(err error) *mcpgo.CallToolResult {
	fe := fault.As(err)
	body, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{fe.WireCode(), fe.Message})
	return reply{text: body, isError: true}.result()
}

// schemaProperties returns the properties of a tool's input schema, each
// with the JSON types its schema allows (none: any).
func schemaProperties(in json.RawMessage) map[string][]string {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(in, &s)
	props := make(map[string][]string, len(s.Properties))
	for k, p := range s.Properties {
		var one string
		var types []string
		if json.Unmarshal(p.Type, &one) == nil {
			types = []string{one}
		} else {
			_ = json.Unmarshal(p.Type, &types)
		}
		props[k] = types
	}
	return props
}

// checkArguments applies the gateway's rule for arguments to a mini-app
// tool's: each one the tool takes (props), of a JSON type its schema
// allows (null counts as absent). The refusal names the argument.
func checkArguments(tool string, raw []byte, props map[string][]string) error {
	var a map[string]json.RawMessage
	if json.Unmarshal(raw, &a) != nil {
		return nil // not an object: the tool's decoding names it
	}
	names := make([]string, 0, len(a))
	for k := range a {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		types, ok := props[k]
		if !ok {
			known := make([]string, 0, len(props))
			for p := range props {
				known = append(known, p)
			}
			slices.Sort(known)
			return invalid("unknown argument %q: %s takes %s", k, tool, strings.Join(known, ", "))
		}
		got := jsonKind(a[k])
		if len(types) == 0 || got == "null" || slices.Contains(types, got) || (got == "integer" && slices.Contains(types, "number")) {
			continue
		}
		want := make([]string, len(types))
		for i, t := range types {
			want[i] = withArticle(t)
		}
		return invalid("argument %q must be %s, got %s", k, strings.Join(want, " or "), got)
	}
	return nil
}

// jsonKind is the JSON Schema type of a JSON value: integer for a number
// without fraction or exponent.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "null"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		return "number"
	}
	return "integer"
}

func withArticle(jsonType string) string {
	switch jsonType {
	case "object", "array", "integer":
		return "an " + jsonType
	case "boolean":
		return "true or false"
	}
	return "a " + jsonType
}

// miniAppText is mini-app-mcp's result: one text block, no structured
// content.
func miniAppText(text string, isError bool) *mcpgo.CallToolResult {
	return &mcpgo.CallToolResult{
		Content: []mcpgo.Content{mcpgo.TextContent{Type: mcpgo.ContentTypeText, Text: text}},
		IsError: isError,
	}
}

// PrimeMiniApp records the tables the token's caller sees now, so that the
// first reload of a drop-in process reports the changes since its start.
func (s *Server) PrimeMiniApp(ctx context.Context, token string) error {
	p, err := s.ver.Verify(ctx, token)
	if err != nil {
		return err
	}
	return s.mini.Prime(ctx, p)
}
