package miniapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// EnvBackupRetention names the number of backup pairs (yaml + db) kept
// per table under <scope_root>/_backup (default DefaultBackupRetention).
const EnvBackupRetention = "MINI_APP_BACKUP_RETENTION"

// DefaultBackupRetention is the retention without (or with an invalid)
// MINI_APP_BACKUP_RETENTION.
const DefaultBackupRetention = 10

// BackupRetention reads MINI_APP_BACKUP_RETENTION through getenv: a
// positive integer, else DefaultBackupRetention.
func BackupRetention(getenv func(string) string) int {
	n, err := strconv.Atoi(strings.TrimSpace(getenv(EnvBackupRetention)))
	if err != nil || n < 1 {
		return DefaultBackupRetention
	}
	return n
}

const scopeProp = `"scope":{"type":"string","enum":["project","user"],"description":"Where the schema.yaml lives: project or user."}`
const schemaDBProp = `"schema":{"type":"string","description":"Gateway only: the mi database the scope project means (default: the first of your project's mi databases, in schema-name order)."}`
const defProps = `"table":{"type":"string","description":"Table name: [A-Za-z0-9_-]+, not starting with '.'."},` + scopeProp + `,"title":{"type":"string"},"description":{"type":"string"},"fields":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"type":{"type":"string","enum":["string","number","boolean","array","object"]},"required":{"type":"boolean"},"description":{"type":"string"}},"required":["name","type"]}},"dry_run":{"type":"boolean"},` + schemaDBProp

func init() {
	before := "data_snapshot"
	if Lookup(before) == nil {
		// snapshot.go registers data_snapshot before row_materialize
		// after this file's init has run.
		before = "row_materialize"
	}
	insertTools(before,
		&Tool{Name: "schema_create", Action: query.Insert,
			Description: "Create a table: writes <scope_root>/<table>/schema.yaml and creates <table>.db; the table is served at once. Returns {created, schema_path, scope}; dry_run previews {would_create, already_exists}. SCHEMA_EXISTS if the table's yaml exists. Needs role admin or the schema action on the table, plus create.",
			InputSchema: obj(defProps, "table", "scope", "fields"), run: (*Service).schemaCreate},
		&Tool{Name: "schema_update", Action: query.Update, Idempotent: true,
			Description: "Replace a table's schema.yaml (fields = full replacement; dump/history reset to defaults). Backs up the yaml and a SQLite copy to <scope_root>/_backup first (MINI_APP_BACKUP_RETENTION pairs kept). No DDL. Returns {updated, schema_path, scope, fields_added, fields_removed, fields_type_changed}. Needs role admin or the schema action, plus update.",
			InputSchema: obj(defProps, "table", "scope", "fields"), run: (*Service).schemaUpdate},
		&Tool{Name: "schema_delete", Action: query.Delete, Destructive: true,
			Description: "Remove a table's schema.yaml after a backup pair in <scope_root>/_backup; the .db file is kept. Returns {deleted, schema_path_removed, db_file_retained, scope}. Needs role admin or the schema action, plus delete.",
			InputSchema: obj(`"table":{"type":"string"},`+scopeProp+`,"dry_run":{"type":"boolean"},`+schemaDBProp, "table", "scope"), run: (*Service).schemaDelete},
		&Tool{Name: "schema_batch", Action: query.Update, Destructive: true,
			Description: "Run ops on one table atomically: query (raw SQL on the table's SQLite file, params bound), schema_create, schema_update, schema_delete, replace {match, items} (rows swapped without history). query and replace need the schema action and, with no row scope or column limit, create, read, update and delete (replace: create, read, delete) on the table. Backups first, query/replace in one SAVEPOINT, yaml written after commit. Any failure: BATCH_ABORTED, nothing changed. dry_run previews.",
			InputSchema: obj(`"ops":{"type":"array","items":{"type":"object","properties":{"op":{"type":"string","enum":["query","schema_create","schema_update","schema_delete","replace"]}},"required":["op","table"]}},"dry_run":{"type":"boolean"},`+schemaDBProp, "ops"), run: (*Service).schemaBatch},
	)
}

