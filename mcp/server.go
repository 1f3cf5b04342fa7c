package mcp

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/miniapp"
	"github.com/littlebitlabs/minimal/sessions"
	"github.com/littlebitlabs/minimal/store"
)

// Path is the MCP endpoint.
const Path = "/minimal/mcp/rpc/v1"

// SessionHeader carries the session_id of start_ai_session on every later
// call.
const SessionHeader = "X-Session-Id"

// SupportedVersions are the protocol versions served, newest first, as
// server/discover reports them. 2026-07-28 is stateless; the others use the
// initialize handshake.
var SupportedVersions = []string{
	mcpgo.ProtocolVersion20260728,
	mcpgo.ProtocolVersion20251125,
	mcpgo.ProtocolVersion20250618,
	mcpgo.ProtocolVersion20250326,
}

// Instructions are the server's instructions, sent by server/discover and
// initialize for the agent's system prompt.
const Instructions = `Minimal serves the tables of your organization's databases through one permission pipeline.
1. Call start_ai_session {name, context} first; only start_ai_session and help work without a session. Later calls run in it: your MCP session carries it, or pass its session_id as the session_id argument (or the X-Session-Id header).
2. Find data with meta_list_databases, meta_list_tables {type, schema} and meta_describe_table {type, schema, table}.
3. Read with auto_read_rows (always put an order in query.oy: without it the row order is the database's); write with auto_insert_rows, auto_update_rows and auto_delete_rows.
4. When your project defines custom APIs you may call, meta_list_custom_apis lists them; call them with call_api {uri, method, version, params}.
tools/list shows the tools you can use, each in brief: help {tool} gives its full description and every argument.
Every call is journaled with its arguments before it runs: never put a secret in an argument.
A result with isError true is a refusal: report its code and message (a permission refusal names your roles) and do not retry with other credentials.`

// ImplicitSessionInstructions are the instructions of a transport with one
// implicit session for the process (stdio, and drop-in mode's local HTTP):
// no start_ai_session step, every call is journaled in that session.
const ImplicitSessionInstructions = `Minimal serves the tables of your organization's databases through one permission pipeline.
This process has one AI session for its lifetime: every call is journaled in it with its arguments before it runs, so never put a secret in an argument; no session header is needed.
1. Find data with meta_list_databases, meta_list_tables {type, schema} and meta_describe_table {type, schema, table}; mini-app tables also answer info, list, get and the other mini-app tools.
2. Read with auto_read_rows (always put an order in query.oy: without it the row order is the database's); write with auto_insert_rows, auto_update_rows and auto_delete_rows.
3. When your project defines custom APIs you may call, meta_list_custom_apis lists them; call them with call_api {uri, method, version, params}.
tools/list shows the tools you can use, each in brief: help {tool} gives its full description and every argument.
A result with isError true is a refusal: report its code and message (a permission refusal names your roles) and do not retry with other credentials.`

// DropInInstructions are the instructions of drop-in mode (minimal mcp
// without a token file), which serves mini-app-mcp's tools only: how an
// agent tells the table modes apart, as mini-app-mcp's do.
const DropInInstructions = `Mini-app tables: each table is a schema.yaml and a SQLite file, served by 22 tools (info, list, get, create, update, delete, aliases, aggregates, content edits, schema changes, snapshots).
Mode detection: call info without a table. TABLE_REQUIRED means multi-table mode: pass table on every call (the schema://yaml?table=<name> resources list the tables). An answer means legacy single-table mode: table may be left out.
Then: info (the fields) → list / get → create / update (merge by default, mode "replace" to store data as given) / delete. Read docs://quickstart, docs://tools, docs://errors and docs://filters for the details.
This process has one AI session for its lifetime: every call is journaled in it with its arguments before it runs, so never put a secret in an argument.
A result with isError true is a refusal: its text says why.`

// Deps are what the MCP face talks to.
type Deps struct {
	Engine   *engine.Engine
	Verifier *auth.Verifier
	Store    *store.Store
	// Sessions keeps the AI sessions; its idle timeout is the sessions'.
	Sessions *sessions.Manager
	// MiniApp configures the mini-app tools (drop-in mode's default table
	// and reload).
	MiniApp miniapp.Config
}

// Config bounds what a request may ask for.
type Config struct {
	// MaxBodyBytes caps a request body (default 10 MiB); over it → 413.
	MaxBodyBytes int64
	// MaxPageSize caps auto_read_rows' page_size (default 10000).
	MaxPageSize int64
	// BodyTimeout is the time a request gets to send its body, from the
	// end of its headers (observe.DefaultBodyTimeout when 0); past it →
	// 408 and the connection is closed. A request refused before its body
	// is read closes the connection without reading it
	// (observe.BodyDeadline).
	BodyTimeout time.Duration
	// Version is reported as the server's version.
	Version string
	// Logger receives refusals of the credential layer and internal errors.
	Logger *slog.Logger
}

