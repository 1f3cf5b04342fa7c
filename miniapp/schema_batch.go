package miniapp

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
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
	"replace":       {"match", "items"},
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
			return "", validationErr("table", "all ops in a batch must target the same table")
		}
		if strings.HasPrefix(op.Op, "schema_") {
			if scope != "" && op.Scope != scope {
				return "", validationErr("scope", "all schema ops in a batch must use the same scope")
			}
			scope = op.Scope
		}
	}
	if err := checkTableName(table); err != nil {
		return "", err
	}

	// Where the table lives, and the table as served now (nil: not yet).
	var d scopeDir
	var t *target
	if scope != "" {
		if d, err = s.scopeRoot(ctx, p, scope, a.Schema); err != nil {
			return "", err
		}
		if fileExists(d.schemaPath(table)) {
			if t, err = s.mountedIn(ctx, p, d, table); err != nil {
				return "", err
			}
		}
	} else {
		if t, err = s.resolve(ctx, p, table, a.Schema); err != nil {
			return "", err
		}
		st := s.scopeOf(t)
		d = scopeDir{scope: st.scope, schema: t.schema, root: st.root}
	}
	existed := t != nil
	yamlPath, dbPath := d.schemaPath(table), d.dbPath(table)

	// Rights, before anything runs: the batch is one operation on the
	// table object, through the engine's gates, audited like a write.
	done, err := s.authorizeBatch(ctx, p, "mi/"+d.schema+"/"+table, ops)
	if err != nil {
		return "", err
	}
	var touched int64
	defer func() {
		if done != nil {
			done(touched, err)
		}
	}()

	// Check every op against the state the ops before it leave.
	exists := existed
	var cur []mi.FieldInfo
	if t != nil {
		cur = t.info.Fields
	}
	rows := func() int64 {
		if !fileExists(dbPath) {
			return 0
		}
		n, _ := rowCount(ctx, dbPath)
		return n
	}
	hasSQL, creates := false, false
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
			hasSQL = true
			op.shown = map[string]any{"op": "query", "sql": op.SQL, "rows_affected": nil, "note": "dry_run: SQL not executed"}
		case "schema_create":
			if exists {
				return "", schemaExists(table)
			}
			if op.yaml, err = checkFields(table, op.Title, op.Description, op.Fields); err != nil {
				return "", err
			}
			op.shown = map[string]any{"op": op.Op, "table": table, "would_create": yamlPath, "already_exists": fileExists(yamlPath), "fields_count": len(op.Fields)}
			exists, creates, cur = true, true, fieldInfos(op.Fields)
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
			keys := make([]string, len(op.match))
			for k, m := range op.match {
				keys[k] = m[0]
			}
			hasSQL = true
			op.shown = map[string]any{"op": "replace", "table": table, "match_keys": keys, "items_count": len(op.items),
				"would_delete_estimate": nil, "would_insert": len(op.items), "note": "dry_run: matching rows are not counted; items were validated"}
		}
	}
	if a.DryRun {
		done = nil // nothing runs: nothing to audit
		affects := make([]any, len(ops))
		for i, op := range ops {
			affects[i] = op.shown
		}
		return compact(map[string]any{"committed": false, "dry_run": true, "ops_executed": len(ops), "affects": affects,
			"yaml_writes": []string{}, "backups_written": []string{}, "registry_rebuilt": false})
	}

	// Backups first, one pair per update or delete op of the table as it
	// was.
	backups := []string{}
	for _, op := range ops {
		if existed && (op.Op == "schema_update" || op.Op == "schema_delete") {
			dir, err := s.backup(ctx, d, table)
			if err != nil {
				return "", err
			}
			backups = append(backups, dir)
		}
	}
	// A table created by the batch gets its file before any SQL runs.
	madeDB, madeDir := false, false
	if creates && !fileExists(dbPath) {
		madeDir = !fileExists(filepath.Dir(dbPath))
		if err := ensureTableDB(d.root, table); err != nil {
			return "", err
		}
		madeDB = true
	}
	var tmpYAML string
	undo := func() {
		if tmpYAML != "" {
			os.Remove(tmpYAML)
		}
		if madeDB {
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				os.Remove(dbPath + suffix)
			}
		}
		if madeDir {
			os.Remove(filepath.Dir(dbPath)) // only if empty
		}
	}
	// The yaml the batch leaves, written next to the file before commit
	// and renamed into place after it.
	var final []byte
	writes := []string{}
	for _, op := range ops {
		switch op.Op {
		case "schema_create", "schema_update":
			final = op.yaml
			writes = append(writes, yamlPath)
		case "schema_delete":
			final = nil
		}
	}
	if exists && final != nil {
		f, err := os.CreateTemp(filepath.Dir(yamlPath), ".schema.yaml.tmp-*")
		if err == nil {
			_, err = f.Write(final)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(f.Name())
			}
		}
		if err != nil {
			undo()
			return "", ioErr(err)
		}
		tmpYAML = f.Name()
		defer os.Remove(tmpYAML)
	}
	var affects map[string]any
	if hasSQL {
		deleted, inserted, changed, err := runBatchSQL(ctx, dbPath, ops)
		if err != nil {
			undo()
			return "", err
		}
		touched = deleted + inserted + changed
		for _, op := range ops {
			if op.Op == "replace" {
				affects = map[string]any{"deleted": deleted, "inserted": inserted}
			}
		}
	}
	if len(writes) > 0 || existed != exists {
		if tmpYAML != "" {
			if err := os.Chmod(tmpYAML, s.filePerm()); err != nil {
				return "", ioErr(err)
			}
			if err := os.Rename(tmpYAML, yamlPath); err != nil {
				return "", ioErr(err)
			}
		} else if existed && !exists {
			if err := os.Remove(yamlPath); err != nil {
				return "", ioErr(err)
			}
		}
	}
	s.eng.Refresh(p, "mi", d.schema)
	out := map[string]any{"committed": true, "ops_executed": len(ops), "yaml_writes": writes, "backups_written": backups, "registry_rebuilt": true}
	if affects != nil {
		out["affects"] = affects
	}
	return compact(out)
}

