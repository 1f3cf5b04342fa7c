package miniapp

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/fault"

	_ "modernc.org/sqlite" // the alias store's driver
)

// GlobalAliasFile is the alias store of a scope root, as mini-app-mcp
// names it.
const GlobalAliasFile = "_global.db"

const aliasDDL = `CREATE TABLE IF NOT EXISTS _global_aliases (
	name TEXT PRIMARY KEY,
	sources_json TEXT NOT NULL,
	aggregator_json TEXT,
	filter TEXT NOT NULL,
	default_limit INTEGER,
	description TEXT,
	params_schema TEXT,
	fields TEXT,
	order_by TEXT
)`

// scope is one alias store: a mi database's directory, named project or
// user as mini-app-mcp reports it.
type scope struct {
	name, schema, dir string
}

// aliasRow is one stored global alias, columns as stored.
type aliasRow struct {
	Name         string
	Sources      string
	Aggregator   sql.NullString
	Filter       string
	DefaultLimit sql.NullInt64
	Description  sql.NullString
	ParamsSchema sql.NullString
	Fields       sql.NullString
	OrderBy      sql.NullString
	scope        scope
}

// scopes lists the caller's alias stores, in lookup order: every mi
// database other than the drop-in user and legacy ones is a project scope
// (schema-name order), then the user scope.
func (s *Service) scopes(ctx context.Context, p *auth.Principal) ([]scope, error) {
	dbs, err := s.miDatabases(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []scope
	var user *scope
	for _, d := range dbs {
		dir := dirOf(d[1])
		switch d[0] {
		case SchemaLegacy:
			if s.cfg.Mounted {
				continue
			}
		case SchemaUser:
			user = &scope{name: "user", schema: d[0], dir: dir}
			continue
		}
		out = append(out, scope{name: "project", schema: d[0], dir: dir})
	}
	if user != nil {
		out = append(out, *user)
	}
	for _, sc := range out {
		if err := migrateLegacy(ctx, sc); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dirOf is the directory of a mi database's DSN (a path or a file: URL).
func dirOf(dsn string) string {
	dsn = strings.TrimSpace(dsn)
	dsn = strings.TrimPrefix(dsn, "file://")
	dsn = strings.TrimPrefix(dsn, "file:")
	return filepath.Clean(dsn)
}

// openAliases opens (creating) the alias store of a scope. It holds
// metadata only; row data is never read from here.
func openAliases(ctx context.Context, sc scope) (*sql.DB, error) {
	if fi, err := os.Stat(sc.dir); err != nil || !fi.IsDir() {
		return nil, configErr("alias store directory is missing: " + sc.dir)
	}
	path := filepath.Join(sc.dir, GlobalAliasFile)
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	db, err := sql.Open("sqlite", "file:"+esc+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "open alias store")
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, aliasDDL); err != nil {
		db.Close()
		return nil, storageErr(err)
	}
	return db, nil
}

func storageErr(err error) *Error {
	return newErr(fault.Internal, "STORAGE_ERROR", nil, "storage error: %s", err.Error())
}

// insertAlias stores a new alias; false when the name is taken.
func insertAlias(ctx context.Context, sc scope, r aliasRow) (bool, error) {
	db, err := openAliases(ctx, sc)
	if err != nil {
		return false, err
	}
	defer db.Close()
	res, err := db.ExecContext(ctx, `INSERT INTO _global_aliases
		(name, sources_json, aggregator_json, filter, default_limit, description, params_schema, fields, order_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING`,
		r.Name, r.Sources, r.Aggregator, r.Filter, r.DefaultLimit, r.Description, r.ParamsSchema, r.Fields, r.OrderBy)
	if err != nil {
		return false, storageErr(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, storageErr(err)
	}
	return n == 1, nil
}

const aliasCols = `name, sources_json, aggregator_json, filter, default_limit, description, params_schema, fields, order_by`

func scanAlias(sc interface{ Scan(...any) error }, r *aliasRow) error {
	return sc.Scan(&r.Name, &r.Sources, &r.Aggregator, &r.Filter, &r.DefaultLimit, &r.Description, &r.ParamsSchema, &r.Fields, &r.OrderBy)
}

// storeHas tells whether a scope's store exists (no file is created).
func storeHas(sc scope) bool {
	_, err := os.Stat(filepath.Join(sc.dir, GlobalAliasFile))
	return err == nil
}

// getAlias finds an alias in the scopes, in order.
func getAlias(ctx context.Context, scopes []scope, name string) (*aliasRow, error) {
	for _, sc := range scopes {
		if !storeHas(sc) {
			continue
		}
		db, err := openAliases(ctx, sc)
		if err != nil {
			return nil, err
		}
		r := aliasRow{scope: sc}
		err = scanAlias(db.QueryRowContext(ctx, `SELECT `+aliasCols+` FROM _global_aliases WHERE name = ?`, name), &r)
		db.Close()
		if err == nil {
			return &r, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, storageErr(err)
		}
	}
	return nil, aliasNotFound(name)
}

// listAliases reads every scope's aliases; the first scope holding a name
// wins.
func listAliases(ctx context.Context, scopes []scope) ([]aliasRow, error) {
	seen := map[string]bool{}
	var out []aliasRow
	for _, sc := range scopes {
		if !storeHas(sc) {
			continue
		}
		db, err := openAliases(ctx, sc)
		if err != nil {
			return nil, err
		}
		rs, err := db.QueryContext(ctx, `SELECT `+aliasCols+` FROM _global_aliases ORDER BY name`)
		if err != nil {
			db.Close()
			return nil, storageErr(err)
		}
		for rs.Next() {
			r := aliasRow{scope: sc}
			if err := scanAlias(rs, &r); err != nil {
				rs.Close()
				db.Close()
				return nil, storageErr(err)
			}
			if !seen[r.Name] {
				seen[r.Name] = true
				out = append(out, r)
			}
		}
		err = rs.Err()
		rs.Close()
		db.Close()
		if err != nil {
			return nil, storageErr(err)
		}
	}
	return out, nil
}

// deleteAlias removes an alias from one scope.
func deleteAlias(ctx context.Context, sc scope, name string) (bool, error) {
	db, err := openAliases(ctx, sc)
	if err != nil {
		return false, err
	}
	defer db.Close()
	res, err := db.ExecContext(ctx, `DELETE FROM _global_aliases WHERE name = ?`, name)
	if err != nil {
		return false, storageErr(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, storageErr(err)
	}
	return n > 0, nil
}

// migrated records the scope directories whose legacy aliases were
// copied in this process.
var migrated sync.Map

// migrateLegacy copies the legacy per-table aliases (each table file's
// _aliases) of a scope into its global store, once per directory and
// process (mini-app-mcp does it at every mount): INSERT OR IGNORE, so a
// global alias of the same name wins. Only alias metadata is read from the
// table files, read-only; never their rows.
func migrateLegacy(ctx context.Context, sc scope) error {
	if _, done := migrated.LoadOrStore(sc.dir, true); done {
		return nil
	}
	names, err := mi.TableNames(sc.dir)
	if err != nil {
		return nil // an unreadable directory has no aliases to migrate
	}
	var legacy []aliasRow
	for _, t := range names {
		rows, err := legacyAliases(ctx, mi.DBPath(sc.dir, t))
		if err != nil {
			migrated.Delete(sc.dir)
			return err
		}
		for _, r := range rows {
			b, _ := json.Marshal(map[string]any{"kind": "single", "value": t})
			r.Sources = string(b)
			legacy = append(legacy, r)
		}
	}
	if len(legacy) == 0 {
		return nil
	}
	for _, r := range legacy {
		if _, err := insertAlias(ctx, sc, r); err != nil {
			migrated.Delete(sc.dir)
			return err
		}
	}
	return nil
}

// legacyAliases reads a table file's _aliases, if it has any.
func legacyAliases(ctx context.Context, path string) ([]aliasRow, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	db, err := sql.Open("sqlite", "file:"+esc+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "open table file")
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_aliases'`).Scan(&n); err != nil {
		return nil, storageErr(err)
	}
	if n == 0 {
		return nil, nil
	}
	rs, err := db.QueryContext(ctx, `SELECT name, filter, default_limit, description, params_schema FROM _aliases ORDER BY name`)
	if err != nil {
		return nil, storageErr(err)
	}
	defer rs.Close()
	var out []aliasRow
	for rs.Next() {
		var r aliasRow
		if err := rs.Scan(&r.Name, &r.Filter, &r.DefaultLimit, &r.Description, &r.ParamsSchema); err != nil {
			return nil, storageErr(err)
		}
		out = append(out, r)
	}
	return out, rs.Err()
}