// Server is the MCP face.
type Server struct {
	eng  *engine.Engine
	ver  *auth.Verifier
	st   *store.Store
	sess *sessions.Manager
	mini *miniapp.Service
	cfg  Config
	log  *slog.Logger
	// dropIn: the mini-app tools serve drop-in mode (mini-app-mcp's rules
	// for arguments and errors; reload offered).
	dropIn bool
	// noDirect sends every request through mcp-go (tests compare the two
	// roads).
	noDirect atomic.Bool
	// directCalls counts the calls the direct road answered.
	directCalls atomic.Int64
}

// New builds the MCP face.
func New(d Deps, cfg Config) *Server {
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 10 << 20
	}
	if cfg.MaxPageSize == 0 {
		cfg.MaxPageSize = 10000
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Server{eng: d.Engine, ver: d.Verifier, st: d.Store, sess: d.Sessions, cfg: cfg, log: cfg.Logger,
		mini: miniapp.New(d.Engine, d.Store, d.MiniApp), dropIn: d.MiniApp.Mounted}
}

// build makes the mcp-go server with the tools of a transport: over stdio
// the session is implicit, so start_ai_session and end_ai_session are not
// offered. It returns the tools by name too, for the direct road of the
// HTTP face (fast.go).
func (s *Server) build(stdio bool) (*mcpserver.MCPServer, *roads) {
	var tools []*tool
	for _, t := range catalog {
		switch {
		case s.dropIn && (stdio || !t.sessionControl):
			// Drop-in mode offers mini-app-mcp's 22 tools only (and, on a
			// face without an implicit session, the session tools).
			continue
		case stdio && t.sessionControl:
			continue
		case !stdio && t.session:
			// Over HTTP the session may come as an argument too.
			cp := *t
			cp.params = append(slices.Clip(t.params), pSession)
			cp.sessionArg = true
			t = &cp
		}
		tools = append(tools, t)
	}
	instructions := Instructions
	switch {
	case s.dropIn:
		instructions = DropInInstructions
	case stdio:
		instructions = ImplicitSessionInstructions
	}
	hooks := &mcpserver.Hooks{}
	hooks.AddOnError(recordCode)
	// The handshake answers with a version it serves: one it does not know
	// of is answered with the newest handshake version.
	hooks.AddBeforeInitialize(func(_ context.Context, _ any, req *mcpgo.InitializeRequest) {
		if v := req.Params.ProtocolVersion; v != "" && !slices.Contains(SupportedVersions, v) {
			req.Params.ProtocolVersion = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
			if s.dropIn {
				// mini-app-mcp answers an older client (2024-11-05) with
				// the one version it speaks.
				req.Params.ProtocolVersion = mcpgo.ProtocolVersion20250326
			}
		}
	})
	// tools/list shows what the caller could succeed with (listing.go).
	// Calls are not filtered: a tool ruled out is refused by the permission
	// pipeline, with the same message as on REST.
	rd := &roads{handlers: map[string]mcpserver.ToolHandlerFunc{}, invokers: map[string]invoker{}, headed: map[string]*mcpgo.Tool{},
		list: func(ctx context.Context, defs []mcpgo.Tool) []mcpgo.Tool { return s.listed(ctx, tools, defs) }}
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcpgo.ListToolsRequest, res *mcpgo.ListToolsResult) {
		res.Tools = rd.list(ctx, res.Tools)
	})
	srv := mcpserver.NewMCPServer(serverName, s.cfg.Version, append([]mcpserver.ServerOption{
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithInstructions(instructions),
		mcpserver.WithHooks(hooks),
	}, s.miniAppOptions()...)...)
	add := func(def mcpgo.Tool, h mcpserver.ToolHandlerFunc) {
		h = textOnlyBefore20250618(h)
		srv.AddTool(def, h)
		rd.handlers[def.Name] = h
		i, _ := slices.BinarySearchFunc(rd.defs, def.Name, func(d mcpgo.Tool, name string) int { return strings.Compare(d.Name, name) })
		rd.defs = slices.Insert(rd.defs, i, def)
		if mcpgo.ExtractParamHeaderBindings(&def) != nil {
			rd.headed[def.Name] = &def
		}
	}
	for _, t := range tools {
		add(t.definition(), s.handler(t, tools))
		rd.invokers[t.name] = func(ctx context.Context, raw []byte) (reply, error) {
			return s.invoke(ctx, t, tools, raw)
		}
	}
	s.addMiniApp(srv, hooks, add, !stdio)
	return srv, rd
}

