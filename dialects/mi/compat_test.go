package mi

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// miniAppDDL is the layout as mini-app-mcp creates it (contract §6), written
// here independently of the package's own copy.
const miniAppDDL = `
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS rows (
    id          TEXT    PRIMARY KEY,
    data        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS _aliases (
    name           TEXT    PRIMARY KEY,
    filter         TEXT    NOT NULL,
    default_limit  INTEGER,
    description    TEXT,
    params_schema  TEXT
);
CREATE TABLE IF NOT EXISTS _row_history (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    table_name      TEXT    NOT NULL,
    row_id          TEXT    NOT NULL,
    version         INTEGER NOT NULL,
    recorded_at     INTEGER NOT NULL,
    op              TEXT    NOT NULL CHECK (op IN ('create','update','delete')),
    data_json       TEXT,
    prev_data_json  TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_row_history_version ON _row_history(table_name, row_id, version);
CREATE INDEX IF NOT EXISTS idx_row_history_lookup ON _row_history(table_name, row_id, recorded_at DESC);
CREATE TABLE IF NOT EXISTS _row_history_archive (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    table_name      TEXT    NOT NULL,
    row_id          TEXT    NOT NULL,
    version_start   INTEGER NOT NULL,
    version_end     INTEGER NOT NULL,
    recorded_start  INTEGER NOT NULL,
    recorded_end    INTEGER NOT NULL,
    entry_count     INTEGER NOT NULL,
    format          TEXT    NOT NULL DEFAULT 'jsonl-zstd',
    blob            BLOB    NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_row_history_archive_lookup ON _row_history_archive(table_name, row_id, recorded_start DESC);
`

// A schema.yaml as mini-app-mcp users write it: flow of keys the gateway
// ignores (title, description, dump), a yaml `table` that differs from the
// directory name, fields with descriptions.
const notesYAML = `table: my_notes
title: "Notes"
description: "Personal notes."
fields:
- name: title
  type: string
  required: true
  description: "Short heading."
- name: body
  type: string
- name: score
  type: number
- name: tags
  type: array
- name: pinned
  type: boolean
dump:
  dir: ./dump
  title_field: title
history: full
`

const (
	id1 = "3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b"
	id2 = "a1b2c3d4-e5f6-4a7b-9c8d-0e1f2a3b4c5d"
)

