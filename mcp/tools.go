package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/custom"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/miniapp"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// tool is one entry of the catalog.
type tool struct {
	name string
	// brief is the one-line description tools/list shows; desc is the
	// whole one, which help gives.
	brief string
	desc  string
	// output is the JSON Schema of the tool's structured result (an array
	// result appears wrapped under its key, since structuredContent is an
	// object).
	output json.RawMessage
	// params are the whole input: schema and strict decoding come from them.
	params []param
	// action is what the caller's key_type must allow for the tool to be
	// listed (0: listed for every caller).
	action query.Action
	// customAPIs: the tool is listed only to a caller who may call a
	// custom API of its project.
	customAPIs bool
	// session: the call needs a live session and is journaled.
	session bool
	// sessionControl marks start_ai_session and end_ai_session, which a
	// stdio process, whose session is implicit, does not offer.
	sessionControl bool
	// sessionArg: the tool takes the session_id argument (pSession), as
	// the session tools do over HTTP.
	sessionArg  bool
	readOnly    bool
	destructive bool
	// example arguments, shown by help and in docs/mcp.md.
	example string
	run     func(s *Server, ctx context.Context, c *call) (answer, error)
}

// call is what a tool runs with.
type call struct {
	p       *auth.Principal
	args    args
	session store.Session
	// tools are the tools of the transport (for help).
	tools []*tool
}

// answer is a tool's result: JSON text, and for an array the key that
// wraps it in structuredContent (which must be an object).
type answer struct {
	text []byte
	key  string
	rows int64
	// buf, when set, is the pooled buffer text lives in (see reply.free).
	buf *bytes.Buffer
}

// definition is the tool as tools/list shows it (listing.go).
func (t *tool) definition() mcpgo.Tool {
	def := mcpgo.NewToolWithRawSchema(t.name, t.brief, listedSchema(schema(t.params)))
	def.RawOutputSchema = t.output
	def.Annotations = annotations(t.readOnly, t.destructive, false)
	return def
}

// outputList is the output schema of an array result of objects,
// wrapped under key.
func outputList(key string) json.RawMessage {
	return miniapp.ObjectSchema(`"`+key+`":{"type":"array"}`, key)
}

// The output schemas several tools share.
var (
	outRowsAffected = miniapp.ObjectSchema(`"rows_affected":{"type":"integer"}`, "rows_affected")
	outInserted     = miniapp.ObjectSchema(`"rows_affected":{"type":"integer"},"data":{"type":"array"}`, "rows_affected")
)

func lookup(tools []*tool, name string) *tool {
	for _, t := range tools {
		if t.name == name {
			return t
		}
	}
	return nil
}

// The arguments several tools share.
var (
	pType   = param{name: "type", kind: kString, required: true, desc: "Database type: pg, ms, ma, ch or mi (see meta_list_databases)."}
	pSchema = param{name: "schema", kind: kString, required: true, desc: "Schema of the database (see meta_list_databases)."}
	pTable  = param{name: "table", kind: kString, required: true, desc: "Table name (see meta_list_tables)."}
	pFilter = param{name: "query", kind: kQuery, desc: `Filters selecting the rows, as REST parameters: {"column": "op.value"}, e.g. {"id": "eq.5"}. Operators: eq ne gt ge lt le like ilike in nin bw is.`}
	pAll    = param{name: "all", kind: kBoolean, desc: "true to act on every row; required when query has no filter."}
)

