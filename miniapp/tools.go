package miniapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Tool is one mini-app tool as the MCP face registers it.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments (unknown keys are
	// ignored, as by mini-app-mcp).
	InputSchema                       json.RawMessage
	ReadOnly, Destructive, Idempotent bool
	// Action is what the caller's key_type and roles must allow somewhere
	// for the tool to be listed (0: always listed).
	Action query.Action
	run    func(s *Service, ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error)
	// finished: InputSchema and Description are as listed (wire.go).
	finished bool
}

// Outcome is a tool call's answer in the contract's shapes.
type Outcome struct {
	// Text is content[0].text: compact JSON on success, the display text
	// of the error when IsError.
	Text    string
	IsError bool
	// Err is set for a JSON-RPC error (bad arguments, internal failures).
	Err error
	// Cause is the error behind an isError answer (for the journal).
	Cause error
}

// ArgsError is a missing required argument or one of the wrong JSON type:
// a JSON-RPC error (invalid params), as in mini-app-mcp.
type ArgsError struct{ Msg string }

func (e *ArgsError) Error() string { return e.Msg }

// Unwrap classifies the error as Invalid for the gateway.
func (e *ArgsError) Unwrap() error { return fault.New(fault.Invalid, "%s", e.Msg) }

// Call runs a tool for a principal.
func (s *Service) Call(ctx context.Context, p *auth.Principal, t *Tool, args json.RawMessage) Outcome {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	text, err := t.run(s, ctx, p, args)
	if err == nil {
		return Outcome{Text: text}
	}
	var ae *ArgsError
	if asArgs(err, &ae) {
		return Outcome{Err: ae, Cause: ae}
	}
	if re, ok := err.(*RPCError); ok {
		return Outcome{Err: re, Cause: re}
	}
	e := asError(err, tableArg(args))
	if e.Kind == fault.Internal || e.Kind == fault.Unavailable || e.Kind == fault.Timeout {
		if _, ok := err.(*Error); !ok {
			return Outcome{Err: fault.As(err), Cause: err}
		}
	}
	return Outcome{Text: e.Text, IsError: true, Cause: e}
}

func asArgs(err error, out **ArgsError) bool {
	e, ok := err.(*ArgsError)
	if ok {
		*out = e
	}
	return ok
}

