package mi

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// The alias store of a scope directory (dialects.AliasStore), as
// mini-app-mcp keeps it: <dir>/_global.db, table _global_aliases. It holds
// metadata only; no row is read from it.

// GlobalAliasFile is the alias store of a scope directory, as mini-app-mcp
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

const aliasCols = `name, sources_json, aggregator_json, filter, default_limit, description, params_schema, fields, order_by`

func scanAlias(sc interface{ Scan(...any) error }, r *dialects.Alias) error {
	return sc.Scan(&r.Name, &r.Sources, &r.Aggregator, &r.Filter, &r.DefaultLimit, &r.Description, &r.ParamsSchema, &r.Fields, &r.OrderBy)
}

// aliasPath is the store's file.
func (s *Source) aliasPath() string { return filepath.Join(s.dir, GlobalAliasFile) }

// openAliases opens (creating) the alias store; the directory must exist.
func (s *Source) openAliases(ctx context.Context) (*sql.DB, error) {
	if fi, err := os.Stat(s.dir); err != nil || !fi.IsDir() {
		return nil, &dialects.FileError{Step: dialects.StepConfig, Kind: fault.Invalid, Msg: "alias store directory is missing: " + s.dir, Err: err}
	}
	db, err := sql.Open("sqlite", sqliteDSN(s.aliasPath()))
	if err != nil {
		return nil, storageFail(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, aliasDDL); err != nil {
		db.Close()
		return nil, storageFail(err)
	}
	return db, nil
}

// readAliases opens the store for a read after the legacy migration; nil
// when there is no store (none is created).
func (s *Source) readAliases(ctx context.Context) (*sql.DB, error) {
	if err := s.migrateAliases(ctx); err != nil {
		return nil, err
	}
	if !fileExists(s.aliasPath()) {
		return nil, nil
	}
	return s.openAliases(ctx)
}

// Aliases lists the stored aliases, sorted by name.
func (s *Source) Aliases(ctx context.Context) ([]dialects.Alias, error) {
	db, err := s.readAliases(ctx)
	if db == nil || err != nil {
		return nil, err
	}
	defer db.Close()
	rs, err := db.QueryContext(ctx, `SELECT `+aliasCols+` FROM _global_aliases ORDER BY name`)
	if err != nil {
		return nil, storageFail(err)
	}
	defer rs.Close()
	var out []dialects.Alias
	for rs.Next() {
		var r dialects.Alias
		if err := scanAlias(rs, &r); err != nil {
			return nil, storageFail(err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, storageFail(err)
	}
	return out, nil
}

// Alias finds a stored alias by name.
func (s *Source) Alias(ctx context.Context, name string) (dialects.Alias, bool, error) {
	db, err := s.readAliases(ctx)
	if db == nil || err != nil {
		return dialects.Alias{}, false, err
	}
	defer db.Close()
	var r dialects.Alias
	err = scanAlias(db.QueryRowContext(ctx, `SELECT `+aliasCols+` FROM _global_aliases WHERE name = ?`, name), &r)
	if errors.Is(err, sql.ErrNoRows) {
		return dialects.Alias{}, false, nil
	}
	if err != nil {
		return dialects.Alias{}, false, storageFail(err)
	}
	return r, true, nil
}

// PutAlias stores a new alias; false when the name is taken.
func (s *Source) PutAlias(ctx context.Context, r dialects.Alias) (bool, error) {
	if err := s.migrateAliases(ctx); err != nil {
		return false, err
	}
	return s.insertAlias(ctx, r)
}

func (s *Source) insertAlias(ctx context.Context, r dialects.Alias) (bool, error) {
	db, err := s.openAliases(ctx)
	if err != nil {
		return false, err
	}
	defer db.Close()
	res, err := db.ExecContext(ctx, `INSERT INTO _global_aliases (`+aliasCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING`,
		r.Name, r.Sources, r.Aggregator, r.Filter, r.DefaultLimit, r.Description, r.ParamsSchema, r.Fields, r.OrderBy)
	if err != nil {
		return false, storageFail(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, storageFail(err)
	}
	return n == 1, nil
}

// DropAlias removes a stored alias; false when there was none.
func (s *Source) DropAlias(ctx context.Context, name string) (bool, error) {
	if err := s.migrateAliases(ctx); err != nil {
		return false, err
	}
	db, err := s.openAliases(ctx)
	if err != nil {
		return false, err
	}
	defer db.Close()
	res, err := db.ExecContext(ctx, `DELETE FROM _global_aliases WHERE name = ?`, name)
	if err != nil {
		return false, storageFail(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, storageFail(err)
	}
	return n > 0, nil
}

// migrateAliases copies the legacy per-table aliases (each table file's
// _aliases) into the store, once per Source (mini-app-mcp does it at
// every mount): INSERT OR IGNORE, so a global alias of the same name wins.
// Only alias metadata is read from the table files, never their rows. A
// failure is retried by the next call.
func (s *Source) migrateAliases(ctx context.Context) error {
	s.aliasMu.Lock()
	defer s.aliasMu.Unlock()
	if s.aliasesMigrated {
		return nil
	}
	names, err := TableNames(s.dir)
	if err != nil {
		s.aliasesMigrated = true
		return nil // an unreadable directory has no aliases to migrate
	}
	var legacy []dialects.Alias
	for _, t := range names {
		rows, err := s.legacyAliases(ctx, t)
		if err != nil {
			return err
		}
		for _, r := range rows {
			b, _ := json.Marshal(map[string]any{"kind": "single", "value": t})
			r.Sources = string(b)
			legacy = append(legacy, r)
		}
	}
	for _, r := range legacy {
		if _, err := s.insertAlias(ctx, r); err != nil {
			return err
		}
	}
	s.aliasesMigrated = true
	return nil
}

// legacyAliases reads a table file's _aliases, if it has a file.
func (s *Source) legacyAliases(ctx context.Context, table string) ([]dialects.Alias, error) {
	if !fileExists(dbFile(s.dir, table)) {
		return nil, nil
	}
	t, err := s.tableDB(ctx, table)
	if err != nil {
		return nil, storageFail(err)
	}
	rs, err := t.db.QueryContext(ctx, `SELECT name, filter, default_limit, description, params_schema FROM _aliases ORDER BY name`)
	if err != nil {
		return nil, storageFail(err)
	}
	defer rs.Close()
	var out []dialects.Alias
	for rs.Next() {
		var r dialects.Alias
		if err := rs.Scan(&r.Name, &r.Filter, &r.DefaultLimit, &r.Description, &r.ParamsSchema); err != nil {
			return nil, storageFail(err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, storageFail(err)
	}
	return out, nil
}
