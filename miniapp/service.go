package miniapp

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// Config tunes the mini-app face.
type Config struct {
	// DefaultSchema and DefaultTable name the table a tool addresses when
	// its table argument is omitted (mini-app-mcp's legacy mode). Empty:
	// an omitted table is TABLE_REQUIRED.
	DefaultSchema, DefaultTable string
	// Mounted says reload is configured (the drop-in mode). Without it
	// reload answers CONFIG_ERROR as mini-app-mcp's new_single server does.
	Mounted bool
	// ExportRoots are the directories under which, on the gateway (not
	// Mounted), row_materialize and data_snapshot write: each caller
	// under <root>/<org>/<project> of each (see ExportRoots). None: they
	// refuse every path. The drop-in mode writes where its one local
	// user says, as mini-app-mcp.
	ExportRoots []string
}

// Service runs the mini-app tools for principals.
type Service struct {
	eng *engine.Engine
	st  *store.Store
	cfg Config

	mu    sync.Mutex
	known map[string]bool // tables at the last reload (or Prime)
}

// New builds the mini-app face over the gateway's engine and store.
func New(eng *engine.Engine, st *store.Store, cfg Config) *Service {
	return &Service{eng: eng, st: st, cfg: cfg}
}

// target is a resolved table: where it lives, its schema.yaml and the
// columns the caller may see.
type target struct {
	schema, table, dir string
	info               *mi.TableInfo
	visible            map[string]bool
}

