package miniapp

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
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

// miTableName is the name rule of schema_create (and of replace's match
// keys).
var miTableName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func checkTableName(name string) error {
	if !miTableName.MatchString(name) {
		return validationErr("table", fmt.Sprintf("invalid table name '%s': must match [A-Za-z0-9_-]+ and must not start with '.'", name))
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
func (d scopeDir) backupDir() string              { return filepath.Join(d.root, "_backup") }

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
	type yfield struct {
		Name        string  `yaml:"name"`
		Type        string  `yaml:"type"`
		Required    bool    `yaml:"required"`
		Description *string `yaml:"description,omitempty"`
	}
	doc := struct {
		Table       string   `yaml:"table"`
		Title       *string  `yaml:"title,omitempty"`
		Description *string  `yaml:"description,omitempty"`
		Fields      []yfield `yaml:"fields"`
	}{Table: table, Title: title, Description: description, Fields: []yfield{}}
	for _, f := range fields {
		doc.Fields = append(doc.Fields, yfield{f.Name, f.Type, f.Required, f.Description})
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode schema.yaml")
	}
	if err := enc.Close(); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode schema.yaml")
	}
	return buf.Bytes(), nil
}

// checkSchemaRights is the schema_* permission rule: role admin or the
// schema action on the table object (mi/<schema>/<table>), and the CRUD
// right act on it, key_type and locks included. t is the mounted table
// (nil for one that does not exist yet): its right is also checked
// through the pipeline.
func (s *Service) checkSchemaRights(ctx context.Context, p *auth.Principal, tool, schema, table string, act query.Action, t *target) error {
	object := "mi/" + schema + "/" + table
	roles := strings.Join(p.Roles, ", ")
	if !s.eng.Allowed(p, object, store.ActionSchema) {
		return fault.New(fault.Forbidden, "%s changes table definitions and needs role %s or the schema action on %s, got [%s]", tool, AdminRole, object, roles)
	}
	if !s.eng.Allowed(p, object, act.String()) {
		return fault.New(fault.Forbidden, "%s needs the %s right on %s (key_type, locks and templates), got [%s]", tool, act, object, roles)
	}
	if t != nil {
		return s.allowed(ctx, p, t, act)
	}
	return nil
}

// writeFileAtomic writes b to path, with mode perm, through a temporary
// file in the same directory and a rename.
func writeFileAtomic(path string, b []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Chmod(name, perm); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
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
	if err := s.checkSchemaRights(ctx, p, "schema_create", d.schema, a.Table, query.Insert, nil); err != nil {
		return "", err
	}
	path := d.schemaPath(a.Table)
	if a.DryRun {
		return compact(map[string]any{"dry_run": true, "affects": map[string]any{"would_create": path, "already_exists": fileExists(path)}})
	}
	y, err := checkFields(a.Table, a.Title, a.Description, a.Fields)
	if err != nil {
		return "", err
	}
	if fileExists(path) {
		return "", schemaExists(a.Table)
	}
	if err := mi.CreateTable(d.root, a.Table, y); err != nil {
		if fault.KindOf(err) == fault.Conflict {
			return "", schemaExists(a.Table)
		}
		return "", ioErr(err)
	}
	s.eng.Refresh(p, "mi", d.schema)
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
	if !fileExists(d.schemaPath(table)) {
		return nil, tableNotFound(table)
	}
	return t, nil
}

// mountedTarget checks the table name, finds the scope and the mounted
// table a schema_update or schema_delete names, and checks the caller's
// rights (act is the row right the tool needs besides the schema action).
func (s *Service) mountedTarget(ctx context.Context, p *auth.Principal, tool, table, scope, schema string, act query.Action) (scopeDir, *target, error) {
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
	if err := s.checkSchemaRights(ctx, p, tool, d.schema, table, act, t); err != nil {
		return scopeDir{}, nil, err
	}
	return d, t, nil
}