// makeMiniAppDir builds a scope directory the way mini-app-mcp leaves it,
// by plain SQL: two rows, a raw and an archived history for the first, a
// create entry for the second, and an alias.
func makeMiniAppDir(t *testing.T) (dir string, db *sql.DB) {
	t.Helper()
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes", "schema.yaml"), []byte(notesYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	db = rawDB(t, filepath.Join(dir, "notes", "notes.db"))
	stmts := []string{
		miniAppDDL,
		`INSERT INTO rows VALUES ('` + id1 + `', '{"body":"line1\nline2","extra":{"a":[true,null],"b":1},"score":5.0,"tags":["x","y"],"title":"first"}', 1700000000, 1700000500)`,
		`INSERT INTO rows VALUES ('` + id2 + `', '{"score":5,"title":"second"}', 1700000100, 1700000100)`,
		`INSERT INTO _row_history_archive (table_name, row_id, version_start, version_end, recorded_start, recorded_end, entry_count, blob) VALUES ('my_notes', '` + id1 + `', 1, 5, 1700000000, 1700000400, 5, X'28b52ffd')`,
		`INSERT INTO _row_history (table_name, row_id, version, recorded_at, op, data_json, prev_data_json) VALUES ('my_notes', '` + id1 + `', 6, 1700000500, 'update', '{"body":"line1\nline2","extra":{"a":[true,null],"b":1},"score":5.0,"tags":["x","y"],"title":"first"}', NULL)`,
		`INSERT INTO _row_history (table_name, row_id, version, recorded_at, op, data_json, prev_data_json) VALUES ('my_notes', '` + id2 + `', 1, 1700000100, 'create', '{"score":5,"title":"second"}', NULL)`,
		`INSERT INTO _aliases (name, filter, default_limit) VALUES ('recent', '{"type":"eq","field":"title","value":"first"}', 10)`,
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	return dir, db
}

// layout describes a database file's schema objects and columns, to check
// that opening and writing leave it as it was.
func layout(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	rs, err := db.Query(`SELECT type, name, tbl_name FROM sqlite_master ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rs.Next() {
		var typ, name, tbl string
		if err := rs.Scan(&typ, &name, &tbl); err != nil {
			t.Fatal(err)
		}
		out["objects"] = append(out["objects"], typ+" "+name+" on "+tbl)
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	rs.Close()
	for _, tbl := range tables {
		cs, err := db.Query(`SELECT name, type, "notnull", COALESCE(dflt_value, ''), pk FROM pragma_table_info(?) ORDER BY cid`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		for cs.Next() {
			var name, typ, dflt string
			var notnull, pk int
			if err := cs.Scan(&name, &typ, &notnull, &dflt, &pk); err != nil {
				t.Fatal(err)
			}
			out[tbl] = append(out[tbl], name+" "+typ+" notnull="+string(rune('0'+notnull))+" default="+dflt+" pk="+string(rune('0'+pk)))
		}
		cs.Close()
	}
	return out
}

func TestCompatibilityWithMiniApp(t *testing.T) {
	dir, db := makeMiniAppDir(t)
	before := layout(t, db)
	ctx := context.Background()

	// Through the registry, with a file:// DSN, as the gateway opens it.
	src, err := dialects.Open(ctx, "mi", dialects.Config{DSN: "file://" + dir, Schema: "app"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Dialect().Name() != "mi" {
		t.Errorf("dialect %q", src.Dialect().Name())
	}
	if err := src.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	src.(*Source).now = func() time.Time { return time.Unix(1_800_000_000, 0) }

	tabs, err := src.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 1 || tabs[0].Name != "notes" || tabs[0].Schema != "app" {
		t.Fatalf("tables %+v", tabs)
	}
	wantCols := []dialects.Column{
		{Name: "id", DBType: "TEXT", Kind: dialects.KindString, PrimaryKey: true, HasDefault: true, Default: "uuid v4"},
		{Name: "created_at", DBType: "INTEGER", Kind: dialects.KindInt, HasDefault: true, Default: "unix seconds now"},
		{Name: "updated_at", DBType: "INTEGER", Kind: dialects.KindInt, HasDefault: true, Default: "unix seconds now"},
		{Name: "title", DBType: "string", Kind: dialects.KindString},
		{Name: "body", DBType: "string", Kind: dialects.KindString, Nullable: true},
		{Name: "score", DBType: "number", Kind: dialects.KindFloat, Nullable: true},
		{Name: "tags", DBType: "array", Kind: dialects.KindArray, Nullable: true},
		{Name: "pinned", DBType: "boolean", Kind: dialects.KindBool, Nullable: true},
	}
	if !reflect.DeepEqual(tabs[0].Columns, wantCols) {
		t.Errorf("columns\n got %+v\nwant %+v", tabs[0].Columns, wantCols)
	}

	rs, err := src.Read(ctx, &query.Plan{Action: query.Read, Table: "notes", Order: []query.Order{{Column: "created_at"}}})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]any
	for rs.Next() {
		v, err := rs.Values()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, slices.Clone(v))
	}
	rs.Close()
	want := [][]any{
		{id1, int64(1700000000), int64(1700000500), "first", "line1\nline2", json.Number("5.0"), []any{"x", "y"}, nil},
		{id2, int64(1700000100), int64(1700000100), "second", nil, json.Number("5"), nil, nil},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows\n got %#v\nwant %#v", got, want)
	}
	if !reflect.DeepEqual(layout(t, db), before) {
		t.Errorf("opening and reading changed the layout\nbefore %v\nafter  %v", before, layout(t, db))
	}

	// Writes through the gateway.
	ins, err := src.Write(ctx, &query.Plan{
		Action: query.Insert, Table: "notes",
		Columns: []string{"title", "body", "score", "tags", "pinned"},
		Rows:    [][]any{{"third", "x<y & z\u2028é\t", json.Number("2"), []any{"b", "a"}, false}},
	})
	if err != nil {
		t.Fatal(err)
	}
	newID := ins.Returned[0][0].(string)
	if _, err := src.Write(ctx, &query.Plan{
		Action: query.Update, Table: "notes", Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{id1}},
		Set: []query.Assign{{Column: "pinned", Value: true}, {Column: "body", Value: nil}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Write(ctx, &query.Plan{Action: query.Delete, Table: "notes", Where: &query.Cond{Column: "title", Op: query.Eq, Args: []any{"second"}}}); err != nil {
		t.Fatal(err)
	}

	// The file is still mini-app-mcp's: same objects and columns, same
	// alias, WAL, rows in serde's form, history numbered on.
	if after := layout(t, db); !reflect.DeepEqual(after, before) {
		t.Errorf("writes changed the layout\nbefore %v\nafter  %v", before, after)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q %v", mode, err)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM _aliases WHERE name = 'recent'`); n != 1 {
		t.Error("alias lost")
	}
	if !uuidV4.MatchString(newID) {
		t.Errorf("new id %q is not a lower-case UUID v4", newID)
	}
	type row struct {
		data             string
		created, updated int64
	}
	rowsNow := map[string]row{}
	rrs, err := db.Query(`SELECT id, data, created_at, updated_at FROM rows`)
	if err != nil {
		t.Fatal(err)
	}
	for rrs.Next() {
		var id string
		var r row
		if err := rrs.Scan(&id, &r.data, &r.created, &r.updated); err != nil {
			t.Fatal(err)
		}
		rowsNow[id] = r
	}
	rrs.Close()
	wantRows := map[string]row{
		id1:   {`{"extra":{"a":[true,null],"b":1},"pinned":true,"score":5.0,"tags":["x","y"],"title":"first"}`, 1700000000, 1_800_000_000},
		newID: {`{"body":"x<y & z` + "\u2028" + `é\t","pinned":false,"score":2,"tags":["b","a"],"title":"third"}`, 1_800_000_000, 1_800_000_000},
	}
	if !reflect.DeepEqual(rowsNow, wantRows) {
		t.Errorf("rows\n got %#v\nwant %#v", rowsNow, wantRows)
	}

	type entry struct {
		table, row  string
		version, at int64
		op, data    string
		prev        sql.NullString
	}
	var hist []entry
	hrs, err := db.Query(`SELECT table_name, row_id, version, recorded_at, op, data_json, prev_data_json FROM _row_history ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for hrs.Next() {
		var e entry
		if err := hrs.Scan(&e.table, &e.row, &e.version, &e.at, &e.op, &e.data, &e.prev); err != nil {
			t.Fatal(err)
		}
		hist = append(hist, e)
	}
	hrs.Close()
	wantHist := []entry{
		{"my_notes", id1, 6, 1700000500, "update", `{"body":"line1\nline2","extra":{"a":[true,null],"b":1},"score":5.0,"tags":["x","y"],"title":"first"}`, sql.NullString{}},
		{"my_notes", id2, 1, 1700000100, "create", `{"score":5,"title":"second"}`, sql.NullString{}},
		{"my_notes", newID, 1, 1_800_000_000, "create", wantRows[newID].data, sql.NullString{}},
		// Numbered after the archived versions 1..5 and raw version 6.
		{"my_notes", id1, 7, 1_800_000_000, "update", wantRows[id1].data, sql.NullString{}},
		// A delete keeps the pre-delete data exactly as it was stored.
		{"my_notes", id2, 2, 1_800_000_000, "delete", `{"score":5,"title":"second"}`, sql.NullString{}},
	}
	if !reflect.DeepEqual(hist, wantHist) {
		t.Errorf("history\n got %+v\nwant %+v", hist, wantHist)
	}
}

// A table created here has exactly the layout of one created by
// mini-app-mcp.
func TestCreatedLayoutMatchesMiniApp(t *testing.T) {
	_, theirs := makeMiniAppDir(t)
	dir := t.TempDir()
	if err := CreateTable(dir, "notes", []byte(notesYAML)); err != nil {
		t.Fatal(err)
	}
	ours := rawDB(t, dbFile(dir, "notes"))
	if got, want := layout(t, ours), layout(t, theirs); !reflect.DeepEqual(got, want) {
		t.Errorf("layout\n got %v\nwant %v", got, want)
	}
	var mode string
	if err := ours.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q %v", mode, err)
	}
	b, err := os.ReadFile(schemaFile(dir, "notes"))
	if err != nil || string(b) != notesYAML {
		t.Errorf("schema.yaml not written as given: %v", err)
	}
	if _, err := os.Stat(schemaFile(dir, "notes") + ".tmp"); err == nil {
		t.Error("temporary schema file left behind")
	}
}

// Files from older mini-app-mcp versions get the alias column it adds on
// open; nothing else changes.
func TestOldAliasTableGainsParamsSchema(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "old"), 0o755)
	os.WriteFile(schemaFile(dir, "old"), []byte("table: old\nfields: []\n"), 0o644)
	db := rawDB(t, dbFile(dir, "old"))
	if _, err := db.Exec(`CREATE TABLE _aliases (name TEXT PRIMARY KEY, filter TEXT NOT NULL, default_limit INTEGER, description TEXT)`); err != nil {
		t.Fatal(err)
	}
	src, err := Open(context.Background(), dialects.Config{DSN: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rs, err := src.Read(context.Background(), &query.Plan{Action: query.Read, Table: "old"})
	if err != nil {
		t.Fatal(err)
	}
	rs.Close()
	if n := count(t, db, `SELECT COUNT(*) FROM pragma_table_info('_aliases') WHERE name = 'params_schema'`); n != 1 {
		t.Error("params_schema not added")
	}
}
