package dialecttest

import (
	"context"
	"crypto/rand"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// callTimeout bounds every call the suite makes, so a dialect that hangs
// fails the test instead of stalling the run.
const callTimeout = 30 * time.Second

// RunConformance runs the conformance suite against h's real server: one
// subtest per behaviour, in an order where later ones build on earlier ones
// (the read tests need the rows the seed inserted). What h.Lacks excuses is
// logged where it is left out, never skipped silently. The package
// documentation specifies the fixtures, the value forms and every check.
func RunConformance(t *testing.T, h Harness) {
	t.Helper()
	if err := h.check(); err != nil {
		t.Fatal(err)
	}
	s := &suite{h: h}
	s.logLacks(t)
	s.src = s.open(t, h.Config)

	t.Run("Source", s.testSource)
	if !t.Run("Introspection", s.testIntrospection) {
		t.Fatal("the fixtures do not match the specification; nothing else can be checked")
	}
	if !t.Run("Seed", s.testSeed) {
		t.Fatal("conf_items could not be filled; the read tests need it")
	}
	t.Run("ReadValues", s.testReadValues)
	t.Run("Operators", s.testOperators)
	t.Run("Order", s.testOrder)
	t.Run("Paging", s.testPaging)
	t.Run("Projection", s.testProjection)
	t.Run("Count", s.testCount)
	t.Run("OrFilters", s.testOrFilters)
	t.Run("Aggregates", s.testAggregates)
	t.Run("Types", s.testTypes)
	t.Run("TypedFilters", s.testTypedFilters)
	t.Run("Insert", s.testInsert)
	t.Run("UpdateDelete", s.testUpdateDelete)
	t.Run("Conflict", s.testConflict)
	t.Run("Upsert", s.testUpsert)
	t.Run("ReturnRows", s.testReturnRows)
	t.Run("Rollback", s.testRollback)
	t.Run("Concurrent", s.testConcurrent)
	t.Run("MissingTable", s.testMissingTable)
	t.Run("Timeout", s.testTimeout)
	t.Run("Outage", s.testOutage)
	t.Run("Frozen", s.testFrozen)
	t.Run("Unreachable", s.testUnreachable)
	t.Run("Closed", s.testClosed)
}

// suite is the state one RunConformance call shares between its subtests.
type suite struct {
	h      Harness
	src    dialects.Source
	tables map[string]*dialects.Table

	idKind  dialects.Kind // kind of conf_items.id / conf_writes.id
	numKind dialects.Kind // kind of qty and n: integer, or float under Lacks.Integers
	nextID  int64         // ids the suite supplies under Lacks.GeneratedKeys
}

// logLacks prints every declared lack with its reason, once, at the start.
func (s *suite) logLacks(t *testing.T) {
	t.Helper()
	v := reflect.ValueOf(s.h.Lacks)
	for i := range v.NumField() {
		if why := v.Field(i).String(); why != "" {
			t.Logf("%s lacks %s: %s", s.h.Type, v.Type().Field(i).Name, why)
		}
	}
	t.Logf("%s sorts NULL as %s", s.h.Type, s.h.NullOrder)
	if s.h.Lacks.Microseconds != "" {
		t.Logf("%s timestamps keep %d fractional digits", s.h.Type, s.h.TimeDigits)
	}
}

// notTested logs, in the subtest that would have run, why it does not.
func (s *suite) notTested(t *testing.T, what, lack, why string) {
	t.Helper()
	t.Logf("not tested on %s: %s (Lacks.%s: %s)", s.h.Type, what, lack, why)
}

// open opens a Source of the harness's type and closes it when the test
// ends.
func (s *suite) open(t *testing.T, cfg dialects.Config) dialects.Source {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	src, err := dialects.Open(ctx, s.h.Type, cfg)
	if err != nil {
		t.Fatalf("dialects.Open(%q): %v", s.h.Type, err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

func ctxT() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), callTimeout)
}

// readPlan is a read of table with the given projection.
func (s *suite) readPlan(table string, where query.Expr, cols ...string) *query.Plan {
	return &query.Plan{Action: query.Read, Type: s.h.Type, Schema: s.h.Config.Schema, Table: table,
		Columns: cols, Where: where}
}

func (s *suite) writePlan(action query.Action, table string) *query.Plan {
	return &query.Plan{Action: action, Type: s.h.Type, Schema: s.h.Config.Schema, Table: table}
}

// readAll runs p on src to its end and returns the result's columns and a copy
// of every row; any error fails the test.
func readAll(t *testing.T, src dialects.Source, p *query.Plan) ([]dialects.Column, [][]any) {
	t.Helper()
	ctx, cancel := ctxT()
	defer cancel()
	rows, err := src.Read(ctx, p)
	if err != nil {
		t.Fatalf("Read %s: %v", p.Table, err)
	}
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			_ = rows.Close()
			t.Fatalf("Values %s: %v", p.Table, err)
		}
		if len(v) != len(rows.Columns()) {
			_ = rows.Close()
			t.Fatalf("Read %s: a row of %d values for %d columns", p.Table, len(v), len(rows.Columns()))
		}
		out = append(out, slices.Clone(v))
	}
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		t.Fatalf("Rows.Err %s: %v", p.Table, err)
	}
	if err := rows.Close(); err != nil {
		t.Fatalf("Rows.Close %s: %v", p.Table, err)
	}
	return rows.Columns(), out
}

