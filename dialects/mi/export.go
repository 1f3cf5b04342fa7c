package mi

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// TableInfo is what schema.yaml says about a table, for the mini-app tools
// (info, the schema:// resources, filter validation). The gateway's column
// view of the same table comes from Source.Tables.
type TableInfo struct {
	// Name is the table's directory name, the name tools address it by.
	Name string
	// Table is the yaml `table` (the _row_history table_name).
	Table       string
	Title       *string
	Description *string
	Fields      []FieldInfo
	Dump        *DumpInfo
	// History is false when the yaml says history: off.
	History bool
	// YAML is the file as stored.
	YAML []byte
}

// FieldInfo is one schema.yaml field.
type FieldInfo struct {
	Name        string
	Type        string
	Required    bool
	Description *string
}

// DumpInfo is the yaml's dump section, with mini-app's defaults filled in.
type DumpInfo struct {
	Dir        *string
	TitleField string
	BodyField  string
	Sync       string
}

// Field returns the named field.
func (t *TableInfo) Field(name string) (FieldInfo, bool) {
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return FieldInfo{}, false
}

type yamlDescribed struct {
	Title       *string `yaml:"title"`
	Description *string `yaml:"description"`
	Fields      []struct {
		Description *string `yaml:"description"`
	} `yaml:"fields"`
	Dump *struct {
		Dir        *string `yaml:"dir"`
		TitleField *string `yaml:"title_field"`
		BodyField  *string `yaml:"body_field"`
		Sync       *string `yaml:"sync"`
	} `yaml:"dump"`
}

// ReadTable reads the schema.yaml of table name in the scope directory dsn
// (a path or file:// URL). A table that is not there, or whose yaml does
// not parse, is NotFound "table not found: <name>".
func ReadTable(dsn, name string) (*TableInfo, error) {
	dir := trimFileURL(dsn)
	if dir == "" || !safeName(name) {
		return nil, notFound(name)
	}
	return readTable(dir, name)
}

// readTable reads and parses a table's schema.yaml under dir, warning
// once about a dump.sync this gateway serves otherwise.
func readTable(dir, name string) (*TableInfo, error) {
	path := schemaFile(dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, notFound(name)
	}
	t, err := ParseTable(name, b)
	if err != nil {
		return nil, err
	}
	if t.Dump != nil && t.Dump.Sync == "bidirectional" {
		warnBidirectional(path, name, b)
	}
	return t, nil
}

// Definition reads a table's schema.yaml from disk, on every call, and
// answers it as stored (dialects.Definitions); a table that is not there,
// or whose yaml does not parse, is NotFound "table not found: <name>".
// ParseTable reads it.
func (s *Source) Definition(_ context.Context, table string) ([]byte, error) {
	if s.isClosed() {
		return nil, errSourceClosed
	}
	if !safeName(table) {
		return nil, notFound(table)
	}
	t, err := readTable(s.dir, table)
	if err != nil {
		return nil, err
	}
	return t.YAML, nil
}

// ParseTable parses the schema.yaml b of the table name (a definition
// as Definition answers it). It touches no file. A yaml that does not
// parse is NotFound "table not found: <name>", as mini-app-mcp does not
// mount it.
func ParseTable(name string, b []byte) (*TableInfo, error) {
	sc, err := parseSchema(b)
	if err != nil {
		return nil, notFound(name)
	}
	var d yamlDescribed
	_ = yaml.Unmarshal(b, &d) // parseSchema accepted the same bytes
	t := &TableInfo{Name: name, Table: sc.Table, Title: d.Title, Description: d.Description, History: sc.History, YAML: b}
	for i, f := range sc.Fields {
		fi := FieldInfo{Name: f.Name, Type: f.Type, Required: f.Required}
		if i < len(d.Fields) {
			fi.Description = d.Fields[i].Description
		}
		t.Fields = append(t.Fields, fi)
	}
	if d.Dump != nil {
		di := &DumpInfo{Dir: d.Dump.Dir, TitleField: "title", BodyField: "body", Sync: "write-only"}
		if d.Dump.TitleField != nil {
			di.TitleField = *d.Dump.TitleField
		}
		if d.Dump.BodyField != nil {
			di.BodyField = *d.Dump.BodyField
		}
		if d.Dump.Sync != nil {
			di.Sync = *d.Dump.Sync
		}
		t.Dump = di
	}
	return t, nil
}

