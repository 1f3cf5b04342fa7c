package miniapp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
)

// Resource is one entry of resources/list.
type Resource struct {
	URI, Name, MIMEType string
}

// SchemaKinds are the schema:// resources of a table, with their types.
var SchemaKinds = []struct{ Kind, Name, MIME string }{
	{"yaml", "Schema YAML", "application/yaml"},
	{"json", "Schema JSON", "application/json"},
	{"json-schema", "JSON Schema", "application/schema+json"},
}

// DocNames are the docs:// resources.
var DocNames = []string{"quickstart", "tools", "errors", "filters", "order-by"}

// Resources lists the schema resources of every table the caller may see
// (sorted by table) and the docs.
func (s *Service) Resources(ctx context.Context, p *auth.Principal) []Resource {
	var out []Resource
	ts, _ := s.tables(ctx, p)
	for _, t := range ts {
		for _, k := range SchemaKinds {
			out = append(out, Resource{URI: "schema://" + k.Kind + "?table=" + url.QueryEscape(t.table), Name: k.Name + " (" + t.table + ")", MIMEType: k.MIME})
		}
	}
	for _, d := range DocNames {
		out = append(out, Resource{URI: "docs://" + d, Name: "Docs: " + d, MIMEType: "text/markdown"})
	}
	return out
}

// ReadResource answers resources/read: the MIME type and text. A failure
// is an *RPCError (JSON-RPC error with the contract's code).
func (s *Service) ReadResource(ctx context.Context, p *auth.Principal, uri string) (string, string, error) {
	if name, ok := strings.CutPrefix(uri, "docs://"); ok {
		if d, ok := docs[name]; ok {
			return "text/markdown", d, nil
		}
		return "", "", fault.New(fault.NotFound, "resource not found: %s", uri)
	}
	rest, ok := strings.CutPrefix(uri, "schema://")
	if !ok {
		return "", "", fault.New(fault.NotFound, "resource not found: %s", uri)
	}
	kind, q, _ := strings.Cut(rest, "?")
	vals, _ := url.ParseQuery(q)
	t, err := s.resolve(ctx, p, vals.Get("table"), vals.Get("schema"))
	if err == nil {
		// Read from disk on each request, as mini-app-mcp reads it.
		err = s.described(ctx, p, t)
	}
	if err != nil {
		return "", "", &RPCError{asError(err, vals.Get("table"))}
	}
	switch kind {
	case "yaml":
		y, err := t.visibleYAML()
		if err != nil {
			return "", "", err
		}
		return "application/yaml", y, nil
	case "json":
		b, _ := json.MarshalIndent(infoDoc(t), "", "  ")
		return "application/json", string(b), nil
	case "json-schema":
		props := map[string]any{}
		req := []string{}
		for _, f := range t.fields() {
			props[f.Name] = map[string]any{"type": f.Type}
			if f.Required {
				req = append(req, f.Name)
			}
		}
		b, _ := json.MarshalIndent(map[string]any{
			"$schema": "http://json-schema.org/draft-07/schema#", "title": t.info.Table, "type": "object",
			"properties": props, "required": req, "additionalProperties": true,
		}, "", "  ")
		return "application/schema+json", string(b), nil
	}
	return "", "", fault.New(fault.NotFound, "resource not found: %s", uri)
}

