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
// caller: on the gateway, when the caller could succeed with it
// (offer.miniApp); in drop-in mode, when its key_type and roles allow the
// tool's action somewhere.
func (s *Server) miniAppListed(o *offer, name string) bool {
	t := miniapp.Lookup(name)
	if t == nil || !s.miniAppServed(t) {
		return false
	}
	if s.dropIn {
		return t.Action == 0 || s.eng.CanAnywhere(o.p, t.Action)
	}
	return o.miniApp(t)
}

// miniAppServed reports whether this server offers the mini-app tool:
// reload re-scans the mounted directories of drop-in mode only.
func (s *Server) miniAppServed(t *miniapp.Tool) bool { return t.Name != "reload" || s.dropIn }

// miniAppInput is the input schema of a mini-app tool as this server takes
// it: with sessionArg (the HTTP face) the session_id argument too.
func (s *Server) miniAppInput(t *miniapp.Tool, sessionArg bool) json.RawMessage {
	in := t.InputSchema
	if s.dropIn {
		in = withoutParam(in, "schema") // one local control plane: the table names the database
	}
	if sessionArg {
		in = withParam(in, pSession)
	}
	return in
}

// addMiniApp registers the mini-app tools (through add) and resources on
// srv, and the hook that lists each caller's schema resources. With
// sessionArg (the HTTP face) each tool takes the session_id argument too.
func (s *Server) addMiniApp(srv *mcpserver.MCPServer, hooks *mcpserver.Hooks, add func(mcpgo.Tool, mcpserver.ToolHandlerFunc), sessionArg bool) {
	for _, t := range s.mini.Tools() {
		if !s.miniAppServed(t) {
			continue
		}
		in := s.miniAppInput(t, sessionArg)
		var def mcpgo.Tool
		if s.dropIn {
			// mini-app-mcp's entry, as it lists it.
			def = mcpgo.NewToolWithRawSchema(t.Name, t.Description, in)
			def.Annotations = mcpgo.ToolAnnotation{
				ReadOnlyHint:    mcpgo.ToBoolPtr(t.ReadOnly),
				DestructiveHint: mcpgo.ToBoolPtr(t.Destructive),
				IdempotentHint:  mcpgo.ToBoolPtr(t.Idempotent),
				OpenWorldHint:   mcpgo.ToBoolPtr(false),
			}
		} else {
			// The gateway's compact entry (listing.go); help gives the rest.
			def = mcpgo.NewToolWithRawSchema(t.Name, t.Brief(), listedSchema(in, t.MoreArguments()...))
			def.RawOutputSchema = t.OutputSchema()
			def.Annotations = annotations(t.ReadOnly, t.Destructive, t.Idempotent)
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
				s.log.ErrorContext(ctx, "mcp tool failed", "tool", t.Name, "err", out.Err)
				return nil, errors.New("internal error")
			}
			var re *miniapp.RPCError
			if errors.As(out.Err, &re) {
				return nil, re // reload: mini-app-mcp's data rides with it (finish.go)
			}
			return nil, errors.New(out.Err.Error())
		}
		if !s.dropIn && !out.IsError && t.OutputSchema() != nil {
			return miniAppStructured(out.Text, t.StructuredKey()), nil
		}
		return miniAppText(out.Text, out.IsError), nil
	}
}

// miniAppStructured is a mini-app tool's answer on the gateway, for a tool
// with an output schema: the text, and the same JSON, compact (an array
// wrapped under key), as structuredContent.
func miniAppStructured(text, key string) *mcpgo.CallToolResult {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(text)) != nil {
		return miniAppText(text, false)
	}
	r := reply{text: buf.Bytes(), key: key}.result()
	r.Content = []mcpgo.Content{mcpgo.TextContent{Type: mcpgo.ContentTypeText, Text: text}}
	return r
}

// gatewayRefusal is the gateway's refusal result for err, as its own
// tools answer one: {"code","message"} in the text (a refusal has no
// structured content).
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