// catalog is every tool, in the order help lists them (tools/list sorts
// by name).
var catalog = []*tool{
	{
		name: "start_ai_session", sessionControl: true,
		brief:  "Start an AI session for your calls.",
		desc:   "Start an AI session. Returns session_id and expires_at; later calls run in it (your MCP session carries it, or pass it as the session_id argument). It expires after a while without calls.",
		output: miniapp.ObjectSchema(`"session_id":{"type":"string"}`, "session_id"),
		params: []param{
			{name: "name", kind: kString, required: true, desc: `Short name of the work, e.g. "weekly sales report".`},
			{name: "context", kind: kString, required: true, desc: "What the session is for, in a sentence or two."},
		},
		example: `{"name": "notes triage", "context": "Summarise this week's notes for the team"}`,
		run:     (*Server).startSession,
	},
	{
		name: "end_ai_session", session: true, sessionControl: true,
		brief:   "End the AI session.",
		desc:    "End the current AI session; later calls in it are refused.",
		output:  miniapp.ObjectSchema(`"ended_at":{"type":["string","null"]}`, "ended_at"),
		example: `{}`,
		run:     (*Server).endSession,
	},
	{
		name: "help", readOnly: true,
		brief:   "Your tools; with tool, its full entry.",
		desc:    "Without arguments: the tools you can use, with their descriptions. With tool: that tool's full entry (description, input schema with every argument described, output schema, example arguments).",
		output:  miniapp.ObjectSchema(`"tools":{"type":"array"},"input_schema":{"type":"object"}`),
		params:  []param{{name: "tool", kind: kString, desc: "Name of one tool."}},
		example: `{"tool": "auto_read_rows"}`,
		run:     (*Server).help,
	},
	{
		name: "ping", session: true, readOnly: true,
		brief:   "Your identity, roles and session.",
		desc:    "Check the access token and the session: returns your identity, roles and key_type, and when the session expires.",
		output:  miniapp.ObjectSchema(`"identity":{"type":"string"},"roles":{"type":"array"}`, "identity", "roles"),
		example: `{}`,
		run:     (*Server).ping,
	},
	{
		name: "meta_list_databases", session: true, readOnly: true,
		brief:   "Your project's databases.",
		desc:    "List the databases of your project as [{type, schema}].",
		output:  outputList("databases"),
		example: `{}`,
		run:     (*Server).listDatabases,
	},
	{
		name: "meta_list_tables", session: true, readOnly: true,
		brief:   "A database's tables.",
		desc:    "List the tables of one database that you may see, as [{type, schema, table}].",
		output:  outputList("tables"),
		params:  []param{pType, pSchema},
		example: `{"type": "mi", "schema": "app"}`,
		run:     (*Server).listTables,
	},
	{
		name: "meta_describe_table", session: true, readOnly: true,
		brief:   "A table's columns.",
		desc:    "Describe a table: your actions on it, and the columns you may use, each with its database type, kind, nullability, primary key, default, the column a foreign key references (when you may see it) and the actions you may use it in.",
		output:  miniapp.ObjectSchema(`"columns":{"type":"array"}`, "columns"),
		params:  []param{pType, pSchema, pTable},
		example: `{"type": "mi", "schema": "app", "table": "notes"}`,
		run:     (*Server).describeTable,
	},
	listCustomAPIsTool,
	{
		name: "auto_read_rows", session: true, readOnly: true, action: query.Read,
		brief:  "Read a page of rows; query: {col: \"op.value\", oy, fc}.",
		output: miniapp.ObjectSchema(`"data":{"type":"array"},"page":{"type":"object"}`, "data", "page"),
		desc:   `Read one page of a table's rows. query holds REST parameters: oy orders ("id.as", "name.ds"), fc picks columns ("id,name"), every other key filters (column: "op.value"). Without oy the order is the database's. Returns {"data": [rows], "page": {"number", "size"}}.`,
		params: []param{pType, pSchema, pTable,
			{name: "page_size", kind: kInteger, required: true, min: 1, desc: "Rows per page, at least 1, at most the server's limit."},
			{name: "page_number", kind: kInteger, required: true, min: 0, desc: "Page to read, from 0."},
			{name: "query", kind: kQuery, desc: `REST parameters: {"oy": "id.as", "fc": "id,name", "department_id": "gt.6"}. Operators: eq ne gt ge lt le like ilike li rli in nin bw is. An array repeats a parameter.`},
		},
		example: `{"type": "mi", "schema": "app", "table": "notes", "page_size": 10, "page_number": 0, "query": {"oy": "title.as", "fc": "id,title"}}`,
		run:     (*Server).readRows,
	},
	{
		name: "auto_insert_rows", session: true, action: query.Insert,
		brief:  "Insert rows.",
		output: outInserted,
		desc:   "Insert rows into a table, all or none. Send null for a column the database fills itself (an id). Returns rows_affected and the inserted rows.",
		params: []param{pType, pSchema, pTable,
			{name: "rows", kind: kRows, required: true, desc: `Rows to insert, each an object of column to value: [{"title": "Hello", "id": null}].`},
		},
		example: `{"type": "mi", "schema": "app", "table": "notes", "rows": [{"title": "Call Ada", "body": "about the report"}]}`,
		run:     (*Server).insertRows,
	},
	{
		name: "auto_update_rows", session: true, destructive: true, action: query.Update,
		brief:  "Update the rows query selects.",
		output: outRowsAffected,
		desc:   "Set new values on the rows query selects; a filter is required unless all is true. Returns rows_affected.",
		params: []param{pType, pSchema, pTable, pFilter,
			{name: "values", kind: kObject, required: true, desc: `New values, column to value: {"title": "Renamed"}.`},
			pAll,
		},
		example: `{"type": "mi", "schema": "app", "table": "notes", "query": {"title": "eq.Call Ada"}, "values": {"body": "done"}}`,
		run:     (*Server).updateRows,
	},
	{
		name: "auto_delete_rows", session: true, destructive: true, action: query.Delete,
		brief:   "Delete the rows query selects.",
		output:  outRowsAffected,
		desc:    "Delete the rows query selects; a filter is required unless all is true. There is no undo. Returns rows_affected.",
		params:  []param{pType, pSchema, pTable, pFilter, pAll},
		example: `{"type": "mi", "schema": "app", "table": "notes", "query": {"title": "eq.Call Ada"}}`,
		run:     (*Server).deleteRows,
	},
	callAPITool,
}

