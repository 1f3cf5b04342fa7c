package mcp

import (
	"context"
	"encoding/json"
	"slices"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/miniapp"
)

// The gateway's tools/list is small: a tool is listed only to a caller who
// could succeed with it (offered), with a one-line description, its input
// schema reduced to the arguments' names and types (listedSchema) and only the
// annotations that say something (annotations). help {tool} gives the
// whole entry. Drop-in mode lists mini-app-mcp's tools as mini-app-mcp
// does.

// offer decides, for one caller, which tools a listing shows.
type offer struct {
	s   *Server
	ctx context.Context
	p   *auth.Principal
	// apis: whether the caller may call a custom API (looked up once).
	apis, apisKnown bool
	// mi counts the project's mi databases (-1: not counted yet).
	mi int
}

func (s *Server) offerFor(ctx context.Context, p *auth.Principal) *offer {
	return &offer{s: s, ctx: ctx, p: p, mi: -1}
}

// tool reports whether the caller could succeed with a gateway tool: its
// need (engine.Could) and, for the custom API tools, a custom API it may
// call.
func (o *offer) tool(t *tool) bool {
	if !o.s.eng.Could(o.p, engine.Need{Action: t.action}) {
		return false
	}
	if !t.customAPIs {
		return true
	}
	if !o.apisKnown {
		infos, err := o.s.eng.CustomAPIs(o.ctx, o.p, o.p.Org, o.p.Project)
		o.apis, o.apisKnown = err == nil && len(infos) > 0, true
	}
	return o.apis
}

// miniApp reports whether the caller could succeed with a mini-app tool:
// an mi database of its project where it holds the tool's need.
func (o *offer) miniApp(t *miniapp.Tool) bool {
	return o.s.eng.Could(o.p, t.Need())
}

// listedSchema is a tool's input schema as tools/list shows it on the
// gateway: each argument by name with its JSON type (and the x-mcp-header
// annotation a 2026-07-28 client mirrors), and which arguments are
// required. Descriptions, enums, bounds, the shapes inside objects and
// arrays and the refusal of unknown arguments are help's to give (and the
// call's to enforce), as are the arguments named in more. A null an
// optional argument accepts is not listed: null counts as absent.
func listedSchema(in json.RawMessage, more ...string) json.RawMessage {
	var s map[string]any
	if json.Unmarshal(in, &s) != nil {
		return in
	}
	out := map[string]any{"type": "object"}
	if req, ok := s["required"].([]any); ok && len(req) > 0 {
		out["required"] = req
	}
	props := map[string]any{}
	if in, ok := s["properties"].(map[string]any); ok {
		for name, p := range in {
			if slices.Contains(more, name) {
				continue
			}
			pm, _ := p.(map[string]any)
			kept := map[string]any{}
			if t, ok := pm["type"]; ok {
				kept["type"] = withoutNull(t)
			}
			if h, ok := pm["x-mcp-header"]; ok {
				kept["x-mcp-header"] = h
			}
			props[name] = kept
		}
	}
	out["properties"] = props
	b, err := json.Marshal(out)
	if err != nil {
		return in
	}
	return b
}

// withoutNull is a JSON Schema type without "null": a list of types
// without it, a single type as a string.
func withoutNull(t any) any {
	list, ok := t.([]any)
	if !ok {
		return t
	}
	var kept []any
	for _, x := range list {
		if x != "null" {
			kept = append(kept, x)
		}
	}
	switch len(kept) {
	case 0:
		return t
	case 1:
		return kept[0]
	}
	return kept
}

// annotations are a gateway tool's hints, only those that say something:
// readOnlyHint when true; for a tool that writes, destructiveHint (its
// default is true) and idempotentHint when true (both mean nothing for a
// read-only tool). openWorldHint is left out, though no tool reaches past
// the project's databases: a client has no use for it.
func annotations(readOnly, destructive, idempotent bool) mcpgo.ToolAnnotation {
	if readOnly {
		return mcpgo.ToolAnnotation{ReadOnlyHint: mcpgo.ToBoolPtr(true)}
	}
	a := mcpgo.ToolAnnotation{DestructiveHint: mcpgo.ToBoolPtr(destructive)}
	if idempotent {
		a.IdempotentHint = mcpgo.ToBoolPtr(true)
	}
	return a
}

// miniAppDef is a mini-app tool's entry as the caller's listing
// shows them: the schema argument, which names one of the project's mi
// databases, is left out when the project has one at most (help still
// describes it).
func (o *offer) miniAppDef(def mcpgo.Tool) mcpgo.Tool {
	if o.miDatabases() > 1 {
		return def
	}
	var s map[string]any
	if json.Unmarshal(def.RawInputSchema, &s) != nil {
		return def
	}
	props, _ := s["properties"].(map[string]any)
	if _, ok := props["schema"]; !ok {
		return def
	}
	delete(props, "schema")
	if b, err := json.Marshal(s); err == nil {
		def.RawInputSchema = b
	}
	return def
}

// miDatabases counts the mi databases of the caller's project (once).
func (o *offer) miDatabases() int {
	if o.mi < 0 {
		o.mi = 0
		for _, d := range o.s.eng.Databases(o.p) {
			if d[0] == "mi" {
				o.mi++
			}
		}
	}
	return o.mi
}
