package miniapp

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// The tools as mini-app-mcp lists them: each input schema gets the tagged
// variants of its structured arguments (ListFilter, FieldSelector,
// order_by, sources, aggregator, row selector, batch ops), every optional
// argument also accepts null (as an Option<T> does), and each description
// says how the table is chosen and which error codes the tool answers. The
// schemas are written once here, for all the tools, and applied when the
// tool set is first read (listed).

var finishMu sync.Mutex

// finishedTools returns the tool set with its input schemas and
// descriptions finished (each tool once: the package's init functions
// add tools after a first lookup).
func finishedTools() []*Tool {
	finishMu.Lock()
	defer finishMu.Unlock()
	for _, t := range toolSet {
		if !t.finished {
			t.InputSchema = wireSchema(t.InputSchema)
			t.Description = wireDescription(t)
			t.finished = true
		}
	}
	return toolSet
}

// listFilterDef is ListFilter: one variant per type, and/or recursive.
const listFilterDef = `{"type":"object","description":"ListFilter, tagged by type.","oneOf":[` +
	`{"type":"object","properties":{"type":{"type":"string","const":"eq"},"field":{"type":"string"},"value":{"description":"A string, number or boolean of the field's type."}},"required":["type","field","value"]},` +
	`{"type":"object","properties":{"type":{"type":"string","const":"in"},"field":{"type":"string"},"values":{"type":"array","minItems":1}},"required":["type","field","values"]},` +
	`{"type":"object","properties":{"type":{"type":"string","const":"like"},"field":{"type":"string","description":"A string field."},"pattern":{"type":"string","description":"SQL LIKE pattern: % any run, _ one character."}},"required":["type","field","pattern"]},` +
	`{"type":"object","properties":{"type":{"type":"string","const":"array_contains"},"field":{"type":"string","description":"An array field."},"value":{}},"required":["type","field","value"]},` +
	`{"type":"object","properties":{"type":{"type":"string","const":"array_not_contains"},"field":{"type":"string","description":"An array field."},"value":{}},"required":["type","field","value"]},` +
	`{"type":"object","properties":{"type":{"type":"string","const":"or"},"filters":{"type":"array","minItems":1,"items":{"$ref":"#/$defs/ListFilter"}}},"required":["type","filters"]},` +
	`{"type":"object","properties":{"type":{"type":"string","const":"and"},"filters":{"type":"array","minItems":1,"items":{"$ref":"#/$defs/ListFilter"}}},"required":["type","filters"]}]}`

// scalarAggregator is an aggregator without groups.
const scalarAggregator = `{"type":"object","properties":{"kind":{"type":"string","const":"count"}},"required":["kind"]},` +
	`{"type":"object","properties":{"kind":{"type":"string","enum":["sum","avg","min","max"]},"field":{"type":"string"}},"required":["kind","field"]}`