func timeOrNull(t time.Time, ok bool) *string {
	if !ok {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

func (s *Server) startSession(ctx context.Context, c *call) (answer, error) {
	ss, err := s.sess.StartOn(ctx, owner(c.p), callerFrom(ctx).transport, c.args.str("name"), c.args.str("context"))
	if err != nil {
		return answer{}, err
	}
	return jsonAnswer(struct {
		SessionID string  `json:"session_id"`
		ExpiresAt *string `json:"expires_at"`
	}{ss.ID, timeOrNull(ss.ExpiresAt())}, "")
}

func (s *Server) endSession(ctx context.Context, c *call) (answer, error) {
	ss, err := s.sess.End(ctx, owner(c.p), c.session.ID)
	if err != nil {
		return answer{}, err
	}
	return jsonAnswer(struct {
		SessionID string  `json:"session_id"`
		EndedAt   *string `json:"ended_at"`
	}{ss.ID, timeOrNull(ss.EndedAt, true)}, "")
}

func (s *Server) help(ctx context.Context, c *call) (answer, error) {
	o := s.offerFor(ctx, c.p)
	// The HTTP face's tools take session_id; stdio's do not (nor do they
	// offer start_ai_session).
	sessionArg := lookup(c.tools, "start_ai_session") != nil
	if name := c.args.str("tool"); name != "" {
		type entry struct {
			Name            string          `json:"name"`
			Description     string          `json:"description"`
			SessionRequired bool            `json:"session_required"`
			InputSchema     json.RawMessage `json:"input_schema"`
			OutputSchema    json.RawMessage `json:"output_schema,omitempty"`
			Example         json.RawMessage `json:"example,omitempty"`
			CustomAPIs      *[]custom.Info  `json:"custom_apis,omitempty"`
		}
		if mt := miniapp.Lookup(name); mt != nil && !s.dropIn && s.miniAppListed(o, name) {
			return jsonAnswer(entry{Name: mt.Name, Description: mt.Description, SessionRequired: true,
				InputSchema: s.miniAppInput(mt, sessionArg), OutputSchema: mt.OutputSchema()}, "")
		}
		t := lookup(c.tools, name)
		if t == nil || !o.tool(t) {
			return answer{}, fault.New(fault.NotFound, "no tool %q for you: help without arguments lists the tools you can use", name)
		}
		var apis *[]custom.Info // call_api: the custom APIs the caller may call
		if t.name == callAPIName {
			list, err := s.customInfos(ctx, c)
			if err != nil {
				return answer{}, err
			}
			apis = &list
		}
		return jsonAnswer(entry{t.name, t.desc, t.session, schema(t.params), t.output, json.RawMessage(t.example), apis}, "")
	}
	type entry struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	var list []entry
	for _, t := range c.tools {
		if o.tool(t) {
			list = append(list, entry{t.name, t.desc})
		}
	}
	if !s.dropIn {
		for _, mt := range s.mini.Tools() {
			if s.miniAppListed(o, mt.Name) {
				list = append(list, entry{mt.Name, mt.Description})
			}
		}
	}
	a, err := jsonAnswer(list, "tools")
	a.rows = int64(len(list))
	return a, err
}

func (s *Server) ping(_ context.Context, c *call) (answer, error) {
	return jsonAnswer(struct {
		OK        bool     `json:"ok"`
		Identity  string   `json:"identity"`
		Org       string   `json:"org"`
		Project   string   `json:"project"`
		Space     string   `json:"space"`
		Roles     []string `json:"roles"`
		KeyType   string   `json:"key_type"`
		SessionID string   `json:"session_id"`
		ExpiresAt *string  `json:"expires_at"`
	}{true, c.p.Identity, c.p.Org, c.p.Project, c.p.Space, c.p.Roles, c.p.KeyType.String(), c.session.ID, timeOrNull(c.session.ExpiresAt())}, "")
}

type tableRef struct {
	Type   string `json:"type"`
	Schema string `json:"schema"`
	Table  string `json:"table,omitempty"`
}

func (s *Server) listDatabases(_ context.Context, c *call) (answer, error) {
	dbs := s.eng.Databases(c.p)
	out := make([]tableRef, len(dbs))
	for i, d := range dbs {
		out[i] = tableRef{Type: d[0], Schema: d[1]}
	}
	a, err := jsonAnswer(out, "databases")
	a.rows = int64(len(out))
	return a, err
}

func (s *Server) listTables(ctx context.Context, c *call) (answer, error) {
	typ, schema := c.args.str("type"), c.args.str("schema")
	ts, err := s.eng.Tables(ctx, c.p, typ, schema)
	if err != nil {
		return answer{}, err
	}
	out := make([]tableRef, len(ts))
	for i, t := range ts {
		out[i] = tableRef{Type: typ, Schema: schema, Table: t.Name}
	}
	a, err := jsonAnswer(out, "tables")
	a.rows = int64(len(out))
	return a, err
}

// describeTable answers engine.Describe's document, the same as the REST
// description route answers for the same token.
func (s *Server) describeTable(ctx context.Context, c *call) (answer, error) {
	d, err := s.eng.Describe(ctx, c.p, c.args.str("type"), c.args.str("schema"), c.args.str("table"))
	if err != nil {
		return answer{}, err
	}
	a, err := jsonAnswer(d, "")
	a.rows = int64(len(d.Columns))
	return a, err
}

// jsonAnswer encodes v as the answer's text; key names the member that
// wraps an array in structuredContent.
func jsonAnswer(v any, key string) (answer, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return answer{}, fault.Wrap(fault.Internal, err, "encode answer")
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if string(b) == "null" && key != "" {
		b = []byte("[]")
	}
	return answer{text: b, key: key}, nil
}