var docs = map[string]string{
	"quickstart": `# Minimal — mini-app tables, quickstart

You are talking to Minimal, a data-access gateway that serves mini-app tables
(a schema.yaml plus a SQLite file per table) with the mini-app-mcp tool set.
Every call passes the gateway's permission pipeline: a refusal names your roles.

1. Mode detection: call ` + "`info`" + ` without table.
   - TABLE_REQUIRED: multi-table mode. Pass ` + "`table`" + ` on every call; the
     table names are in the ` + "`schema://yaml?table=<t>`" + ` resource URIs.
   - A schema: legacy single-table mode (MINI_APP_SCHEMA + MINI_APP_DB). The
     ` + "`table`" + ` argument may be left out everywhere.
2. ` + "`info {table}`" + ` shows the fields; ` + "`list {table, limit}`" + ` the newest rows;
   ` + "`get {table, id}`" + ` one row (a unique id prefix is enough).
3. Write with ` + "`create {table, data}`" + `, ` + "`update {table, id, data}`" + ` (merge by
   default: absent keys kept, null removes an optional key; ` + "`mode:\"replace\"`" + `
   stores data as given) and ` + "`delete {table, id}`" + `.
4. Edit long text with ` + "`content_view`" + `, ` + "`content_replace`" + `, ` + "`content_insert`" + `;
   undo with ` + "`row_restore {table, id, at_unix_secs}`" + `.

On the gateway, ` + "`schema`" + ` (optional) picks the mi database; without it the
first of your project's mi databases (by name) that has the table is used.
See docs://tools, docs://errors, docs://filters and docs://order-by.
`,
	"tools": `# Tools

| tool | arguments | answer |
|---|---|---|
| info | table? | the schema, pretty JSON |
| create | data, table? | RowRecord {id, data, created_at, updated_at} (Unix seconds) |
| get | id, table?, fields? | RowRecord |
| list | table?, limit?=100 (max 1000), offset?, filter?, fields?, order_by? | [RowRecord], newest first by default |
| update | id, data, table?, mode? merge/replace | RowRecord |
| delete | id, table? | {"deleted": id} |
| reload | — | {"mounted", "added", "removed"} |
| schema_create | table, scope project/user, fields [{name, type, required?, description?}], title?, description?, dry_run? | {"created", "schema_path", "scope"} |
| schema_update | same as schema_create (fields replace the old ones) | {"updated", "schema_path", "scope", "fields_added", "fields_removed", "fields_type_changed"} |
| schema_delete | table, scope, dry_run? | {"deleted", "schema_path_removed", "db_file_retained", "scope"} |
| schema_batch | ops [query / schema_create / schema_update / schema_delete / replace], dry_run? (query and replace: the schema action and unscoped CRUD rights) | {"committed", "ops_executed", "yaml_writes", "backups_written", "registry_rebuilt"} |
| data_snapshot | table?, scope? project/user, dry_run?, upload? | {"snapshotted", "purged"} (role admin) |
| row_materialize | selector by_id/by_filter, fields, format raw/markdown/json/yaml, dest (absolute), concat?, write_mode?, dry_run?, table? | {"count", "files":[{path, bytes, sha256, row_id}]} (role admin) |
| alias_create | name, table? or sources?, filter or filter_template, params_schema?, aggregator?, limit?, description?, fields?, order_by?, scope? | {"created"} |
| alias_list | table? | [{name, sources, aggregator, filter, default_limit, description, params_schema, fields, order_by, scope}] |
| alias_run | name, limit?, offset?, params?, fields?, order_by? | [RowRecord] or an aggregate result |
| alias_delete | name | {"deleted"} |
| query_aggregate | sources {kind single/multi, value}, aggregator, filter? | {"kind": "count"/"value"/"groups", "value"} |
| row_restore | id (full), at_unix_secs, table? | RowRecord |
| content_view | id, field, view_range?, table? | {"content"} numbered lines |
| content_replace | id, field, old_str, new_str, view_range?, replace_all?, table? | {"matches"} |
| content_insert | id, field, line, content, table? | {"line", "inserted_lines"} |

Every tool also takes ` + "`schema`" + ` on the gateway. fields is
{"mode":"all"} or {"mode":"list","fields":[…]}.
`,
	"errors": `# Errors

A failed tool answers isError true with a plain text such as
` + "`validation error on field 'title': required field missing`" + `,
` + "`row not found: <id>`" + `, ` + "`table not found: <t>`" + `,
` + "`table argument is required in multi-table mode`" + `,
` + "`ambiguous id prefix '<p>': <n> candidates`" + `, or a permission refusal
` + "`insufficient permissions for this operation on this table, got [<roles>]`" + `.
content_* tools answer their edit errors as a normal result
{"error": TYPE_ERROR|STRING_NOT_FOUND|AMBIGUOUS|OUT_OF_RANGE|VALIDATION|ERROR, "data": {...}}.
reload and resource reads fail as JSON-RPC errors.
`,
	"filters": `# Filters (ListFilter)

- {"type":"eq","field":"f","value":v} — v a scalar of the field's type
- {"type":"in","field":"f","values":[…]} — non-empty
- {"type":"like","field":"f","pattern":"%abc%"} — string fields, ASCII case-insensitive
- {"type":"array_contains","field":"f","value":v} — array fields, v any non-null scalar
- {"type":"array_not_contains","field":"f","value":v} — also matches rows where f is absent or null
- {"type":"and"|"or","filters":[…]} — non-empty, nested freely

Only schema fields you may see are accepted.
`,
	"order-by": `# order_by

[{"field":"f","direction":"asc"|"desc"}, …], applied left to right, as
json_extract(data, '$.f') (nulls first when ascending). Served by mini-app-mcp's
drop-in (minimal mcp): both members are required and field may be any key of
the stored rows. On the gateway: direction defaults to asc and fields must be
schema fields you may see (or id, created_at, updated_at).
Without order_by, list returns the newest rows first (created_at desc).
`,
}

// visibleYAML is the table's schema.yaml as the caller may see it: the
// file as it is when every field is visible, else without the entries of
// fields the caller may not read (as info and schema://json leave them
// out).
func (t *target) visibleYAML() (string, error) {
	if len(t.fields()) == len(t.info.Fields) {
		return string(t.info.YAML), nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(t.info.YAML, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", schemaErr(t.table)
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "fields" || top.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		seq := top.Content[i+1]
		kept := seq.Content[:0]
		for _, f := range seq.Content {
			if _, ok := t.field(yamlName(f)); ok {
				kept = append(kept, f)
			}
		}
		seq.Content = kept
		if len(kept) == 0 {
			seq.Style = yaml.FlowStyle // fields: []
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", fault.Wrap(fault.Internal, err, "encode schema.yaml")
	}
	if err := enc.Close(); err != nil {
		return "", fault.Wrap(fault.Internal, err, "encode schema.yaml")
	}
	return buf.String(), nil
}

// yamlName is the name of one entry of a schema.yaml's fields, or "".
func yamlName(f *yaml.Node) string {
	if f.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(f.Content); i += 2 {
		if f.Content[i].Value == "name" {
			return f.Content[i+1].Value
		}
	}
	return ""
}