// wireProps are the schemas of the structured arguments, by name.
var wireProps = map[string]string{
	"filter": `{"type":"object","description":"ListFilter: {\"type\":\"eq\",\"field\":\"status\",\"value\":\"open\"}, in, like, array_contains, array_not_contains, or, and (see docs://filters).","oneOf":[{"$ref":"#/$defs/ListFilter"}]}`,
	"fields": `{"type":"object","description":"FieldSelector: {\"mode\":\"all\"} or {\"mode\":\"list\",\"fields\":[…]}; id, created_at and updated_at are always kept.","oneOf":[` +
		`{"type":"object","properties":{"mode":{"type":"string","const":"all"}},"required":["mode"]},` +
		`{"type":"object","properties":{"mode":{"type":"string","const":"list"},"fields":{"type":"array","items":{"type":"string"}}},"required":["mode","fields"]}]}`,
	"order_by": `{"type":"array","description":"Sort keys, left to right; replaces the default newest-first order.","items":{"type":"object","properties":{"field":{"type":"string"},"direction":{"type":"string","enum":["asc","desc"]}},"required":["field","direction"]}}`,
	"sources": `{"type":"object","description":"The tables: one, several (at most 10), or a glob pattern (aliases only).","oneOf":[` +
		`{"type":"object","properties":{"kind":{"type":"string","const":"single"},"value":{"type":"string"}},"required":["kind","value"]},` +
		`{"type":"object","properties":{"kind":{"type":"string","const":"multi"},"value":{"type":"array","items":{"type":"string"}}},"required":["kind","value"]},` +
		`{"type":"object","properties":{"kind":{"type":"string","const":"pattern"},"value":{"type":"string"}},"required":["kind","value"]}]}`,
	"aggregator": `{"type":"object","description":"count, sum/avg/min/max of a field, or group_by a field with an optional having filter and inner scalar aggregator.","oneOf":[` + scalarAggregator + `,` +
		`{"type":"object","properties":{"kind":{"type":"string","const":"group_by"},"by_field":{"type":"string"},"having":{"$ref":"#/$defs/ListFilter"},"inner":{"type":"object","oneOf":[` + scalarAggregator + `]}},"required":["kind","by_field"]}]}`,
	"selector": `{"type":"object","description":"Which rows: one by id, or those a filter matches (newest first).","oneOf":[` +
		`{"type":"object","properties":{"type":{"type":"string","const":"by_id"},"id":{"type":"string"}},"required":["type","id"]},` +
		`{"type":"object","properties":{"type":{"type":"string","const":"by_filter"},"filter":{"$ref":"#/$defs/ListFilter"},"limit":{"type":["integer","null"],"minimum":0},"offset":{"type":["integer","null"],"minimum":0}},"required":["type","filter"]}]}`,
	"ops": `{"type":"array","description":"The ops, all on one table.","items":{"type":"object","oneOf":[` +
		`{"type":"object","properties":{"op":{"type":"string","const":"query"},"table":{"type":"string"},"sql":{"type":"string"},"params":{"type":["array","null"],"description":"Bound as text."}},"required":["op","table","sql"]},` +
		`{"type":"object","properties":{"op":{"type":"string","enum":["schema_create","schema_update"]},"table":{"type":"string"},"scope":{"type":"string","enum":["project","user"]},"title":{"type":["string","null"]},"description":{"type":["string","null"]},"fields":{"type":"array","items":{"type":"object"}}},"required":["op","table","scope","fields"]},` +
		`{"type":"object","properties":{"op":{"type":"string","const":"schema_delete"},"table":{"type":"string"},"scope":{"type":"string","enum":["project","user"]}},"required":["op","table","scope"]},` +
		`{"type":"object","properties":{"op":{"type":"string","const":"replace"},"table":{"type":"string"},"match":{"type":"object","additionalProperties":{"type":"string"}},"items":{"type":"array","items":{"type":"object"}}},"required":["op","table","match","items"]}]}}`,
	"view_range": `{"type":"array","description":"[start, end]: lines, 1-based, both included.","items":{"type":"integer","minimum":0},"minItems":2,"maxItems":2}`,
}

// wireSchema finishes one input schema (see above).
func wireSchema(in json.RawMessage) json.RawMessage {
	var s map[string]json.RawMessage
	var props map[string]json.RawMessage
	var required []string
	if json.Unmarshal(in, &s) != nil || json.Unmarshal(s["properties"], &props) != nil {
		return in
	}
	_ = json.Unmarshal(s["required"], &required)
	refs := false
	for name, raw := range props {
		// (schema_create's fields is the field list, not a FieldSelector.)
		if w, ok := wireProps[name]; ok && (name != "fields" || topType(raw) == "object") {
			raw = json.RawMessage(w)
		}
		if name == "table" && !slices.Contains(required, name) {
			raw = json.RawMessage(`{"type":"string","description":"The table. Required in multi-table mode (TABLE_REQUIRED without it; TABLE_NOT_FOUND for a name not mounted); in legacy single-table mode it may be left out."}`)
		}
		if !slices.Contains(required, name) {
			raw = nullable(raw)
		}
		refs = refs || strings.Contains(string(raw), "#/$defs/")
		props[name] = raw
	}
	s["properties"], _ = json.Marshal(props)
	if refs {
		s["$defs"] = json.RawMessage(`{"ListFilter":` + listFilterDef + `}`)
	}
	out, err := json.Marshal(s)
	if err != nil {
		return in
	}
	return out
}

// topType is the type of a property schema, when it names one.
func topType(raw json.RawMessage) string {
	var p struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.Type
}

