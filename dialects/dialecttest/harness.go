package dialecttest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
)

// The fixture tables a harness creates, empty, in Harness.Config.Schema
// before it calls RunConformance. The package documentation specifies their
// columns.
const (
	// TableItems is read by the read tests; the suite fills it through
	// Source.Write and never changes it afterwards.
	TableItems = "conf_items"
	// TableWrites is where the write tests insert, update and delete.
	TableWrites = "conf_writes"
	// TableTypes holds one column per value type for the round trip.
	TableTypes = "conf_types"
	// TableSlow is a table or view whose full read takes at least 3 s; it
	// exists unless Lacks.Timeout says why not.
	TableSlow = "conf_slow"
)

// Harness is what a dialect's integration test gives RunConformance: where
// its real server is, what it cannot do and why, and the few facts about it
// the suite cannot guess. Everything else is the suite's. See the package
// documentation for a worked example.
type Harness struct {
	// Type is the registered type code, e.g. "pg"; the suite opens its
	// sources with dialects.Open(ctx, Type, cfg).
	Type string

	// Config opens a Source on a fresh schema (database, directory) that
	// holds the fixture tables, empty, and nothing else. The suite copies it
	// and may change StatementTimeout, MaxConns and (through ViaProxy) DSN.
	Config dialects.Config

	// Lacks names what the engine cannot do, each with the reason. Its zero
	// value claims everything, so a forgotten entry fails loudly instead of
	// skipping quietly.
	Lacks Lacks

	// NullOrder is where the engine sorts NULL by default. It must be set.
	NullOrder NullOrder

	// TimeDigits is how many fractional-second digits the timestamp
	// columns keep; it is read only when Lacks.Microseconds is set (else 6).
	TimeDigits int

	// MaxInsertValues is the most bound values Source.Write puts in one
	// INSERT statement before it splits the rows over several statements
	// (pg 65535, SQL Server 2100); 0 when an insert is always one statement
	// (or one statement per row, like mi). The rollback test sizes its batch
	// to need more than one statement, so its failing row lands in a later
	// one.
	MaxInsertValues int

	// Addr is the server's host:port, where StartProxy forwards to. Needed
	// unless Lacks.Outage is set.
	Addr string

	// ViaProxy returns Config.DSN rewritten to connect to addr (a
	// "127.0.0.1:port") instead of Addr, keeping database, user and
	// options. Needed unless Lacks.Outage is set.
	ViaProxy func(addr string) string
}

// Lacks lists what an engine cannot do. Each field is empty when the engine
// can (and the suite tests it) or the reason it cannot, which the suite
// prints where it leaves the test out. A reason must be a fact of the
// engine or of mini-app's format, not of the dialect's code: a dialect that
// can be fixed is fixed instead.
//
// A type lack (Integers … Array) also shapes the fixtures: the column the
// package documentation marks with it must be absent, and the suite checks
// that it is.
type Lacks struct {
	// Integers: no integer type. The "int" columns of the fixtures are
	// then floats, conf_types.i64 is absent and id may be a string.
	Integers string
	// Bool: no boolean type; conf_items.active and conf_types.b are absent,
	// and istrue/isfalse go untested.
	Bool string
	// Decimal: no exact decimal(20,6); conf_types.dec is absent.
	Decimal string
	// Date: no date type; conf_types.d is absent.
	Date string
	// Timestamp: no timestamp without zone; conf_types.ts is absent.
	Timestamp string
	// TimestampTZ: no timestamp that names an instant; conf_types.tz is
	// absent.
	TimestampTZ string
	// Microseconds: timestamps keep fewer than 6 fractional digits; the
	// suite sends values cut to Harness.TimeDigits digits.
	Microseconds string
	// JSON: no JSON type (a string column is not one); conf_types.j is
	// absent.
	JSON string
	// UUID: no UUID type; conf_types.u is absent.
	UUID string
	// Bytes: no binary string type distinct from text; conf_types.by is
	// absent.
	Bytes string
	// Array: no array type; conf_types.arr is absent.
	Array string

	// GeneratedKeys: the engine cannot fill id itself; the suite then
	// sends ids (1, 2, 3 … for an integer id, fresh UUIDs otherwise).
	GeneratedKeys string
	// Defaults: no column default other than the generated key;
	// conf_writes.n is absent.
	Defaults string
	// ReturningInsert: an insert cannot answer the inserted rows, so
	// WriteResult.Returned stays empty.
	ReturningInsert string
	// Transactions: a failing write may leave part of its rows behind. The
	// suite then checks only that what stayed is a prefix of the batch and
	// prints how much it was.
	Transactions string
	// Unique: no unique constraints, so nothing can be a duplicate key.
	Unique string
	// Timeout: no statement can be made slow on purpose; conf_slow is
	// absent and only an expired context is tested.
	Timeout string
	// Outage: the source cannot be routed through a TCP proxy (no server,
	// or not over TCP), so the outage and unreachable tests are left out.
	Outage string

	// Upsert: an insert cannot resolve a duplicate of a unique key
	// (query.Plan.OnConflict); such a plan must be refused as Unsupported
	// and write nothing.
	Upsert string
	// ScopedUpsert: a merge upsert cannot limit its update to the existing
	// rows its Where holds for (a row scope); such a plan must be refused
	// as Unsupported and write nothing, while resolution=ignore works.
	ScopedUpsert string
	// ReturnUpdate: an update cannot answer the rows it changed
	// (query.Plan.Return); such a plan must be refused as Unsupported and
	// change nothing.
	ReturnUpdate string
	// ReturnDelete: as ReturnUpdate, for a delete.
	ReturnDelete string
	// Estimate: the Source is no dialects.Estimator, so count=planned and
	// count=estimated are counted exactly. The suite checks that the Source
	// does not implement it.
	Estimate string
}