// batchRights are the rights each op of schema_batch exercises: query runs
// any SQL on the table's file (all four CRUD rights); replace deletes the
// matching rows, counts them and inserts its items; the schema ops change
// the definition and act on rows as their schema_* tools do.
var batchRights = map[string][]string{
	"query":         {store.ActionSchema, store.ActionCreate, store.ActionRead, store.ActionUpdate, store.ActionDelete},
	"replace":       {store.ActionSchema, store.ActionCreate, store.ActionRead, store.ActionDelete},
	"schema_create": {store.ActionSchema, store.ActionCreate},
	"schema_update": {store.ActionSchema, store.ActionUpdate},
	"schema_delete": {store.ActionSchema, store.ActionDelete},
}

// authorizeBatch passes a batch through the engine's gates on the table
// object: the union of its ops' rights, in the order schema, create, read,
// update, delete. query and replace run SQL that neither row scopes nor
// column lists nor history can bound, so a batch holding one needs those
// rights unscoped and on every column. The refusal names what the batch
// needed and keeps the pipeline's message (the caller's roles, or the
// lock); it is audited by the engine.
func (s *Service) authorizeBatch(ctx context.Context, p *auth.Principal, object string, ops []*batchOp) (func(int64, error), error) {
	var need []string
	raw := false
	for _, a := range []string{store.ActionSchema, store.ActionCreate, store.ActionRead, store.ActionUpdate, store.ActionDelete} {
		for _, op := range ops {
			if slices.Contains(batchRights[op.Op], a) {
				need = append(need, a)
				break
			}
		}
	}
	for _, op := range ops {
		raw = raw || op.Op == "query" || op.Op == "replace"
	}
	done, err := s.eng.AuthorizeRaw(ctx, p, object, raw, need...)
	if err == nil || fault.KindOf(err) != fault.Forbidden {
		return done, err
	}
	crud := need[1:] // need starts with the schema action
	list := strings.Join(crud, ", ")
	if len(crud) > 1 {
		list = strings.Join(crud[:len(crud)-1], ", ") + " and " + crud[len(crud)-1]
	}
	if raw {
		return nil, fault.Wrap(fault.Forbidden, err, "schema_batch query and replace ops run SQL on the table file that no row scope or column list bounds: they need the schema action and %s on every row and column of %s (key_type, locks and templates): %s",
			list, object, fault.As(err).Message)
	}
	return nil, fault.Wrap(fault.Forbidden, err, "schema_batch needs the schema action and %s on %s (key_type, locks and templates): %s", list, object, fault.As(err).Message)
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
		return validationErr("match", "match must be a non-empty object")
	}
	for k, raw := range m {
		if !miTableName.MatchString(k) {
			return validationErr("match", fmt.Sprintf("invalid match key '%s': must match [A-Za-z0-9_-]+", k))
		}
		// A null would decode as "" and match nothing: the items would be
		// inserted beside the rows they were meant to replace.
		var v *string
		if err := json.Unmarshal(raw, &v); err != nil || v == nil {
			return validationErr("match."+k, "match values must be strings")
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

// runBatchSQL runs the query and replace ops in one transaction and one
// SAVEPOINT on the table's file; any failure rolls everything back and is
// BATCH_ABORTED naming the op. It counts the rows replace deleted and
// inserted, and those the query ops changed.
func runBatchSQL(ctx context.Context, dbPath string, ops []*batchOp) (deleted, inserted, changed int64, err error) {
	db, err := sql.Open("sqlite", "file:"+sqlitePath(dbPath)+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return 0, 0, 0, asStorage(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, 0, 0, asStorage(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return 0, 0, 0, asStorage(err)
	}
	committed := false
	defer func() {
		if !committed {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if _, err := conn.ExecContext(ctx, "SAVEPOINT schema_batch"); err != nil {
		return 0, 0, 0, asStorage(err)
	}
	now := time.Now().Unix()
	for i, op := range ops {
		switch op.Op {
		case "query":
			res, err := conn.ExecContext(ctx, op.SQL, op.args...)
			if err != nil {
				return 0, 0, 0, batchAborted(i, err.Error())
			}
			if n, err := res.RowsAffected(); err == nil {
				changed += n
			}
		case "replace":
			where := make([]string, len(op.match))
			var args []any
			for k, m := range op.match {
				where[k] = "json_extract(data, ?) = ?"
				args = append(args, `$."`+m[0]+`"`, m[1])
			}
			res, err := conn.ExecContext(ctx, "DELETE FROM rows WHERE "+strings.Join(where, " AND "), args...)
			if err != nil {
				return 0, 0, 0, batchAborted(i, err.Error())
			}
			n, _ := res.RowsAffected()
			deleted += n
			for _, data := range op.items {
				if _, err := conn.ExecContext(ctx, "INSERT INTO rows (id, data, created_at, updated_at) VALUES (?, ?, ?, ?)",
					uuid.NewString(), data, now, now); err != nil {
					return 0, 0, 0, batchAborted(i, err.Error())
				}
				inserted++
			}
		}
	}
	if _, err := conn.ExecContext(ctx, "RELEASE schema_batch"); err != nil {
		return 0, 0, 0, asStorage(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return 0, 0, 0, asStorage(err)
	}
	committed = true
	return deleted, inserted, changed, nil
}

// ensureTableDB creates <root>/<table>/<table>.db with the mini-app
// layout and no schema.yaml yet: mi.CreateTable makes the table in a
// hidden scratch directory (the scan skips names starting with '.') and
// its file is moved into place.
func ensureTableDB(root, table string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return ioErr(err)
	}
	tmp, err := os.MkdirTemp(root, ".batch-*")
	if err != nil {
		return ioErr(err)
	}
	defer os.RemoveAll(tmp)
	if err := mi.CreateTable(tmp, table, []byte("table: "+table+"\nfields: []\n")); err != nil {
		return asStorage(err)
	}
	if err := os.MkdirAll(filepath.Join(root, table), 0o755); err != nil {
		return ioErr(err)
	}
	if err := os.Rename(mi.DBPath(tmp, table), mi.DBPath(root, table)); err != nil {
		return ioErr(err)
	}
	return nil
}