// nullable makes a property schema accept null too: null joins its type,
// and its variants when it has some.
func nullable(raw json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
		return raw
	}
	var one string
	var types []string
	if json.Unmarshal(p["type"], &one) == nil {
		types = []string{one}
	} else if json.Unmarshal(p["type"], &types) != nil {
		return raw // any JSON value, null too
	}
	if !slices.Contains(types, "null") {
		types = append(types, "null")
	}
	p["type"], _ = json.Marshal(types)
	if v, ok := p["oneOf"]; ok {
		p["oneOf"] = json.RawMessage(`[{"type":"null"},` + strings.TrimPrefix(string(v), "["))
	}
	out, err := json.Marshal(p)
	if err != nil {
		return raw
	}
	return out
}

// toolErrors are the error codes each tool answers besides the table's
// (TABLE_REQUIRED, TABLE_NOT_FOUND) and VALIDATION_ERROR.
var toolErrors = map[string]string{
	"info":            "",
	"create":          "STORAGE_ERROR, IO_ERROR (dump file)",
	"get":             "NOT_FOUND, AMBIGUOUS_ID",
	"list":            "",
	"update":          "NOT_FOUND, AMBIGUOUS_ID, STORAGE_ERROR, IO_ERROR (dump file)",
	"delete":          "NOT_FOUND, AMBIGUOUS_ID",
	"reload":          "CONFIG_ERROR (a JSON-RPC error)",
	"schema_create":   "SCHEMA_EXISTS, CONFIG_ERROR",
	"schema_update":   "BACKUP_ERROR, CONFIG_ERROR",
	"schema_delete":   "BACKUP_ERROR, CONFIG_ERROR",
	"schema_batch":    "BATCH_ABORTED (batch aborted at op #i: reason), BACKUP_ERROR",
	"data_snapshot":   "SNAPSHOT_ERROR, UPLOAD_NOT_CONFIGURED, UPLOAD_FAILED",
	"row_materialize": "MATERIALIZE_DEST_RELATIVE, MATERIALIZE_DEST_INVALID, MATERIALIZE_ROW_NOT_FOUND, MATERIALIZE_EMPTY_RESULT, MATERIALIZE_FIELD_UNKNOWN, MATERIALIZE_INVALID_PARAM, MATERIALIZE_IO_ERROR",
	"alias_create":    "ALIAS_ALREADY_EXISTS",
	"alias_list":      "",
	"alias_run":       "ALIAS_NOT_FOUND, ALIAS_PARAMS_REQUIRED, ALIAS_TEMPLATE_ERROR, SCHEMA_ERROR, AGGREGATOR_ERROR",
	"alias_delete":    "ALIAS_NOT_FOUND",
	"query_aggregate": "AGGREGATOR_ERROR",
	"row_restore":     "NOT_FOUND (no history entry at or before the time)",
	"content_view":    "as a successful {\"error\":KIND,\"data\":…} answer: TYPE_ERROR (not a string field), NOT_FOUND; SCHEMA_ERROR for a field not in the schema",
	"content_replace": "as a successful {\"error\":KIND,\"data\":…} answer: STRING_NOT_FOUND, AMBIGUOUS (AMBIGUOUS_MATCH, with candidates), TYPE_ERROR, VALIDATION",
	"content_insert":  "as a successful {\"error\":KIND,\"data\":…} answer: OUT_OF_RANGE, TYPE_ERROR",
}

// wireDescription is a tool's description with how the table is chosen
// and the error codes it answers.
func wireDescription(t *Tool) string {
	d := t.Description
	var props struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(t.InputSchema, &props)
	_, takesTable := props.Properties["table"]
	optionalTable := takesTable && !slices.Contains(props.Required, "table")
	codes := []string{}
	if optionalTable {
		d += " The table argument names the table: required in multi-table mode, optional in legacy single-table mode (MINI_APP_SCHEMA + MINI_APP_DB)."
		codes = append(codes, "TABLE_REQUIRED", "TABLE_NOT_FOUND")
	} else if takesTable {
		codes = append(codes, "TABLE_NOT_FOUND")
	}
	if t.Name != "reload" && t.Name != "alias_list" {
		codes = append(codes, "VALIDATION_ERROR")
	}
	if e := toolErrors[t.Name]; e != "" {
		codes = append(codes, e)
	}
	if len(codes) > 0 {
		d += " Errors: " + strings.Join(codes, ", ") + "."
	}
	return d
}
