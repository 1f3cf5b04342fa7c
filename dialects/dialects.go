package dialects

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/littlebitlabs/minimal/query"
)

// Kind is the neutral type of a column: it decides how request values are
// coerced before binding and how results are encoded.
type Kind uint8

// Column kinds.
const (
	KindOther Kind = iota // sent and shown as text
	KindInt
	KindFloat
	KindDecimal
	KindBool
	KindString
	KindUUID
	KindDate
	KindTime
	KindTimestamp
	KindTimestampTZ
	KindJSON
	KindBytes
	KindArray
)

var kindNames = [...]string{"other", "integer", "float", "decimal", "boolean", "string", "uuid", "date", "time", "timestamp", "timestamptz", "json", "bytes", "array"}

// String names the kind for descriptions and docs.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "other"
}

// Column describes one column of a table as introspected.
type Column struct {
	Name       string
	DBType     string // the database's own type name, e.g. "bigint", "varchar(20)"
	Kind       Kind
	Nullable   bool
	PrimaryKey bool
	// HasDefault is true when the database can fill the column itself
	// (default expression, identity, serial, generated).
	HasDefault bool
	Default    string // default expression as the database reports it, if any
	// RefTable and RefColumn name the column of the same schema that a
	// single-column foreign key on this column references: "" when there
	// is none or the dialect does not tell (PostgreSQL, MariaDB/MySQL and
	// SQL Server tell).
	RefTable, RefColumn string
}

// Table is one introspected table or view.
type Table struct {
	Schema  string
	Name    string
	Columns []Column
}

// Column returns the named column and whether it exists.
func (t *Table) Column(name string) (*Column, bool) {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

// Stmt is rendered SQL with its bound arguments.
type Stmt struct {
	SQL  string
	Args []any
}

// Dialect renders plans. Render is pure and deterministic: the same plan
// gives the same Stmt, so it can be golden tested without a database. The
// plan has already been validated against the catalog. An operation the
// dialect cannot express is a *fault.Error of kind Unsupported.
type Dialect interface {
	Name() string
	Render(p *query.Plan) (Stmt, error)
}

// Rows streams a result. Values returns the current row; the slice may be
// reused by the next call to Next. Cell values are one of: nil, bool, int64,
// float64, string, json.Number (exact numeric literal), time.Time, []byte,
// json.RawMessage (raw JSON), []any of these.
type Rows interface {
	Columns() []Column
	Next() bool
	Values() ([]any, error)
	Err() error
	Close() error
}

// WriteResult is the answer of an insert, update or delete. Returned holds
// the inserted rows (with generated keys) when the dialect can return them.
type WriteResult struct {
	RowsAffected int64
	Columns      []Column
	Returned     [][]any
}

// Source is a live, pooled connection to one registered database, limited
// to one schema.
type Source interface {
	Dialect() Dialect
	// Tables introspects every table and view of the source's schema.
	Tables(ctx context.Context) ([]Table, error)
	// Read runs a read plan and streams its rows.
	Read(ctx context.Context, p *query.Plan) (Rows, error)
	// Write runs an insert, update or delete plan in one transaction where
	// the database has them.
	Write(ctx context.Context, p *query.Plan) (WriteResult, error)
	// Ping checks the connection.
	Ping(ctx context.Context) error
	Close() error
}

// Config opens a Source.
type Config struct {
	DSN    string
	Schema string
	// StatementTimeout bounds every statement; 0 means no bound.
	StatementTimeout time.Duration
	// MaxConns bounds the pool; 0 means DefaultMaxConns (see PoolSize).
	MaxConns int
	// AcquireTimeout bounds the wait for a connection of the pool, apart
	// from the statement timeout: past it the call fails as fault.Timeout
	// saying the pool is exhausted. 0 means the request's own deadline.
	// Sources that pool through database/sql cannot bound the wait
	// separately and ignore it.
	AcquireTimeout time.Duration
}

// PoolStats is a snapshot of a source's connection pool.
type PoolStats struct {
	// MaxConns is the pool's size; Idle, Acquired and Constructing count
	// its connections by state.
	MaxConns, Idle, Acquired, Constructing int64
	// Acquires counts acquisitions since the pool opened; EmptyAcquires
	// those that found no idle connection; CanceledAcquires those that
	// gave up (timeout or cancel).
	Acquires, EmptyAcquires, CanceledAcquires int64
	// AcquireWait is the total time spent acquiring.
	AcquireWait time.Duration
}

// Stats is the optional ability of a Source to report its pool, found by
// a type assertion; metrics use it.
type Stats interface {
	PoolStats() PoolStats
}

// ValueTest asks whether one row of values satisfies a condition once each
// value is converted to its column's type as the database converts a value
// it stores: Row is aligned with Columns, Expr names only those columns.
type ValueTest struct {
	Columns []string
	Row     []any
	Expr    query.Expr
}

// ValueChecker is the optional ability of a Source, found by a type
// assertion, to decide conditions on values about to be written with the
// database's own conversion and comparison (a text column compares "06" and
// "6" as text, a numeric(6,2) column rounds 999.999 to 1000.00 first). The
// engine uses it to hold inserted rows and updated values to the caller's
// row scope. CheckValues returns, for each test, whether its row satisfies
// its Expr; a NULL outcome is false, as in a WHERE clause. t is the table
// as introspected (its columns' DBType give the conversions).
type ValueChecker interface {
	CheckValues(ctx context.Context, t *Table, tests []ValueTest) ([]bool, error)
}

// Factory opens a Source of one type.
type Factory func(ctx context.Context, cfg Config) (Source, error)

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register makes a database type available under its two-letter code. It
// panics on a nil factory or a duplicate code, like sql.Register.
func Register(typ string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if f == nil {
		panic("dialects: Register factory is nil for " + typ)
	}
	if _, dup := factories[typ]; dup {
		panic("dialects: Register called twice for " + typ)
	}
	factories[typ] = f
}

// Open opens a Source of a registered type.
func Open(ctx context.Context, typ string, cfg Config) (Source, error) {
	mu.RLock()
	f, ok := factories[typ]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("dialects: unknown database type %q", typ)
	}
	return f(ctx, cfg)
}

// Types lists the registered type codes, sorted.
func Types() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(factories))
	for t := range factories {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
