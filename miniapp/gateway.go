package miniapp

import (
	"encoding/json"

	"github.com/littlebitlabs/minimal/engine"
)

// What the gateway's MCP face adds to the mini-app tools (drop-in mode
// keeps mini-app-mcp's tool list as it is): a one-line brief for
// tools/list, the full Description staying for help; the output schema of
// the tools whose results have one shape; and what a caller needs for the
// tool to be listed.

// gatewayTool is the gateway's view of one mini-app tool.
type gatewayTool struct {
	brief string
	// output is the tool's output schema (nil: its result has several
	// shapes, success answers doubling as errors, and it declares none).
	output json.RawMessage
	// key wraps an array result in structuredContent, which is an object.
	key string
	// admin: the tool writes files on the server (requireAdmin); schema:
	// it changes table definitions (the schema action).
	admin, schema bool
	// more are the optional arguments that preview or fine-tune a call,
	// left out of the listing (help describes them; the call takes them).
	more []string
}

// rowRecord is a RowRecord {id, data, created_at, updated_at}; an insert
// the caller cannot read back answers {created}, a restore {id}.
const rowRecord = `{"type":"object","properties":{"id":{"type":"string"},"data":{"type":"object"}}}`

// ObjectSchema is the JSON Schema of an object with props (JSON Schema
// properties, as JSON text) and the required ones: an output schema.
func ObjectSchema(props string, required ...string) json.RawMessage {
	req := ""
	if len(required) > 0 {
		b, _ := json.Marshal(required)
		req = `,"required":` + string(b)
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `}` + req + `}`)
}

var gatewayTools = map[string]gatewayTool{
	"info":            {brief: "A table's fields; without table, the mode.", output: ObjectSchema(`"table":{"type":"string"},"fields":{"type":"array"}`, "table", "fields")},
	"create":          {brief: "Create a row.", output: json.RawMessage(rowRecord)},
	"get":             {brief: "Get a row by id.", more: []string{"fields"}, output: json.RawMessage(rowRecord)},
	"list":            {brief: "List rows (filter, order_by, limit).", more: []string{"fields"}, output: ObjectSchema(`"rows":{"type":"array"}`, "rows"), key: "rows"},
	"update":          {brief: "Update a row (merge or replace).", output: json.RawMessage(rowRecord)},
	"delete":          {brief: "Delete a row by id.", output: ObjectSchema(`"deleted":{"type":"string"}`, "deleted")},
	"reload":          {brief: "Re-scan the mounted directories."},
	"row_restore":     {brief: "Restore a row from its history.", output: json.RawMessage(rowRecord)},
	"content_view":    {brief: "View a text field by line.", more: []string{"view_range"}},
	"content_replace": {brief: "Replace text in a field.", more: []string{"view_range", "replace_all"}},
	"content_insert":  {brief: "Insert lines into a field."},
	"query_aggregate": {brief: "Aggregate rows of tables.", output: ObjectSchema(`"kind":{"type":"string"},"value":{}`, "kind", "value")},
	"alias_create":    {brief: "Store a named query.", more: []string{"description", "params_schema"}, output: ObjectSchema(`"created":{"type":"string"}`, "created")},
	"alias_list":      {brief: "List named queries.", output: ObjectSchema(`"aliases":{"type":"array"}`, "aliases"), key: "aliases"},
	"alias_run":       {brief: "Run a named query.", more: []string{"fields", "order_by", "limit", "offset"}},
	"alias_delete":    {brief: "Delete a named query.", output: ObjectSchema(`"deleted":{"type":"string"}`, "deleted")},
	"schema_create":   {brief: "Create a table.", schema: true, more: []string{"title", "description", "dry_run"}, output: ObjectSchema(`"created":{"type":"string"}`)},
	"schema_update":   {brief: "Replace a table's fields.", schema: true, more: []string{"title", "description", "dry_run"}, output: ObjectSchema(`"updated":{"type":"string"}`)},
	"schema_delete":   {brief: "Remove a table's schema.", schema: true, more: []string{"dry_run"}, output: ObjectSchema(`"deleted":{"type":"string"}`)},
	"schema_batch":    {brief: "Atomic SQL and schema ops on a table.", schema: true, more: []string{"dry_run"}, output: ObjectSchema(`"committed":{"type":"boolean"},"ops_executed":{"type":"integer"}`, "committed", "ops_executed")},
	"data_snapshot":   {brief: "Snapshot tables to files.", admin: true, more: []string{"dry_run", "upload"}, output: ObjectSchema(`"snapshotted":{"type":"array"}`)},
	"row_materialize": {brief: "Write rows to files.", admin: true, more: []string{"concat", "write_mode", "dry_run"}, output: ObjectSchema(`"count":{"type":"integer"},"files":{"type":"array"}`)},
}

// Brief is the tool's one-line description for the gateway's tools/list;
// help gives Description.
func (t *Tool) Brief() string {
	if g, ok := gatewayTools[t.Name]; ok && g.brief != "" {
		return g.brief
	}
	return t.Description
}

// OutputSchema is the JSON Schema of the tool's structured result on the
// gateway, nil for a tool whose successful answers take several shapes
// (content_* answer their edit errors as successes, alias_run rows or an
// aggregate).
func (t *Tool) OutputSchema() json.RawMessage { return gatewayTools[t.Name].output }

// MoreArguments are the optional arguments that preview or fine-tune a
// call (dry_run, upload, view_range…), which the gateway's listing leaves
// to help.
func (t *Tool) MoreArguments() []string { return gatewayTools[t.Name].more }

// StructuredKey names the member that wraps the tool's array result in its
// structured content ("" for an object result).
func (t *Tool) StructuredKey() string { return gatewayTools[t.Name].key }

// Need is what a caller needs for the tool to be listed: the tool's action
// (any action for info) on one of the project's mi databases; the admin
// role for the tools that write files on the server; the schema action for
// those that change table definitions.
func (t *Tool) Need() engine.Need {
	g := gatewayTools[t.Name]
	return engine.Need{Action: t.Action, Type: "mi", Admin: g.admin, Schema: g.schema}
}