// roads are the tools of a transport by name, for the direct road: the
// gateway's own tools as invokers, whose replies are written without an
// mcp-go result in between, and every tool (the mini-app ones too) as its
// mcp-go handler.
type roads struct {
	handlers map[string]mcpserver.ToolHandlerFunc
	invokers map[string]invoker
	// headed are the tools with an argument mirrored in a header
	// (x-mcp-header: session_id).
	headed map[string]*mcpgo.Tool
	// defs are the definitions of every tool, sorted by name as mcp-go
	// lists them; list keeps those a caller is shown (Server.listed).
	defs []mcpgo.Tool
	list func(context.Context, []mcpgo.Tool) []mcpgo.Tool
}

// listed are the tool definitions among defs a caller is shown in
// tools/list (listing.go), the mini-app ones as the gateway lists them.
func (s *Server) listed(ctx context.Context, tools []*tool, defs []mcpgo.Tool) []mcpgo.Tool {
	kept := make([]mcpgo.Tool, 0, len(defs)) // never nil: "tools" must be an array
	p, err := s.principal(ctx)
	if err != nil {
		return kept
	}
	o := s.offerFor(ctx, p)
	for _, def := range defs {
		switch t := lookup(tools, def.Name); {
		case t != nil && o.tool(t):
			kept = append(kept, def)
		case t == nil && s.miniAppListed(o, def.Name) && !s.dropIn:
			kept = append(kept, o.miniAppDef(def))
		case t == nil && s.miniAppListed(o, def.Name):
			kept = append(kept, def)
		}
	}
	return kept
}

// serverName is the server's name in initialize and in the _meta of
// 2026-07-28 results.
const serverName = "minimal"

// readsStructured reports whether the client of a call reads a result's
// structuredContent: protocol 2025-06-18 and later. A 2025-03-26 client
// (over HTTP: one that sends no MCP-Protocol-Version; over stdio: the
// version initialize agreed) knows only content, so it gets the text
// alone, half the bytes of a page of rows.
func readsStructured(ctx context.Context) bool {
	v := callerFrom(ctx).version
	if v == "" {
		v = mcpserver.RequestProtocolVersion(ctx)
	}
	return v != mcpgo.ProtocolVersion20250326 && v != "2024-11-05"
}

// textOnlyBefore20250618 wraps a tool handler so that its results carry
// no structuredContent for a client that does not read it
// (readsStructured).
func textOnlyBefore20250618(h mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res, err := h(ctx, req)
		if res != nil && !readsStructured(ctx) {
			res.StructuredContent, res.RawStructuredContent = nil, nil
		}
		return res, err
	}
}

// invoker runs a gateway tool (Server.invoke) with its arguments as
// rawArguments gives them.
type invoker func(context.Context, []byte) (reply, error)

// caller is who a request comes from, put in the request context by the
// transport: over HTTP the principal the credential layer verified, over
// stdio the token to verify again on every call; and the session.
type caller struct {
	p       *auth.Principal
	token   string
	session string
	// transport is the handshake era's Mcp-Session-Id, checked to be the
	// principal's (transport.go).
	transport string
	// version is the protocol version of an HTTP request: its
	// MCP-Protocol-Version, 2025-03-26 when it sends none. Over stdio it is
	// "" (the version initialize agreed is mcp-go's).
	version string
	// param is the Mcp-Param-Session-Id header, when paramSet.
	param    string
	paramSet bool
	// codes collects the JSON-RPC error codes of mcp-go's answers to put
	// right (finish.go); nil on the direct road.
	codes *rpcCodes
	// local is the identity of a single-user process (drop-in mode's
	// HTTP face), for whom initialize mints transport session ids.
	local *auth.Principal
}

type callerKey struct{}

func withCaller(ctx context.Context, c *caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerFrom(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	if c == nil {
		return &caller{}
	}
	return c
}

// principal returns the caller's principal. Over stdio the token is checked
// again, so a revoked token or MCP switched off stops a running process.
func (s *Server) principal(ctx context.Context) (*auth.Principal, error) {
	c := callerFrom(ctx)
	if c.p != nil {
		return c.p, nil
	}
	if c.token == "" {
		return nil, fault.New(fault.Unauthenticated, "missing access token")
	}
	return s.admit(ctx, c.token)
}

// admit is the credential layer: a valid token of an identity of kind mcp
// whose space has MCP switched on.
func (s *Server) admit(ctx context.Context, raw string) (*auth.Principal, error) {
	p, err := s.ver.Verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	if p.Kind != store.KindMCP {
		return nil, fault.New(fault.Forbidden, "identity %q is of kind %s: the MCP endpoint serves identities of kind mcp only", p.Identity, p.Kind)
	}
	sp, err := s.ver.Space(ctx, p.SpaceID)
	if err != nil {
		return nil, err
	}
	if !sp.MCPEnabled {
		return nil, fault.New(fault.Forbidden, "MCP is switched off for space %q of project %q", sp.Name, p.Project)
	}
	return p, nil
}

func owner(p *auth.Principal) sessions.Owner {
	return sessions.Owner{ProjectID: p.ProjectID, IdentityID: p.IdentityID}
}