// readErr runs a read to its end and returns its first error, from Read,
// Values, Err or Close.
func readErr(ctx context.Context, src dialects.Source, p *query.Plan) error {
	rows, err := src.Read(ctx, p)
	if err != nil {
		return err
	}
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			_ = rows.Close()
			return err
		}
	}
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		return err
	}
	return rows.Close()
}

func (s *suite) write(t *testing.T, p *query.Plan) dialects.WriteResult {
	t.Helper()
	ctx, cancel := ctxT()
	defer cancel()
	res, err := s.src.Write(ctx, p)
	if err != nil {
		t.Fatalf("Write %s %s: %v", p.Action, p.Table, err)
	}
	return res
}

func (s *suite) writeErr(p *query.Plan) error {
	ctx, cancel := ctxT()
	defer cancel()
	_, err := s.src.Write(ctx, p)
	return err
}

// wantKind fails unless err is a *fault.Error of kind k.
func wantKind(t *testing.T, what string, err error, k fault.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, k)
	}
	if got := fault.KindOf(err); got != k {
		t.Fatalf("%s: error kind %s, want %s: %v", what, got, k, err)
	}
}

// names reads the name column of table where the filter holds, in the
// given order (sorted in Go when no order is given, so the collation of the
// engine does not matter).
func (s *suite) names(t *testing.T, table string, where query.Expr, order ...query.Order) []string {
	t.Helper()
	p := s.readPlan(table, where, "name")
	p.Order = order
	_, rows := readAll(t, s.src, p)
	out := []string{}
	for _, r := range rows {
		out = append(out, nameOf(t, r[0]))
	}
	if len(order) == 0 {
		slices.Sort(out)
	}
	return out
}

// nameOf is a name cell, which must be a string.
func nameOf(t *testing.T, v any) string {
	t.Helper()
	n, ok := v.(string)
	if !ok {
		t.Fatalf("name read as %#v (%T), want a string", v, v)
	}
	return n
}

func (s *suite) count(t *testing.T, table string, where query.Expr) int {
	t.Helper()
	return len(s.names(t, table, where))
}

// newID is an id the suite supplies when the engine cannot generate one.
func (s *suite) newID() any {
	s.nextID++
	if s.idKind == dialects.KindInt {
		return s.nextID
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *suite) testSource(t *testing.T) {
	if got := s.src.Dialect().Name(); got != s.h.Type {
		t.Errorf("Dialect().Name() = %q, want %q", got, s.h.Type)
	}
	ctx, cancel := ctxT()
	defer cancel()
	if err := s.src.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}