func tableArg(args json.RawMessage) string {
	var a struct {
		Table string `json:"table"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Table
}

// tableNamedEmpty reports whether args give the table as "" (the member
// present, a string, empty): mini-app-mcp takes that as a table named ""
// (Some("")), not as an omitted table.
func tableNamedEmpty(args json.RawMessage) bool {
	var a struct {
		Table *string `json:"table"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Table != nil && *a.Table == ""
}

// resolveArg resolves a table tool's table argument. In drop-in mode a
// table given as "" is a table named "", which is not found, in legacy
// single-table mode too (mini-app-mcp resolves Some("") by name, never
// to its default table). The gateway takes "" as omitted.
func (s *Service) resolveArg(ctx context.Context, p *auth.Principal, args json.RawMessage, a tableArgs) (*target, error) {
	if a.Table == "" && s.cfg.Mounted && tableNamedEmpty(args) {
		return nil, tableNotFound("")
	}
	return s.resolve(ctx, p, a.Table, a.Schema)
}

// decode reads the arguments into v (numbers as json.Number), refusing a
// wrong JSON type, and checks the required keys are present.
func decode(args json.RawMessage, v any, required ...string) error {
	var present map[string]json.RawMessage
	if err := json.Unmarshal(args, &present); err != nil {
		return &ArgsError{Msg: "invalid params: arguments must be an object"}
	}
	for _, k := range required {
		if raw, ok := present[k]; !ok || string(raw) == "null" {
			return &ArgsError{Msg: fmt.Sprintf("invalid params: missing field `%s`", k)}
		}
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return argsProblem("", err)
	}
	return nil
}

// argsProblem is the ArgsError of a JSON decoding error of the argument
// arg ("" for the arguments object), in JSON's terms (jsonProblem).
func argsProblem(arg string, err error) *ArgsError {
	return &ArgsError{Msg: "invalid params: " + jsonProblem(arg, err)}
}

// jsonProblem says what a JSON decoding error of the value arg ("" for
// the arguments object) found, in JSON's terms: the field and the JSON type
// it takes, never a Go type.
func jsonProblem(arg string, err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	field := te.Field
	switch {
	case arg != "" && field != "":
		field = arg + "." + field
	case field == "":
		field = arg
	}
	if field == "" {
		return fmt.Sprintf("arguments must be %s, got %s", jsonTypeOf(te.Type), te.Value)
	}
	return fmt.Sprintf("argument %q must be %s, got %s", field, jsonTypeOf(te.Type), te.Value)
}

// jsonTypeOf names the JSON type a Go type decodes from.
func jsonTypeOf(t reflect.Type) string {
	if t == reflect.TypeFor[json.Number]() {
		return "a number"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonTypeOf(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another JSON type"
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// compact encodes an answer as compact JSON (keys of maps sorted).
func compact(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fault.Wrap(fault.Internal, err, "encode answer")
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// Tools returns the tool set, in the contract's order.
func (s *Service) Tools() []*Tool { return finishedTools() }

// Lookup returns the named tool.
func Lookup(name string) *Tool {
	for _, t := range finishedTools() {
		if t.Name == name {
			return t
		}
	}
	return nil
}

const tableProp = `"table":{"type":"string","description":"Table name (required when several tables are mounted)."},"schema":{"type":"string","description":"Gateway only: the mi database (schema) holding the table; default: the first of your project's mi databases, in schema-name order, that has it."}`
const idProp = `"id":{"type":"string","description":"Row id (a unique prefix is accepted)."}`
const fieldsProp = `"fields":{"type":"object","description":"FieldSelector: {\"mode\":\"all\"} or {\"mode\":\"list\",\"fields\":[…]}."}`

func obj(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `}`)
}

var toolSet = []*Tool{
	{Name: "info", Action: query.Read, ReadOnly: true, Idempotent: true,
		Description: "Show a table's schema: title, description, fields (name, type, required, description), dump and history settings. Call without table to learn whether several tables are mounted (TABLE_REQUIRED).",
		InputSchema: obj(tableProp), run: (*Service).info},
	{Name: "create", Action: query.Insert,
		Description: "Create a row. data is validated against schema.yaml. Returns the RowRecord {id, data, created_at, updated_at}.",
		InputSchema: obj(`"data":{"type":"object","additionalProperties":true,"description":"The row's fields."},`+tableProp, "data"), run: (*Service).create},
	{Name: "get", Action: query.Read, ReadOnly: true, Idempotent: true,
		Description: "Get one row by id (or unique id prefix). Optional fields projection.",
		InputSchema: obj(idProp+","+tableProp+","+fieldsProp, "id"), run: (*Service).get},
	{Name: "list", Action: query.Read, ReadOnly: true, Idempotent: true,
		Description: "List rows, newest first unless order_by is given. limit (default 100, at most 1000), offset, filter (ListFilter: eq, in, like, array_contains, array_not_contains, and, or), fields, order_by [{field, direction: asc|desc}].",
		InputSchema: obj(`"limit":{"type":"integer","minimum":0},"offset":{"type":"integer","minimum":0},"filter":{"type":"object","description":"ListFilter, e.g. {\"type\":\"eq\",\"field\":\"status\",\"value\":\"open\"}."},"order_by":{"type":"array","items":{"type":"object"}},` + tableProp + "," + fieldsProp), run: (*Service).list},
	{Name: "update", Action: query.Update, Idempotent: true,
		Description: "Update a row. mode merge (default, RFC 7396 shallow: absent keys kept, null removes an optional key) or replace (store data as given). Returns the RowRecord.",
		InputSchema: obj(idProp+`,"data":{"type":"object","additionalProperties":true},"mode":{"type":"string","enum":["merge","replace"]},`+tableProp, "id", "data"), run: (*Service).update},
	{Name: "delete", Action: query.Delete, Destructive: true, Idempotent: true,
		Description: "Delete a row by id (or unique prefix). Returns {\"deleted\": id as given}. The row's history keeps it restorable with row_restore.",
		InputSchema: obj(idProp+","+tableProp, "id"), run: (*Service).delete},
	{Name: "reload",
		Description: "Re-scan the mounted directories: returns {mounted, added, removed}.",
		InputSchema: obj(""), run: (*Service).reload},
	{Name: "row_restore", Action: query.Update, Idempotent: true,
		Description: "Restore a row (full id) to its state at at_unix_secs from its history; re-inserts a deleted row under the same id.",
		InputSchema: obj(`"id":{"type":"string"},"at_unix_secs":{"type":"integer"},`+tableProp, "id", "at_unix_secs"), run: (*Service).restore},
	{Name: "content_view", Action: query.Read, ReadOnly: true, Idempotent: true,
		Description: "Show a string field with line numbers; view_range [start, end] (1-based, clamped).",
		InputSchema: obj(idProp+`,"field":{"type":"string"},"view_range":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2},`+tableProp, "id", "field"), run: (*Service).contentView},
	{Name: "content_replace", Action: query.Update,
		Description: "Replace old_str by new_str in a string field; old_str must match once unless replace_all; view_range scopes the search to lines. Returns {matches}.",
		InputSchema: obj(idProp+`,"field":{"type":"string"},"old_str":{"type":"string"},"new_str":{"type":"string"},"view_range":{"type":"array","items":{"type":"integer"}},"replace_all":{"type":"boolean"},`+tableProp, "id", "field", "old_str", "new_str"), run: (*Service).contentReplace},
	{Name: "content_insert", Action: query.Update,
		Description: "Insert content after line (0 = at the top) of a string field. Returns {line, inserted_lines}.",
		InputSchema: obj(idProp+`,"field":{"type":"string"},"line":{"type":"integer","minimum":0},"content":{"type":"string"},`+tableProp, "id", "field", "line", "content"), run: (*Service).contentInsert},
}

type tableArgs struct {
	Table  string `json:"table"`
	Schema string `json:"schema"`
}

func (s *Service) info(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a tableArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	t, err := s.resolveArg(ctx, p, args, a)
	if err != nil {
		return "", err
	}
	if err := s.described(ctx, p, t); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(infoDoc(t), "", "  ")
	if err != nil {
		return "", fault.Wrap(fault.Internal, err, "encode info")
	}
	return string(b), nil
}

type fieldDoc struct {
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Required    bool    `json:"required"`
	Description *string `json:"description"`
}

type dumpDoc struct {
	Dir        *string `json:"dir"`
	TitleField *string `json:"title_field"`
	BodyField  *string `json:"body_field"`
	Sync       *string `json:"sync"`
}

type info struct {
	Table       string     `json:"table"`
	Title       *string    `json:"title"`
	Description *string    `json:"description"`
	Fields      []fieldDoc `json:"fields"`
	Dump        *dumpDoc   `json:"dump"`
	History     string     `json:"history"`
}

func infoDoc(t *target) info {
	d := info{Table: t.info.Table, Title: t.info.Title, Description: t.info.Description, Fields: []fieldDoc{}, History: "full"}
	for _, f := range t.fields() {
		d.Fields = append(d.Fields, fieldDoc{f.Name, f.Type, f.Required, f.Description})
	}
	d.Dump = dumpDocOf(t)
	if !t.info.History {
		d.History = "off"
	}
	return d
}

// dataObject checks that data is a JSON object.
func dataObject(raw json.RawMessage) (map[string]any, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, &ArgsError{Msg: "invalid params: data: " + err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, validationErr("(root)", "value must be a JSON object")
	}
	return m, nil
}

func (s *Service) create(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		Data json.RawMessage `json:"data"`
	}
	if err := decode(args, &a, "data"); err != nil {
		return "", err
	}
	t, err := s.resolveArg(ctx, p, args, a.tableArgs)
	if err != nil {
		return "", err
	}
	data, err := dataObject(a.Data)
	if err != nil {
		return "", err
	}
	if err := t.validate(data); err != nil {
		return "", err
	}
	// The document goes to the table as given; the engine judges the
	// fields it names as any insert's.
	plan := t.plan(p, query.Insert)
	plan.Docs = []json.RawMessage{a.Data}
	res, err := s.eng.Execute(ctx, p, plan)
	if err != nil {
		return "", err
	}
	return s.inserted(ctx, p, t, res)
}

// inserted answers an insert: the row as stored when the caller may read
// it whole (the engine left the document in the returned row), else read
// back as far as it may see it, or the columns it may read of it, or
// {"created": n} without any.
func (s *Service) inserted(ctx context.Context, p *auth.Principal, t *target, res *engine.Result) (string, error) {
	if len(res.Returned) != 1 {
		return compact(map[string]any{"created": res.RowsAffected})
	}
	r := toRecord(res.Columns, res.Returned[0])
	if r.raw == nil && r.ID != "" {
		if got, err := s.getRow(ctx, p, t, r.ID, r.ID); err == nil {
			r = got
		}
	}
	if err := r.decode(); err != nil {
		return "", err
	}
	return s.dumped(t, r)
}

func (s *Service) get(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		ID     string          `json:"id"`
		Fields json.RawMessage `json:"fields"`
	}
	if err := decode(args, &a, "id"); err != nil {
		return "", err
	}
	t, err := s.resolveArg(ctx, p, args, a.tableArgs)
	if err != nil {
		return "", err
	}
	proj, err := t.projection(a.Fields)
	if err != nil {
		return "", err
	}
	id, err := s.resolveID(ctx, p, t, a.ID)
	if err != nil {
		return "", err
	}
	r, err := s.getRow(ctx, p, t, id, a.ID)
	if err != nil {
		return "", err
	}
	return compact(project(r, proj))
}

func (s *Service) list(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		Limit   *uint32         `json:"limit"`
		Offset  *uint32         `json:"offset"`
		Filter  json.RawMessage `json:"filter"`
		Fields  json.RawMessage `json:"fields"`
		OrderBy []orderTerm     `json:"order_by"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	t, err := s.resolveArg(ctx, p, args, a.tableArgs)
	if err != nil {
		return "", err
	}
	plan := t.plan(p, query.Read)
	t.docRead(plan)
	if len(a.Filter) > 0 && string(a.Filter) != "null" {
		if plan.Where, err = t.toExpr(a.Filter); err != nil {
			return "", err
		}
	}
	proj, err := t.projection(a.Fields)
	if err != nil {
		return "", err
	}
	if plan.Order, err = t.toOrder(a.OrderBy, s.cfg.Mounted); err != nil {
		return "", err
	}
	if len(plan.Order) == 0 {
		plan.Order = []query.Order{{Column: "created_at", Desc: true}}
	}
	limit := int64(100)
	if a.Limit != nil {
		limit = min(int64(*a.Limit), 1000)
	}
	if a.Offset != nil {
		plan.Offset = int64(*a.Offset)
	}
	if limit == 0 {
		// LIMIT 0 reads nothing; the plan still passes the gates.
		plan.Limit, plan.Where = 1, query.And{plan.Where, query.Or{}}
		if plan.Where.(query.And)[0] == nil {
			plan.Where = query.Or{}
		}
	} else {
		plan.Limit = limit
	}
	rows, err := s.read(ctx, p, plan)
	if err != nil {
		return "", err
	}
	for i := range rows {
		rows[i] = project(rows[i], proj)
	}
	return compact(rows)
}

func (s *Service) update(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		ID   string          `json:"id"`
		Data json.RawMessage `json:"data"`
		Mode string          `json:"mode"`
	}
	if err := decode(args, &a, "id", "data"); err != nil {
		return "", err
	}
	t, err := s.resolveArg(ctx, p, args, a.tableArgs)
	if err != nil {
		return "", err
	}
	patch, err := dataObject(a.Data)
	if err != nil {
		return "", err
	}
	if a.Mode != "" && a.Mode != "merge" && a.Mode != "replace" {
		return "", validationErr("mode", fmt.Sprintf("unknown mode '%s', expected merge or replace", a.Mode))
	}
	id, err := s.resolveID(ctx, p, t, a.ID)
	if err != nil {
		return "", err
	}
	cur, err := s.getRow(ctx, p, t, id, a.ID)
	if err != nil {
		return "", err
	}
	next := map[string]any{}
	if a.Mode == "replace" {
		next = patch
	} else {
		for k, v := range cur.Data {
			next[k] = v
		}
		for k, v := range patch {
			if v == nil {
				if f, ok := t.info.Field(k); ok && f.Required {
					return "", validationErr(k, "required field cannot be deleted via null")
				}
				delete(next, k)
				continue
			}
			next[k] = v
		}
	}
	if err := t.validate(next); err != nil {
		return "", err
	}
	return s.store(ctx, p, t, id, a.ID, a.Data, a.Mode == "replace")
}

// store writes a row's new document as one update plan: doc merged into
// the stored one (a null removes a key), or with replace as the new
// document (the keys a column-limited caller cannot see stay). The
// RowRecord read back is the answer.
func (s *Service) store(ctx context.Context, p *auth.Principal, t *target, id, shown string, doc json.RawMessage, replace bool) (string, error) {
	plan := t.plan(p, query.Update)
	plan.Where = idIs(id)
	plan.Docs = []json.RawMessage{doc}
	plan.DocReplace = replace
	res, err := s.eng.Execute(ctx, p, plan)
	if err != nil {
		return "", err
	}
	if res.RowsAffected == 0 {
		return "", rowNotFound(shown)
	}
	r, err := s.getRow(ctx, p, t, id, shown)
	if err != nil {
		return "", err
	}
	return s.dumped(t, r)
}

func (s *Service) delete(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		ID string `json:"id"`
	}
	if err := decode(args, &a, "id"); err != nil {
		return "", err
	}
	t, err := s.resolveArg(ctx, p, args, a.tableArgs)
	if err != nil {
		return "", err
	}
	id, err := s.resolveID(ctx, p, t, a.ID)
	if err != nil {
		return "", err
	}
	plan := t.plan(p, query.Delete)
	plan.Where = idIs(id)
	res, err := s.eng.Execute(ctx, p, plan)
	if err != nil {
		return "", err
	}
	if res.RowsAffected == 0 {
		return "", rowNotFound(a.ID)
	}
	return compact(map[string]string{"deleted": a.ID})
}

// names is the set of table names the caller's mi databases hold, read
// again from the directories (the engine's catalog, refreshed) as
// mini-app-mcp's mount scan does. Only the drop-in mode reloads, where
// the caller is the one local admin.
func (s *Service) names(ctx context.Context, p *auth.Principal) (map[string]bool, error) {
	dbs, err := s.miDatabases(ctx, p)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, d := range dbs {
		s.eng.Refresh(p, "mi", d[0])
		ts, err := s.eng.Tables(ctx, p, "mi", d[0])
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			out[t.Name] = true
		}
	}
	return out, nil
}

// Prime records the tables mounted now, so the first reload reports what
// changed since start.
func (s *Service) Prime(ctx context.Context, p *auth.Principal) error {
	n, err := s.names(ctx, p)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.known = n
	s.mu.Unlock()
	return nil
}

func (s *Service) reload(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	if !s.cfg.Mounted {
		return "", configErrRPC("reload not configured: server was constructed via new_single without a mount config")
	}
	if s.cfg.DefaultTable != "" {
		// The legacy pair: mini-app-mcp loads its schema.yaml again and
		// refuses the reload (a JSON-RPC error, the tables left as they
		// were) when it fails. Through the engine a file gone and one
		// that does not parse look alike: both answer SCHEMA_ERROR. A
		// directory's table that does not parse is only left out.
		s.eng.Refresh(p, "mi", s.cfg.DefaultSchema)
		b, err := s.eng.Defined(ctx, p, engine.TableRef{Type: "mi", Schema: s.cfg.DefaultSchema, Table: s.cfg.DefaultTable})
		if err == nil {
			_, err = mi.ParseTable(s.cfg.DefaultTable, b)
		}
		if err != nil {
			return "", &RPCError{schemaErr(errMsg(err))}
		}
	}
	n, err := s.names(ctx, p)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	old := s.known
	s.known = n
	s.mu.Unlock()
	added, removed := []string{}, []string{}
	for k := range n {
		if !old[k] {
			added = append(added, k)
		}
	}
	for k := range old {
		if !n[k] {
			removed = append(removed, k)
		}
	}
	sortStrings(added)
	sortStrings(removed)
	return compact(map[string]any{"mounted": len(n), "added": added, "removed": removed})
}

// RPCError is a failure mini-app-mcp answers as a JSON-RPC error
// (reload, resources): Code and the display text.
type RPCError struct{ E *Error }

func (e *RPCError) Error() string { return e.E.Text }

// Unwrap exposes the typed error.
func (e *RPCError) Unwrap() error { return e.E.Fault() }

func configErrRPC(msg string) error { return &RPCError{configErr(msg)} }

func (s *Service) restore(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		ID string `json:"id"`
		At int64  `json:"at_unix_secs"`
	}
	if err := decode(args, &a, "id", "at_unix_secs"); err != nil {
		return "", err
	}
	t, err := s.resolveArg(ctx, p, args, a.tableArgs)
	if err != nil {
		return "", err
	}
	// The caller must be able to read the table before its history is.
	probe := t.plan(p, query.Read)
	probe.Where = idIs(a.ID)
	cur, err := s.read(ctx, p, probe)
	if err != nil {
		return "", err
	}
	e, err := s.eng.HistoryAt(ctx, p, t.ref(), a.ID, a.At)
	if err != nil {
		return "", err
	}
	data, err := dataObject(json.RawMessage(e.Data))
	if err != nil {
		return "", fault.Wrap(fault.Internal, err, "history entry is not a JSON object")
	}
	// The entry as stored; a caller with a column limit restores the
	// fields it sees (the others keep their current values).
	doc, err := t.visibleDoc(json.RawMessage(e.Data), data)
	if err != nil {
		return "", err
	}
	if len(cur) == 1 {
		return s.store(ctx, p, t, a.ID, a.ID, doc, true)
	}
	plan := t.plan(p, query.Insert)
	plan.Docs = []json.RawMessage{doc}
	plan.IDs = []string{a.ID} // the row comes back under its old id
	res, err := s.eng.Execute(ctx, p, plan)
	if err != nil {
		return "", err
	}
	if len(res.Returned) != 1 {
		return compact(map[string]any{"id": a.ID})
	}
	return s.inserted(ctx, p, t, res)
}