// bidirectionalWarned holds the schema files (path and content) already
// warned about, so that each load of a schema warns once.
var bidirectionalWarned sync.Map

// warnBidirectional logs, once per schema file content, that dump.sync:
// bidirectional is served as write-only, as mini-app-mcp warns and falls
// back when it opens such a table.
func warnBidirectional(path, table string, content []byte) {
	sum := sha256.Sum256(content)
	if _, seen := bidirectionalWarned.LoadOrStore(path+"\x00"+string(sum[:]), true); seen {
		return
	}
	slog.Warn("mi: dump.sync bidirectional is not implemented; dump files are written as with write-only", "table", table, "schema", path)
}

// TableNames lists the tables of a scope directory (subdirectories holding
// a schema.yaml that parses), sorted, as mini-app-mcp's mount scan finds
// them. A missing directory has none.
func TableNames(dsn string) ([]string, error) {
	dir := trimFileURL(dsn)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fault.Wrap(fault.Unavailable, err, "mi: cannot read the table directory")
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !safeName(name) {
			continue
		}
		b, err := os.ReadFile(schemaFile(dir, name))
		if err != nil {
			continue
		}
		if _, err := parseSchema(b); err != nil {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

// HistoryEntry is one _row_history entry (dialects.History).
type HistoryEntry = dialects.HistoryEntry

// HistoryAt returns the latest history entry of a row recorded at or
// before at (ties: the highest version), raw or rolled into an archive blob
// (the archive holds a row's oldest entries, so it is read only when no raw
// entry qualifies), or NotFound "row not found: <id>" when there is none or
// the table keeps no history.
func (s *Source) HistoryAt(ctx context.Context, name, rowID string, at int64) (HistoryEntry, error) {
	t, err := ReadTable(s.dir, name)
	if err != nil {
		return HistoryEntry{}, err
	}
	missing := fault.New(fault.NotFound, "row not found: %s", rowID)
	if !t.History {
		return HistoryEntry{}, missing
	}
	if _, err := os.Stat(dbFile(s.dir, name)); err != nil {
		return HistoryEntry{}, missing
	}
	tdb, err := s.tableDB(ctx, name)
	if err != nil {
		return HistoryEntry{}, err
	}
	db := tdb.db
	var e HistoryEntry
	var data sql.NullString
	err = db.QueryRowContext(ctx, `SELECT version, recorded_at, op, data_json FROM _row_history
        WHERE table_name = ? AND row_id = ? AND recorded_at <= ?
        ORDER BY recorded_at DESC, version DESC LIMIT 1`, t.Table, rowID, at).Scan(&e.Version, &e.RecordedAt, &e.Op, &data)
	if errors.Is(err, sql.ErrNoRows) {
		a, ok, err := archivedAt(ctx, db, t.Table, rowID, at)
		if err != nil {
			return HistoryEntry{}, storageErr(ctx, err)
		}
		if !ok {
			return HistoryEntry{}, missing
		}
		return a, nil
	}
	if err == nil && !data.Valid {
		return HistoryEntry{}, missing
	}
	if err != nil {
		return HistoryEntry{}, storageErr(ctx, err)
	}
	e.Data = data.String
	return e, nil
}

// SchemaPath is where a table's schema.yaml lives, for messages.
func SchemaPath(dsn, name string) string { return schemaFile(trimFileURL(dsn), name) }

// DBPath is where a table's rows live.
func DBPath(dsn, name string) string { return filepath.Clean(dbFile(trimFileURL(dsn), name)) }