func schemaExists(table string) *Error {
	return newErr(fault.Conflict, "SCHEMA_EXISTS", map[string]any{"table": table}, "schema already exists: %s", table)
}

func backupErr(msg string) *Error {
	return newErr(fault.Unavailable, "BACKUP_ERROR", nil, "backup error: %s", msg)
}

func ioErr(err error) *Error {
	return newErr(fault.Internal, "IO_ERROR", nil, "io error: %s", errMsg(err))
}

// batchAborted is BATCH_ABORTED for op i (0-based).
func batchAborted(i int, reason string) *Error {
	return newErr(fault.Invalid, "BATCH_ABORTED", map[string]any{"op_index": i, "reason": reason}, "batch aborted at op #%d: %s", i, reason)
}

// miTableName is the rule of replace's match keys.
var miTableName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// checkTableName is mini-app-mcp's table name rule for the schema tools
// (a table name is a directory name), with its texts.
func checkTableName(name string) error {
	switch {
	case name == "":
		return validationErr("table", "table name must not be empty")
	case name == "." || name == "..":
		return validationErr("table", fmt.Sprintf("table name '%s' is reserved", name))
	case strings.HasPrefix(name, "."):
		return validationErr("table", "table name must not start with '.'")
	}
	for _, c := range name {
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return validationErr("table", fmt.Sprintf("table name contains invalid character '%c'; allowed: [A-Za-z0-9_-]", c))
		}
	}
	return nil
}

// fieldArg is one field of a schema definition argument.
type fieldArg struct {
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Required    bool    `json:"required"`
	Description *string `json:"description"`
}

// defArgs are the arguments of schema_create and schema_update (and of
// the batch's schema ops).
type defArgs struct {
	Table       string     `json:"table"`
	Scope       string     `json:"scope"`
	Schema      string     `json:"schema"`
	Title       *string    `json:"title"`
	Description *string    `json:"description"`
	Fields      []fieldArg `json:"fields"`
	DryRun      bool       `json:"dry_run"`
}

// scopeDir is where a scope's tables live: the mi database (schema name)
// and its directory (the scope root).
type scopeDir struct {
	scope, schema, root string
}

func (d scopeDir) schemaPath(table string) string { return mi.SchemaPath(d.root, table) }
func (d scopeDir) dbPath(table string) string     { return mi.DBPath(d.root, table) }

// scopeRoot maps a scope to one of the caller's mi databases. Drop-in
// mode: project and user are its databases of those names. Gateway mode:
// project is the schema argument, or the first mi database in schema-name
// order; there is no user scope.
func (s *Service) scopeRoot(ctx context.Context, p *auth.Principal, scope, schema string) (scopeDir, error) {
	if scope != SchemaProject && scope != SchemaUser {
		return scopeDir{}, validationErr("scope", fmt.Sprintf("unrecognised scope '%s': expected 'project' or 'user'", scope))
	}
	dbs, err := s.miDatabases(ctx, p)
	if err != nil {
		return scopeDir{}, err
	}
	want := schema
	if s.cfg.Mounted {
		want = scope
	} else if scope == SchemaUser {
		return scopeDir{}, configErr("scope 'user' is not mounted on this server (the gateway serves mi databases as scope project)")
	}
	for _, d := range dbs {
		if want == "" || d[0] == want {
			root := filepath.Dir(filepath.Dir(mi.SchemaPath(d[1], "x")))
			return scopeDir{scope: scope, schema: d[0], root: root}, nil
		}
	}
	if s.cfg.Mounted || want == "" {
		return scopeDir{}, configErr(fmt.Sprintf("scope '%s' directory is not configured", scope))
	}
	return scopeDir{}, configErr(fmt.Sprintf("no mi database %q in this project", want))
}

