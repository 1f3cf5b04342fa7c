package dialects

import (
	"context"
	"database/sql"
	"io/fs"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// The optional file capabilities of a Source, found by a type assertion
// like database/sql/driver's optional interfaces. The mi source has them
// all: its tables are files (a schema.yaml and a SQLite file each) that
// the mini-app tools snapshot, back up, redefine and read the history of.
// Nothing outside the source opens those files; the engine reaches these
// methods only through its own entry points, which apply the permission
// gates and audit every call (engine/files.go).

// HistoryEntry is one recorded version of a row.
type HistoryEntry struct {
	Version    int64
	RecordedAt int64 // Unix seconds
	Op         string
	// Data is the row's data as JSON after the change (for a delete,
	// before it).
	Data string
}

// History is the ability to read the versions a table keeps of its rows.
type History interface {
	// HistoryAt returns the latest version of row rowID of table recorded
	// at or before at (Unix seconds; ties: the highest version), or
	// NotFound when there is none or the table keeps no history.
	HistoryAt(ctx context.Context, table, rowID string, at int64) (HistoryEntry, error)
}

// DocumentStore is the ability to store each row as one JSON document and
// to take plans that carry documents (query.Plan.Docs, DocReplace) or ask
// for them (query.Plan.Doc, DocKeys). The engine sends such plans only to
// a source that has it; Documents tells it so. Its columns that the store
// fills itself (HasDefault: the row's id and timestamps) are the row's
// own, apart from the document: a document key of the same name is just a
// key; every other column is the document key of its name.
type DocumentStore interface {
	// Documents reports that Read and Write take document plans.
	Documents() bool
}

// Snapshots is the ability to copy a table's storage consistently while
// it stays open and writable.
type Snapshots interface {
	// Snapshot writes a copy of table's storage to the file dst, which
	// must not exist yet.
	Snapshot(ctx context.Context, table, dst string) error
	// CountRows counts every row of table (no row scope applies: the file
	// operations act on the whole table). A table whose storage does not
	// exist yet has none.
	CountRows(ctx context.Context, table string) (int64, error)
}

// FileOptions tune the files a capability writes.
type FileOptions struct {
	// Perm is the mode of the files written (backups, definitions).
	Perm fs.FileMode
	// Keep is how many backups of a table are kept; older ones are
	// removed after each new one (at least 1).
	Keep int
}

// SchemaChanges is the ability to create, redefine and remove tables.
// Redefining or removing a table first backs up its definition and a copy
// of its storage, and answers where the backup went.
type SchemaChanges interface {
	// CreateTable creates table from def, its definition; an existing
	// one is a Conflict.
	CreateTable(ctx context.Context, table string, def []byte) error
	// ReplaceSchema replaces table's definition with def.
	ReplaceSchema(ctx context.Context, table string, def []byte, o FileOptions) (backup string, err error)
	// DropSchema removes table's definition; its storage is kept.
	DropSchema(ctx context.Context, table string, o FileOptions) (backup string, err error)
	// Batch runs ops on table atomically (see BatchOp).
	Batch(ctx context.Context, table string, ops []BatchOp, o FileOptions) (BatchResult, error)
}

// BatchOpKind is what one op of a Batch does.
type BatchOpKind uint8

// The ops of a batch.
const (
	// BatchQuery runs SQL with bound arguments on the table's storage.
	BatchQuery BatchOpKind = iota
	// BatchReplace deletes the rows whose data matches every (key, value)
	// of Match and inserts Items, without history.
	BatchReplace
	// BatchCreate defines the table (Def).
	BatchCreate
	// BatchUpdate redefines the table (Def).
	BatchUpdate
	// BatchDelete removes the table's definition.
	BatchDelete
)

// BatchOp is one op of a Batch. Query and replace ops run in one
// transaction; backups (one per update or delete of a table that exists)
// are written before it, the definition the batch leaves after it commits.
// Any failure leaves the table as it was.
type BatchOp struct {
	Kind  BatchOpKind
	SQL   string      // query
	Args  []any       // query
	Match [][2]string // replace: (key, value), sorted by key
	Items []string    // replace: each row's data as compact JSON
	Def   []byte      // create, update: the new definition
}

// BatchResult is what a Batch did.
type BatchResult struct {
	// Deleted and Inserted count the rows replace ops swapped; Changed
	// those query ops changed.
	Deleted, Inserted, Changed int64
	// Backups lists the directory of each backup written, in op order.
	Backups []string
}

// Alias is one stored alias of the mini-app tools: a named filter over one
// or more tables, with its options as stored.
type Alias struct {
	Name         string
	Sources      string // JSON
	Aggregator   sql.NullString
	Filter       string
	DefaultLimit sql.NullInt64
	Description  sql.NullString
	ParamsSchema sql.NullString
	Fields       sql.NullString
	OrderBy      sql.NullString
}

// AliasStore is the ability to keep aliases beside the tables (for mi,
// the scope directory's _global.db, into which each table's legacy
// _aliases are copied the first time the store is used).
type AliasStore interface {
	// Aliases lists the stored aliases, sorted by name.
	Aliases(ctx context.Context) ([]Alias, error)
	// Alias finds one by name.
	Alias(ctx context.Context, name string) (Alias, bool, error)
	// PutAlias stores a new alias; false when the name is taken.
	PutAlias(ctx context.Context, a Alias) (bool, error)
	// DropAlias removes one; false when there was none.
	DropAlias(ctx context.Context, name string) (bool, error)
}

// Definitions is the ability to answer a table's definition as it is
// stored (for mi, its schema.yaml), read again on every call.
type Definitions interface {
	// Definition returns table's definition as stored; NotFound when the
	// table is not there or its definition does not parse.
	Definition(ctx context.Context, table string) ([]byte, error)
}

// SourceTable is one table of a live source.
type SourceTable struct {
	Source Source
	Table  string
}

// TableAggregate is an aggregate over the rows of one or more tables,
// chained in order, taken in one statement as mini-app-mcp's
// query_aggregate takes it (see the mi source's AggregateTables).
type TableAggregate struct {
	// Where filters each table's rows (nil: all rows).
	Where query.Expr
	// Func and Field are the aggregate: count (no field), or sum, avg,
	// min or max of a field. Grouped, an empty Func counts the group's
	// rows.
	Func  query.AggFunc
	Field string
	// GroupBy is the field the rows are grouped by ("": one answer).
	GroupBy string
	// Having filters the groups (nil: all groups); only with GroupBy.
	Having query.Expr
}

// TableAggregates is the ability to aggregate over several tables at
// once: tables of this source and of other sources of the same type,
// each of which resolves its own table (a table's storage never leaves
// its source). Without GroupBy the answer is one row holding the
// aggregate; grouped, one row per group: the key, the row count and the
// aggregate. Cells are int64, float64, string or nil.
type TableAggregates interface {
	AggregateTables(ctx context.Context, tables []SourceTable, a TableAggregate) ([][]any, error)
}

// FileStep names the step of a file capability that failed.
type FileStep string

// The steps a FileError names.
const (
	// StepBackup: backing up a table before a change.
	StepBackup FileStep = "backup"
	// StepIO: writing or removing a definition or its directory.
	StepIO FileStep = "io"
	// StepStorage: the table's database.
	StepStorage FileStep = "storage"
	// StepOp: one op of a batch (Index).
	StepOp FileStep = "op"
	// StepConfig: the source's directory is missing.
	StepConfig FileStep = "config"
)

// FileError is the failure of a file capability at a step, so that a face
// can word it as its protocol does. Msg is safe to show; Err is the cause.
type FileError struct {
	Step  FileStep
	Index int // StepOp: the op of the batch that failed (0-based)
	Kind  fault.Kind
	Msg   string
	Err   error
}

func (e *FileError) Error() string { return string(e.Step) + ": " + e.Msg }

// Unwrap gives the gateway's typed error, for logs and the audit.
func (e *FileError) Unwrap() error { return &fault.Error{Kind: e.Kind, Message: e.Msg, Err: e.Err} }