// NullOrder is where an engine sorts NULL when ORDER BY does not say.
type NullOrder uint8

// The default NULL orders engines have. The zero value is "not declared",
// which fails the suite.
const (
	// NullsSmallest: before every value ascending, after every value
	// descending (MariaDB/MySQL, SQL Server, SQLite).
	NullsSmallest NullOrder = iota + 1
	// NullsLargest: after every value ascending, before every value
	// descending (PostgreSQL).
	NullsLargest
	// NullsLast: after every value in both directions (ClickHouse).
	NullsLast
)

// String names the order for messages.
func (o NullOrder) String() string {
	switch o {
	case NullsSmallest:
		return "NullsSmallest"
	case NullsLargest:
		return "NullsLargest"
	case NullsLast:
		return "NullsLast"
	}
	return "undeclared"
}

// typeCol is one optional column of conf_types: its name, the kind it must
// introspect as, and the lack that removes it.
type typeCol struct {
	name string
	kind dialects.Kind
	lack func(*Lacks) string
	what string // the Lacks field name, for messages
}

var typeCols = []typeCol{
	{"i64", dialects.KindInt, func(l *Lacks) string { return l.Integers }, "Integers"},
	{"dec", dialects.KindDecimal, func(l *Lacks) string { return l.Decimal }, "Decimal"},
	{"f64", dialects.KindFloat, func(*Lacks) string { return "" }, ""},
	{"b", dialects.KindBool, func(l *Lacks) string { return l.Bool }, "Bool"},
	{"s", dialects.KindString, func(*Lacks) string { return "" }, ""},
	{"d", dialects.KindDate, func(l *Lacks) string { return l.Date }, "Date"},
	{"ts", dialects.KindTimestamp, func(l *Lacks) string { return l.Timestamp }, "Timestamp"},
	{"tz", dialects.KindTimestampTZ, func(l *Lacks) string { return l.TimestampTZ }, "TimestampTZ"},
	{"j", dialects.KindJSON, func(l *Lacks) string { return l.JSON }, "JSON"},
	{"u", dialects.KindUUID, func(l *Lacks) string { return l.UUID }, "UUID"},
	{"by", dialects.KindBytes, func(l *Lacks) string { return l.Bytes }, "Bytes"},
	{"arr", dialects.KindArray, func(l *Lacks) string { return l.Array }, "Array"},
}

// check reports what is wrong with a harness before anything runs.
func (h *Harness) check() error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if h.Type == "" {
		bad("Harness.Type is empty")
	} else if !slices.Contains(dialects.Types(), h.Type) {
		bad("type %q is not registered (import its dialect package)", h.Type)
	}
	if h.Config.DSN == "" {
		bad("Harness.Config.DSN is empty")
	}
	if h.Config.Schema == "" {
		bad("Harness.Config.Schema is empty: the suite addresses every plan to it")
	}
	if h.NullOrder < NullsSmallest || h.NullOrder > NullsLast {
		bad("Harness.NullOrder is not declared: say where the engine sorts NULL")
	}
	if h.Lacks.Microseconds != "" && (h.TimeDigits < 0 || h.TimeDigits > 5) {
		bad("Harness.TimeDigits must be 0..5 when Lacks.Microseconds is set, got %d", h.TimeDigits)
	}
	if h.MaxInsertValues < 0 {
		bad("Harness.MaxInsertValues must not be negative")
	}
	if h.Lacks.Outage == "" && (h.Addr == "" || h.ViaProxy == nil) {
		bad("Harness.Addr and Harness.ViaProxy are needed for the outage tests (or set Lacks.Outage with the reason)")
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid harness:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// timeDigits is the number of fractional-second digits timestamps keep.
func (h *Harness) timeDigits() int {
	if h.Lacks.Microseconds != "" {
		return h.TimeDigits
	}
	return 6
}