// checkFields validates a definition's fields with the contract's field
// names (fields[<name>].type) and renders its schema.yaml.
func checkFields(table string, title, description *string, fields []fieldArg) ([]byte, error) {
	seen := map[string]bool{}
	for i, f := range fields {
		if f.Name == "" {
			return nil, validationErr(fmt.Sprintf("fields[%d].name", i), "field name must not be empty")
		}
		if seen[f.Name] {
			return nil, validationErr(fmt.Sprintf("fields[%s]", f.Name), "duplicate field name")
		}
		seen[f.Name] = true
		switch f.Type {
		case "string", "number", "boolean", "array", "object":
		default:
			return nil, validationErr(fmt.Sprintf("fields[%s].type", f.Name),
				fmt.Sprintf("unknown type '%s': expected one of string, number, boolean, array, object", f.Type))
		}
	}
	// The file as mini-app-mcp's SchemaConfig serializes: every key in
	// struct order, absent options as null, dump reset and history full.
	str := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	list := make([]any, 0, len(fields))
	for _, f := range fields {
		list = append(list, orderedMap{{"name", f.Name}, {"type", f.Type}, {"required", f.Required}, {"description", str(f.Description)}})
	}
	b, err := upstreamYAML(orderedMap{
		{"table", table}, {"title", str(title)}, {"description", str(description)},
		{"fields", list}, {"dump", nil}, {"history", "full"},
	})
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode schema.yaml")
	}
	return b, nil
}

// defines reports whether the scope's database holds table's
// schema.yaml, read through the engine (Defined, which reads it from disk
// on the call) as mini-app-mcp looks for <scope root>/<table>/schema.yaml.
func (s *Service) defines(ctx context.Context, p *auth.Principal, d scopeDir, table string) bool {
	_, err := s.eng.Defined(ctx, p, d.tableRef(table))
	return err == nil
}

func (s *Service) schemaCreate(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a defArgs
	if err := decode(args, &a, "table", "scope", "fields"); err != nil {
		return "", err
	}
	if err := checkTableName(a.Table); err != nil {
		return "", err
	}
	d, err := s.scopeRoot(ctx, p, a.Scope, a.Schema)
	if err != nil {
		return "", err
	}
	ref := d.tableRef(a.Table)
	path := d.schemaPath(a.Table)
	if a.DryRun {
		// The gates of the create, without running it.
		if _, err := s.eng.CountRows(ctx, p, ref, engine.OpCreate); err != nil {
			return "", schemaToolErr(p, "schema_create", ref, err)
		}
		return compact(map[string]any{"dry_run": true, "affects": map[string]any{"would_create": path, "already_exists": s.defines(ctx, p, d, a.Table)}})
	}
	y, err := checkFields(a.Table, a.Title, a.Description, a.Fields)
	if err != nil {
		return "", err
	}
	if err := s.eng.CreateTable(ctx, p, ref, y); err != nil {
		var ar *engine.ActionRefused
		switch {
		case errors.As(err, &ar):
			return "", schemaToolErr(p, "schema_create", ref, err)
		case fault.KindOf(err) == fault.Conflict:
			return "", schemaExists(a.Table)
		}
		return "", ioErr(err)
	}
	return compact(map[string]any{"created": a.Table, "schema_path": path, "scope": a.Scope})
}