// miDatabases returns the caller's project's mi databases, sorted by
// schema, each with its directory.
func (s *Service) miDatabases(ctx context.Context, p *auth.Principal) ([][2]string, error) {
	dbs, err := s.st.DatabasesOf(ctx, p.ProjectID)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, d := range dbs {
		if d.Type == "mi" {
			out = append(out, [2]string{d.Schema, d.DSN})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out, nil
}

// resolve finds the table a tool addresses. The gateway-mode rule: with a
// schema argument, that mi database only; without, the caller's project's
// mi databases in schema-name order, and the first that has a table of
// that name the caller may see wins. (Drop-in mode names its databases
// legacy, project and user, so this order is mini-app-mcp's override
// order.) An omitted table is the configured default, else TABLE_REQUIRED.
func (s *Service) resolve(ctx context.Context, p *auth.Principal, table, schema string) (*target, error) {
	if table == "" {
		if s.cfg.DefaultTable == "" {
			return nil, tableRequired()
		}
		table, schema = s.cfg.DefaultTable, s.cfg.DefaultSchema
	}
	dbs, err := s.miDatabases(ctx, p)
	if err != nil {
		return nil, err
	}
	for _, probe := range []bool{false, true} {
		for _, d := range dbs {
			if schema != "" && d[0] != schema {
				continue
			}
			if probe {
				// A table newer than the catalog's cache: a read through
				// the pipeline makes the catalog look again (and checks
				// the caller may see it).
				if _, err := s.defined(ctx, p, d[0], table); err != nil {
					continue
				}
				pl := &query.Plan{Action: query.Read, Org: p.Org, Project: p.Project, Type: "mi", Schema: d[0], Table: table,
					Columns: []string{"id"}, Limit: 1}
				res, err := s.eng.Execute(ctx, p, pl)
				if err != nil {
					continue
				}
				res.Rows.Close()
			}
			if t := s.find(ctx, p, d, table); t != nil {
				return t, nil
			}
		}
	}
	return nil, tableNotFound(table)
}

// find looks a table up in one mi database's visible tables.
func (s *Service) find(ctx context.Context, p *auth.Principal, d [2]string, table string) *target {
	ts, err := s.eng.Tables(ctx, p, "mi", d[0])
	if err != nil {
		return nil
	}
	for _, t := range ts {
		if t.Name != table {
			continue
		}
		info, err := s.defined(ctx, p, d[0], table)
		if err != nil {
			return nil
		}
		vis := map[string]bool{}
		for _, c := range t.Columns {
			vis[c.Name] = true
		}
		return &target{schema: d[0], table: table, dir: d[1], info: info, visible: vis}
	}
	return nil
}

// defined reads a table's schema.yaml through the engine (Defined: any
// right on the table; a hidden one is not found), for resolving a tool's
// table and checking its arguments.
func (s *Service) defined(ctx context.Context, p *auth.Principal, schema, table string) (*mi.TableInfo, error) {
	b, err := s.eng.Defined(ctx, p, engine.TableRef{Type: "mi", Schema: schema, Table: table})
	if err != nil {
		return nil, err
	}
	return mi.ParseTable(table, b)
}

// described rereads a resolved table's schema.yaml from disk through the
// engine's gated, audited Definition (the read right on the table), for
// the answers that show the definition: info and the schema://
// resources.
func (s *Service) described(ctx context.Context, p *auth.Principal, t *target) error {
	b, err := s.eng.Definition(ctx, p, engine.TableRef{Type: "mi", Schema: t.schema, Table: t.table})
	if err != nil {
		return err
	}
	info, err := mi.ParseTable(t.table, b)
	if err != nil {
		return err
	}
	t.info = info
	return nil
}

// tables lists every table the caller may see across its mi databases,
// deduplicated by the resolve order.
func (s *Service) tables(ctx context.Context, p *auth.Principal) ([]*target, error) {
	dbs, err := s.miDatabases(ctx, p)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []*target
	for _, d := range dbs {
		ts, err := s.eng.Tables(ctx, p, "mi", d[0])
		if err != nil {
			continue
		}
		for _, t := range ts {
			if seen[t.Name] {
				continue
			}
			info, err := s.defined(ctx, p, d[0], t.Name)
			if err != nil {
				continue
			}
			seen[t.Name] = true
			vis := map[string]bool{}
			for _, c := range t.Columns {
				vis[c.Name] = true
			}
			out = append(out, &target{schema: d[0], table: t.Name, dir: d[1], info: info, visible: vis})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].table < out[j].table })
	return out, nil
}

// plan starts a plan on the target's object.
func (t *target) plan(p *auth.Principal, a query.Action) *query.Plan {
	return &query.Plan{Action: a, Org: p.Org, Project: p.Project, Type: "mi", Schema: t.schema, Table: t.table}
}

// docRead makes a read plan answer the stored documents (query.Plan.Doc),
// which hold the fields: next to them it asks only for the row's own
// columns the caller may see.
func (t *target) docRead(plan *query.Plan) {
	plan.Doc = true
	for _, c := range []string{"id", "created_at", "updated_at"} {
		if t.visible[c] {
			plan.Columns = append(plan.Columns, c)
		}
	}
}

// fields are the schema fields the caller may see, in yaml order.
func (t *target) fields() []mi.FieldInfo {
	var out []mi.FieldInfo
	for _, f := range t.info.Fields {
		if t.visible[f.Name] {
			out = append(out, f)
		}
	}
	return out
}

func (t *target) field(name string) (mi.FieldInfo, bool) {
	f, ok := t.info.Field(name)
	return f, ok && t.visible[name]
}

// record is a RowRecord as mini-app-mcp returns it. Data holds the row's
// fields decoded (numbers as json.Number), raw the stored document's text
// when the record answers it whole; MarshalJSON writes raw as it is, else
// Data in the stored form (mi.CompactJSON).
type record struct {
	ID        string
	Data      map[string]any
	CreatedAt int64
	UpdatedAt int64
	raw       json.RawMessage
}

// MarshalJSON writes {"id","data","created_at","updated_at"} in that
// order, data as stored: unknown keys, explicit nulls and number literals
// as they are.
func (r record) MarshalJSON() ([]byte, error) {
	data := r.raw
	if data == nil {
		d := r.Data
		if d == nil {
			d = map[string]any{}
		}
		b, err := mi.CompactJSON(d)
		if err != nil {
			return nil, err
		}
		data = b
	}
	id, err := json.Marshal(r.ID)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(data)+len(id)+64)
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	b = append(b, `,"created_at":`...)
	b = strconv.AppendInt(b, r.CreatedAt, 10)
	b = append(b, `,"updated_at":`...)
	b = strconv.AppendInt(b, r.UpdatedAt, 10)
	return append(b, '}'), nil
}

// toRecord builds a RowRecord from a row of the pipeline. A Doc read's
// last cell is the stored document (query.DocColumn), as far as the caller
// may see it: the record answers it as it is. Without it, absent and null
// fields are left out of data (the column view cannot tell them apart).
func toRecord(cols []dialects.Column, vals []any) record {
	r := record{Data: map[string]any{}}
	doc := len(cols) > 0 && cols[len(cols)-1].Name == query.DocColumn
	for i, c := range cols {
		v := vals[i]
		switch {
		case doc && i == len(cols)-1:
			// Data is decoded from raw when needed (decode).
			if raw, ok := v.(json.RawMessage); ok {
				r.Data, r.raw = nil, raw
			}
		case c.Name == "id":
			r.ID, _ = v.(string)
		case c.Name == "created_at":
			r.CreatedAt, _ = v.(int64)
		case c.Name == "updated_at":
			r.UpdatedAt, _ = v.(int64)
		case doc:
			// The document holds the fields.
		default:
			if v != nil {
				r.Data[c.Name] = plain(v)
			}
		}
	}
	return r
}