func (s *Service) schemaUpdate(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a defArgs
	if err := decode(args, &a, "table", "scope", "fields"); err != nil {
		return "", err
	}
	d, t, err := s.mountedTarget(ctx, p, "schema_update", a.Table, a.Scope, a.Schema, query.Update)
	if err != nil {
		return "", err
	}
	y, err := checkFields(a.Table, a.Title, a.Description, a.Fields)
	if err != nil {
		return "", err
	}
	added, removed, changed := fieldDiff(t.info.Fields, a.Fields)
	if a.DryRun {
		n, err := rowCount(ctx, d.dbPath(a.Table))
		if err != nil {
			return "", asStorage(err)
		}
		return compact(map[string]any{"dry_run": true, "affects": map[string]any{
			"fields_added": added, "fields_removed": removed, "fields_type_changed": changed, "rows_unchanged": n}})
	}
	if _, err := s.backup(ctx, d, a.Table); err != nil {
		return "", err
	}
	path := d.schemaPath(a.Table)
	if err := writeFileAtomic(path, y, s.filePerm()); err != nil {
		return "", ioErr(err)
	}
	s.eng.Refresh(p, "mi", d.schema)
	return compact(map[string]any{"updated": a.Table, "schema_path": path, "scope": a.Scope,
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
	d, _, err := s.mountedTarget(ctx, p, "schema_delete", a.Table, a.Scope, a.Schema, query.Delete)
	if err != nil {
		return "", err
	}
	path, db := d.schemaPath(a.Table), d.dbPath(a.Table)
	if a.DryRun {
		var n int64
		if fileExists(db) {
			if n, err = rowCount(ctx, db); err != nil {
				return "", asStorage(err)
			}
		}
		return compact(map[string]any{"dry_run": true, "affects": map[string]any{
			"rows_orphaned": n, "would_remove_yaml": path, "db_file_retained": db}})
	}
	if _, err := s.backup(ctx, d, a.Table); err != nil {
		return "", err
	}
	if err := os.Remove(path); err != nil {
		return "", ioErr(err)
	}
	s.eng.Refresh(p, "mi", d.schema)
	return compact(map[string]any{"deleted": a.Table, "schema_path_removed": path, "db_file_retained": db, "scope": a.Scope})
}

func asStorage(err error) *Error {
	return newErr(fault.Internal, "STORAGE_ERROR", nil, "storage error: %s", err.Error())
}

// backup writes the pair <root>/_backup/<table>.<unix_secs>.yaml + .db
// (the db through VACUUM INTO, consistent while the file stays in use)
// and purges the pairs beyond the retention. Two backups within one
// second take the next free second. It returns the backup directory.
func (s *Service) backup(ctx context.Context, d scopeDir, table string) (string, error) {
	db := d.dbPath(table)
	if _, err := os.Stat(db); err != nil {
		return "", backupErr(fmt.Sprintf("database file of table '%s' not found: %s", table, db))
	}
	y, err := os.ReadFile(d.schemaPath(table))
	if err != nil {
		return "", backupErr(fmt.Sprintf("cannot read schema.yaml of table '%s': %s", table, errMsg(err)))
	}
	dir := d.backupDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", backupErr("cannot create backup dir: " + errMsg(err))
	}
	secs := time.Now().Unix()
	base := func(n int64) string { return filepath.Join(dir, fmt.Sprintf("%s.%d", table, n)) }
	for fileExists(base(secs)+".yaml") || fileExists(base(secs)+".db") {
		secs++
	}
	if err := vacuumInto(ctx, db, base(secs)+".db"); err != nil {
		return "", backupErr("sqlite backup failed: " + err.Error())
	}
	if err := writeFileAtomic(base(secs)+".yaml", y, s.filePerm()); err != nil {
		os.Remove(base(secs) + ".db")
		return "", backupErr("cannot write yaml backup: " + errMsg(err))
	}
	purgeBackups(dir, table, BackupRetention(s.envOf()))
	return dir, nil
}

// vacuumInto copies a SQLite file consistently into dst, through a
// temporary name and a rename.
func vacuumInto(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", "file:"+sqlitePath(src)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name) // VACUUM INTO creates the file itself
	defer os.Remove(name)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", name); err != nil {
		return err
	}
	return os.Rename(name, dst)
}

// backupGenerations lists the unix_secs of a table's backups (yaml or db),
// newest first.
func backupGenerations(dir, table string) []int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	seen := map[int64]bool{}
	var out []int64
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), table+".")
		if !ok || e.IsDir() {
			continue
		}
		ts, ok := strings.CutSuffix(rest, ".yaml")
		if !ok {
			if ts, ok = strings.CutSuffix(rest, ".db"); !ok {
				continue
			}
		}
		n, err := strconv.ParseUint(ts, 10, 63)
		if err != nil || seen[int64(n)] {
			continue
		}
		seen[int64(n)] = true
		out = append(out, int64(n))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}

// purgeBackups removes a table's backup pairs beyond the newest keep.
func purgeBackups(dir, table string, keep int) {
	for i, n := range backupGenerations(dir, table) {
		if i < keep {
			continue
		}
		for _, ext := range []string{".yaml", ".db"} {
			_ = os.Remove(filepath.Join(dir, fmt.Sprintf("%s.%d%s", table, n, ext)))
		}
	}
}