// fieldDiff compares two field lists: names added, removed and whose type
// changed, each sorted.
func fieldDiff(old []mi.FieldInfo, fields []fieldArg) (added, removed, changed []string) {
	added, removed, changed = []string{}, []string{}, []string{}
	was := map[string]string{}
	for _, f := range old {
		was[f.Name] = f.Type
	}
	now := map[string]bool{}
	for _, f := range fields {
		now[f.Name] = true
		t, ok := was[f.Name]
		switch {
		case !ok:
			added = append(added, f.Name)
		case t != f.Type:
			changed = append(changed, f.Name)
		}
	}
	for _, f := range old {
		if !now[f.Name] {
			removed = append(removed, f.Name)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	sort.Strings(changed)
	return added, removed, changed
}

// mountedIn resolves a table of a scope: it must be served from that
// scope's database and the caller must see it, else TABLE_NOT_FOUND.
func (s *Service) mountedIn(ctx context.Context, p *auth.Principal, d scopeDir, table string) (*target, error) {
	t, err := s.resolve(ctx, p, table, d.schema)
	if err != nil {
		return nil, err
	}
	if !s.defines(ctx, p, d, table) {
		return nil, tableNotFound(table)
	}
	return t, nil
}

// mountedTarget checks the table name and finds the scope and the mounted
// table a schema_update or schema_delete names. The rights are the
// engine's to check, when the tool calls it.
func (s *Service) mountedTarget(ctx context.Context, p *auth.Principal, table, scope, schema string) (scopeDir, *target, error) {
	if err := checkTableName(table); err != nil {
		return scopeDir{}, nil, err
	}
	d, err := s.scopeRoot(ctx, p, scope, schema)
	if err != nil {
		return scopeDir{}, nil, err
	}
	t, err := s.mountedIn(ctx, p, d, table)
	if err != nil {
		return scopeDir{}, nil, err
	}
	return d, t, nil
}

func (s *Service) schemaUpdate(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a defArgs
	if err := decode(args, &a, "table", "scope", "fields"); err != nil {
		return "", err
	}
	d, t, err := s.mountedTarget(ctx, p, a.Table, a.Scope, a.Schema)
	if err != nil {
		return "", err
	}
	ref := d.tableRef(a.Table)
	y, err := checkFields(a.Table, a.Title, a.Description, a.Fields)
	if err != nil {
		return "", err
	}
	added, removed, changed := fieldDiff(t.info.Fields, a.Fields)
	if a.DryRun {
		n, err := s.eng.CountRows(ctx, p, ref, engine.OpRedefine)
		if err != nil {
			return "", schemaToolErr(p, "schema_update", ref, err)
		}
		return compact(map[string]any{"dry_run": true, "affects": map[string]any{
			"fields_added": added, "fields_removed": removed, "fields_type_changed": changed, "rows_unchanged": n}})
	}
	if _, err := s.eng.ReplaceSchema(ctx, p, ref, y, s.fileOptions()); err != nil {
		return "", schemaToolErr(p, "schema_update", ref, err)
	}
	return compact(map[string]any{"updated": a.Table, "schema_path": d.schemaPath(a.Table), "scope": a.Scope,
		"fields_added": added, "fields_removed": removed, "fields_type_changed": changed})
}

func (s *Service) schemaDelete(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		Table  string `json:"table"`
		Scope  string `json:"scope"`
		Schema string `json:"schema"`
		DryRun bool   `json:"dry_run"`
	}
	if err := decode(args, &a, "table", "scope"); err != nil {
		return "", err
	}
	d, _, err := s.mountedTarget(ctx, p, a.Table, a.Scope, a.Schema)
	if err != nil {
		return "", err
	}
	ref := d.tableRef(a.Table)
	path, db := d.schemaPath(a.Table), d.dbPath(a.Table)
	if a.DryRun {
		n, err := s.eng.CountRows(ctx, p, ref, engine.OpDrop)
		if err != nil {
			return "", schemaToolErr(p, "schema_delete", ref, err)
		}
		return compact(map[string]any{"dry_run": true, "affects": map[string]any{
			"rows_orphaned": n, "would_remove_yaml": path, "db_file_retained": db}})
	}
	if _, err := s.eng.DropSchema(ctx, p, ref, s.fileOptions()); err != nil {
		return "", schemaToolErr(p, "schema_delete", ref, err)
	}
	return compact(map[string]any{"deleted": a.Table, "schema_path_removed": path, "db_file_retained": db, "scope": a.Scope})
}

func asStorage(err error) *Error {
	return newErr(fault.Internal, "STORAGE_ERROR", nil, "storage error: %s", err.Error())
}