// decode fills Data from the stored document when it has not been yet: a
// record answered whole (a list's rows) never needs it.
func (r *record) decode() error {
	if r.Data != nil {
		return nil
	}
	if r.raw == nil {
		r.Data = map[string]any{}
		return nil
	}
	obj, err := decodeDoc(r.raw)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "row %s: stored data is not a JSON object", r.ID)
	}
	r.Data = obj
	return nil
}

// decodeDoc decodes a stored document, numbers as json.Number.
func decodeDoc(raw []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		obj = map[string]any{}
	}
	return obj, nil
}

// plain turns a cell into a JSON-ready value.
func plain(v any) any {
	switch x := v.(type) {
	case []byte:
		return json.RawMessage(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// read runs a read plan and collects its rows.
func (s *Service) read(ctx context.Context, p *auth.Principal, plan *query.Plan) ([]record, error) {
	res, err := s.eng.Execute(ctx, p, plan)
	if err != nil {
		return nil, err
	}
	defer res.Rows.Close()
	cols := res.Rows.Columns()
	out := []record{}
	for res.Rows.Next() {
		vals, err := res.Rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, toRecord(cols, vals))
	}
	return out, res.Rows.Err()
}

func idIs(id string) query.Expr {
	return &query.Cond{Column: "id", Op: query.Eq, Args: []any{id}}
}

// resolveID applies the id prefix rule: 36 bytes is an exact id;
// otherwise the ids starting with it (among the rows the caller may read)
// must be exactly one.
func (s *Service) resolveID(ctx context.Context, p *auth.Principal, t *target, id string) (string, error) {
	if len(id) == 36 {
		return id, nil
	}
	plan := t.plan(p, query.Read)
	plan.Columns = []string{"id"}
	esc := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(id)
	plan.Where = &query.Cond{Column: "id", Op: query.Like, Args: []any{esc + "%"}}
	plan.Order = []query.Order{{Column: "id"}}
	rows, err := s.read(ctx, p, plan)
	if err != nil {
		return "", err
	}
	switch len(rows) {
	case 0:
		return "", rowNotFound(id)
	case 1:
		return rows[0].ID, nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return "", ambiguousID(id, ids)
}

// getRow reads one row by full id; NOT_FOUND names shown as the caller
// gave it.
func (s *Service) getRow(ctx context.Context, p *auth.Principal, t *target, id, shown string) (record, error) {
	plan := t.plan(p, query.Read)
	plan.Where = idIs(id)
	t.docRead(plan)
	rows, err := s.read(ctx, p, plan)
	if err != nil {
		return record{}, err
	}
	if len(rows) == 0 {
		return record{}, rowNotFound(shown)
	}
	return rows[0], rows[0].decode()
}

// validate checks a data object against the schema with mini-app-mcp's
// messages, for the fields the caller may see (the dialect checks the
// whole stored document again). A key the schema does not name is kept,
// as mini-app-mcp keeps it, for a caller who sees every field; for one
// with a column limit it is refused, as a field it may not see is.
func (t *target) validate(obj map[string]any) error {
	for _, f := range t.info.Fields {
		if !t.visible[f.Name] {
			continue
		}
		v, ok := obj[f.Name]
		if !ok || v == nil {
			if f.Required {
				return validationErr(f.Name, "required field missing")
			}
			continue
		}
		if got := jsonType(v); got != f.Type {
			return validationErr(f.Name, "expected type '"+f.Type+"', got '"+got+"'")
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	limited := t.limited()
	for _, k := range keys {
		if _, ok := t.field(k); ok {
			continue
		}
		if _, known := t.info.Field(k); !known && !limited {
			continue
		}
		return validationErr(k, "unknown field — only schema-registered fields are stored by the gateway")
	}
	return nil
}

// limited reports whether the caller sees only some of the table's fields
// (a column limit of its permission template): it then reads only those
// keys of a stored document and may write no other.
func (t *target) limited() bool {
	for _, f := range t.info.Fields {
		if !t.visible[f.Name] {
			return true
		}
	}
	return false
}

// visibleDoc is a document as a caller with a column limit may write it:
// the keys of the fields it sees (every key for one without a limit),
// encoded as stored.
func (t *target) visibleDoc(raw json.RawMessage, obj map[string]any) (json.RawMessage, error) {
	if !t.limited() {
		return raw, nil
	}
	kept := map[string]any{}
	for k, v := range obj {
		if _, ok := t.field(k); ok {
			kept[k] = v
		}
	}
	b, err := mi.CompactJSON(kept)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode document")
	}
	return b, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number, float64, int64, int:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any, json.RawMessage:
		return "object"
	case nil:
		return "null"
	}
	return "unknown"
}

// errText is the display text of an error for a tool answer.
func errText(err error, table string) string { return asError(err, table).Text }

var _ = fault.Internal

func sortStrings(s []string) { sort.Strings(s) }
