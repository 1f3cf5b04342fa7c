package miniapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
)

// batchOp is one op of schema_batch, tagged by op.
type batchOp struct {
	Op string `json:"op"`
	defArgs
	SQL    string            `json:"sql"`
	Params []json.RawMessage `json:"params"`
	Match  json.RawMessage   `json:"match"`
	Items  []json.RawMessage `json:"items"`

	yaml  []byte         // schema_create, schema_update: the new schema.yaml
	match [][2]string    // replace: sorted (key, value)
	items []string       // replace: the rows' data, compact JSON
	args  []any          // query: the bound params
	shown map[string]any // its dry_run affects
}

// forbiddenSQL are what a query op may not use: other database files,
// file rewrites, connection settings, extensions.
var forbiddenSQL = regexp.MustCompile(`(?i)(\battach\b|\bdetach\b|\bvacuum\b|\bpragma|load_extension)`)

// batchRequired are the keys each op needs beyond op and table.
var batchRequired = map[string][]string{
	"query":         {"sql"},
	"schema_create": {"scope", "fields"},
	"schema_update": {"scope", "fields"},
	"schema_delete": {"scope"},
	"replace":       {"items"}, // and match, which may be null: a validation error (checkReplace)
}

func parseBatchOps(raw []json.RawMessage) ([]*batchOp, error) {
	ops := make([]*batchOp, 0, len(raw))
	for i, r := range raw {
		var head struct {
			Op string `json:"op"`
		}
		if err := decode(r, &head, "op", "table"); err != nil {
			return nil, &ArgsError{Msg: fmt.Sprintf("invalid params: ops[%d]: %s", i, strings.TrimPrefix(err.Error(), "invalid params: "))}
		}
		req, ok := batchRequired[head.Op]
		if !ok {
			return nil, &ArgsError{Msg: fmt.Sprintf("invalid params: ops[%d]: unknown variant `%s`, expected one of `query`, `schema_create`, `schema_update`, `schema_delete`, `replace`", i, head.Op)}
		}
		op := &batchOp{}
		if err := decode(r, op, req...); err != nil {
			return nil, &ArgsError{Msg: fmt.Sprintf("invalid params: ops[%d]: %s", i, strings.TrimPrefix(err.Error(), "invalid params: "))}
		}
		if head.Op == "replace" && op.Match == nil {
			return nil, &ArgsError{Msg: fmt.Sprintf("invalid params: ops[%d]: missing field `match`", i)}
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func (s *Service) schemaBatch(ctx context.Context, p *auth.Principal, args json.RawMessage) (_ string, err error) {
	var a struct {
		Ops    []json.RawMessage `json:"ops"`
		DryRun bool              `json:"dry_run"`
		Schema string            `json:"schema"`
	}
	if err := decode(args, &a, "ops"); err != nil {
		return "", err
	}
	ops, err := parseBatchOps(a.Ops)
	if err != nil {
		return "", err
	}
	if len(ops) == 0 {
		out := map[string]any{"committed": !a.DryRun, "ops_executed": 0, "yaml_writes": []string{}, "backups_written": []string{}, "registry_rebuilt": false}
		if a.DryRun {
			out["dry_run"], out["affects"] = true, []any{}
		}
		return compact(out)
	}
	table := ops[0].Table
	scope := ""
	for _, op := range ops {
		if op.Table != table {
			return "", validationErr("ops", reasonBatchTables)
		}
		if strings.HasPrefix(op.Op, "schema_") {
			if scope != "" && op.Scope != scope {
				return "", validationErr("scope", "all schema ops in a batch must use the same scope")
			}
			scope = op.Scope
		}
	}
	// The name rule is the schema ops' (their scope path); query and
	// replace ops only look the table up, as mini-app-mcp's batch does
	// (drop-in: "" and any other name not mounted are TABLE_NOT_FOUND).
	if scope != "" || !s.cfg.Mounted {
		if err := checkTableName(table); err != nil {
			return "", err
		}
	}

	// Where the table lives, and the table as served now (nil: not yet).
	var d scopeDir
	var t *target
	if scope != "" {
		if d, err = s.scopeRoot(ctx, p, scope, a.Schema); err != nil {
			return "", err
		}
		if s.defines(ctx, p, d, table) {
			if t, err = s.mountedIn(ctx, p, d, table); err != nil {
				return "", err
			}
		}
	} else {
		if table == "" {
			return "", tableNotFound("")
		}
		if t, err = s.resolve(ctx, p, table, a.Schema); err != nil {
			return "", err
		}
		st := s.scopeOf(t)
		d = scopeDir{scope: st.scope, schema: t.schema, root: st.root}
	}
	existed := t != nil
	yamlPath := d.schemaPath(table)

	// Rights, before anything runs: the batch is one operation on the
	// table object, through the engine's gates, audited like a write.
	ref := d.tableRef(table)
	kinds := make([]dialects.BatchOpKind, len(ops))
	for i, op := range ops {
		kinds[i] = batchKinds[op.Op]
	}
	run, err := s.eng.StartBatch(ctx, p, ref, kinds)
	if err != nil {
		return "", batchRefusal(ref, kinds, err)
	}
	defer func() { run.Abandon(err) }()

	// Check every op against the state the ops before it leave.
	exists := existed
	var cur []mi.FieldInfo
	if t != nil {
		cur = t.info.Fields
	}
	rows := func() int64 {
		n, _ := run.CountRows()
		return n
	}
	for i, op := range ops {
		switch op.Op {
		case "query":
			if forbiddenSQL.MatchString(op.SQL) {
				return "", validationErr("sql", "a query op may not use ATTACH, DETACH, VACUUM, PRAGMA or load_extension")
			}
			for _, raw := range op.Params {
				var str string
				if err := json.Unmarshal(raw, &str); err == nil {
					op.args = append(op.args, str)
				} else {
					op.args = append(op.args, string(bytes.TrimSpace(raw)))
				}
			}
			op.shown = map[string]any{"op": "query", "sql": op.SQL, "rows_affected": nil, "note": "dry_run: SQL not executed"}
		case "schema_create":
			if exists {
				return "", schemaExists(table)
			}
			if op.yaml, err = checkFields(table, op.Title, op.Description, op.Fields); err != nil {
				return "", err
			}
			op.shown = map[string]any{"op": op.Op, "table": table, "would_create": yamlPath, "already_exists": s.defines(ctx, p, d, table), "fields_count": len(op.Fields)}
			exists, cur = true, fieldInfos(op.Fields)
		case "schema_update":
			if !exists {
				return "", tableNotFound(table)
			}
			if op.yaml, err = checkFields(table, op.Title, op.Description, op.Fields); err != nil {
				return "", err
			}
			added, removed, _ := fieldDiff(cur, op.Fields)
			op.shown = map[string]any{"op": op.Op, "table": table, "fields_added": added, "fields_removed": removed, "rows_unchanged": rows()}
			cur = fieldInfos(op.Fields)
		case "schema_delete":
			if !exists {
				return "", tableNotFound(table)
			}
			op.shown = map[string]any{"op": op.Op, "table": table, "would_remove_yaml": yamlPath, "rows_orphaned": rows()}
			exists, cur = false, nil
		case "replace":
			if !exists {
				return "", tableNotFound(table)
			}
			if err := op.checkReplace(i, cur); err != nil {
				return "", err
			}
			// mini-app-mcp's words: match_keys is how many keys match has.
			op.shown = map[string]any{"op": "replace", "table": table, "match_keys": len(op.match), "items_count": len(op.items),
				"would_delete_estimate": nil, "would_insert": len(op.items), "note": "dry_run: DELETE/INSERT not executed"}
		}
	}
	if a.DryRun {
		// Nothing runs: nothing to audit.
		affects := make([]any, len(ops))
		for i, op := range ops {
			affects[i] = op.shown
		}
		return compact(map[string]any{"committed": false, "dry_run": true, "ops_executed": len(ops), "affects": affects,
			"yaml_writes": []string{}, "backups_written": []string{}, "registry_rebuilt": false})
	}

	// The mi source runs the batch: backups, the new table's file, the
	// SQL in one transaction, the schema.yaml after the commit.
	dops := make([]dialects.BatchOp, len(ops))
	writes := []string{}
	var affects map[string]any
	for i, op := range ops {
		dops[i] = dialects.BatchOp{Kind: kinds[i], SQL: op.SQL, Args: op.args, Match: op.match, Items: op.items, Def: op.yaml}
		switch op.Op {
		case "schema_create", "schema_update":
			writes = append(writes, yamlPath)
		case "replace":
			affects = map[string]any{}
		}
	}
	res, err := run.Run(dops, s.fileOptions())
	if err != nil {
		return "", fileErr(err)
	}
	if affects != nil {
		affects = map[string]any{"deleted": res.Deleted, "inserted": res.Inserted}
	}
	out := map[string]any{"committed": true, "ops_executed": len(ops), "yaml_writes": writes, "backups_written": res.Backups, "registry_rebuilt": true}
	if affects != nil {
		out["affects"] = affects
	}
	return compact(out)
}

// batchKinds are the ops of schema_batch as the mi source runs them.
var batchKinds = map[string]dialects.BatchOpKind{
	"query":         dialects.BatchQuery,
	"replace":       dialects.BatchReplace,
	"schema_create": dialects.BatchCreate,
	"schema_update": dialects.BatchUpdate,
	"schema_delete": dialects.BatchDelete,
}

// batchRefusal words a refusal of the engine's gates for a batch: what
// the batch needed (engine.BatchRights), and the pipeline's message (the
// caller's roles, or the lock). query and replace run SQL that neither
// row scopes nor column lists nor history can bound, so a batch holding
// one needs those rights unscoped and on every column.
func batchRefusal(ref engine.TableRef, kinds []dialects.BatchOpKind, err error) error {
	if fault.KindOf(err) != fault.Forbidden {
		return err
	}
	need, raw := engine.BatchRights(kinds)
	object := "mi/" + ref.Schema + "/" + ref.Table
	crud := need[1:] // need starts with the schema action
	list := strings.Join(crud, ", ")
	if len(crud) > 1 {
		list = strings.Join(crud[:len(crud)-1], ", ") + " and " + crud[len(crud)-1]
	}
	if raw {
		return fault.Wrap(fault.Forbidden, err, "schema_batch query and replace ops run SQL on the table file that no row scope or column list bounds: they need the schema action and %s on every row and column of %s (key_type, locks and templates): %s",
			list, object, fault.As(err).Message)
	}
	return fault.Wrap(fault.Forbidden, err, "schema_batch needs the schema action and %s on %s (key_type, locks and templates): %s", list, object, fault.As(err).Message)
}

func fieldInfos(fs []fieldArg) []mi.FieldInfo {
	out := make([]mi.FieldInfo, len(fs))
	for i, f := range fs {
		out[i] = mi.FieldInfo{Name: f.Name, Type: f.Type, Required: f.Required, Description: f.Description}
	}
	return out
}

// checkReplace validates a replace op: match a non-empty object of
// string values under [A-Za-z0-9_-]+ keys (VALIDATION), every item an
// object valid against the fields (BATCH_ABORTED items[j]).
func (op *batchOp) checkReplace(i int, fields []mi.FieldInfo) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(op.Match, &m); err != nil || m == nil || len(m) == 0 {
		return validationErr("match", reasonMatchEmpty)
	}
	for k, raw := range m {
		if !miTableName.MatchString(k) {
			return validationErr("match", fmt.Sprintf("invalid match key '%s': must match [A-Za-z0-9_-]+", k))
		}
		// A null would decode as "" and match nothing: the items would be
		// inserted beside the rows they were meant to replace.
		var v *string
		if err := json.Unmarshal(raw, &v); err != nil || v == nil {
			return validationErr("match."+k, reasonMatchString)
		}
		op.match = append(op.match, [2]string{k, *v})
	}
	sort.Slice(op.match, func(a, b int) bool { return op.match[a][0] < op.match[b][0] })
	t := &target{info: &mi.TableInfo{Fields: fields}, visible: map[string]bool{}}
	for _, f := range fields {
		t.visible[f.Name] = true
	}
	for j, raw := range op.Items {
		obj, err := dataObject(raw)
		if err != nil {
			return batchAborted(i, fmt.Sprintf("items[%d]: validation error on field '(root)': value must be a JSON object", j))
		}
		if err := t.validate(obj); err != nil {
			return batchAborted(i, fmt.Sprintf("items[%d]: %s", j, errText(err, "")))
		}
		data, err := compact(obj)
		if err != nil {
			return err
		}
		op.items = append(op.items, data)
	}
	return nil
}
