package pg_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/dialects/pg"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

const dsnEnv = "MINIMAL_TEST_PG_DSN"

// testDB is one uniquely named schema on the test server, dropped when the
// test ends.
type testDB struct {
	dsn    string
	schema string
	admin  *pgx.Conn
	citext string // the citext type's qualified name, "" if it could not be had
}

func newTestDB(t testing.TB) *testDB {
	t.Helper()
	dsn := dialecttest.DSN(t, dsnEnv)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsnEnv, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	db := &testDB{dsn: dsn, schema: "minimal_test_" + hex.EncodeToString(b[:]), admin: admin}
	db.exec(t, "CREATE SCHEMA "+db.schema)
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP SCHEMA "+db.schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		_ = admin.Close(context.Background())
	})
	db.exec(t, "SET search_path TO "+db.schema)
	// citext is an extension: create it in our schema when allowed, use it
	// where it already is, else leave it out.
	_, _ = admin.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS citext SCHEMA "+db.schema)
	err = admin.QueryRow(ctx, `SELECT format('%I.%I', n.nspname, t.typname) FROM pg_type t
		JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.typname = 'citext' LIMIT 1`).Scan(&db.citext)
	if err != nil {
		t.Logf("citext not available, left out: %v", err)
	}
	return db
}

func (db *testDB) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := db.admin.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (db *testDB) count(t testing.TB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.admin.QueryRow(context.Background(), "SELECT count(*) FROM "+db.schema+"."+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (db *testDB) open(t testing.TB, cfg dialects.Config) dialects.Source {
	t.Helper()
	if cfg.DSN == "" {
		cfg.DSN = db.dsn
	}
	cfg.Schema = db.schema
	src, err := dialects.Open(context.Background(), "pg", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// withParam adds a connection parameter to a URL or keyword/value DSN.
func withParam(dsn, key, value string) string {
	if strings.Contains(dsn, "://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + key + "=" + value
	}
	return dsn + " " + key + "=" + value
}

func collect(t testing.TB, rows dialects.Rows, err error) [][]any {
	t.Helper()
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatalf("Values: %v", err)
		}
		out = append(out, slices.Clone(v))
	}
	if err := rows.Close(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	return out
}

// readAll runs a read to its end and returns its first error.
func readAll(src dialects.Source, p *query.Plan) error {
	rows, err := src.Read(context.Background(), p)
	if err != nil {
		return err
	}
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			_ = rows.Close()
			return err
		}
	}
	return rows.Close()
}

func wantKind(t testing.TB, err error, kind fault.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", kind)
	}
	if got := fault.KindOf(err); got != kind {
		t.Fatalf("kind %s, want %s: %v", got, kind, err)
	}
}

func cond(col string, op query.Op, args ...any) *query.Cond {
	return &query.Cond{Column: col, Op: op, Args: args}
}

func TestPostgres(t *testing.T) {
	db := newTestDB(t)
	setupSchema(t, db)
	src := db.open(t, dialects.Config{MaxConns: 4})
	if src.Dialect().Name() != "pg" || !slices.Contains(dialects.Types(), "pg") {
		t.Fatal("pg is not registered")
	}
	if err := src.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Run("Tables", func(t *testing.T) { testTables(t, db, src) })
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, db, src) })
	t.Run("RoundTripSimpleProtocol", func(t *testing.T) {
		simple := db.open(t, dialects.Config{DSN: withParam(db.dsn, "default_query_exec_mode", "simple_protocol")})
		if _, err := simple.Tables(context.Background()); err != nil {
			t.Fatal(err)
		}
		testRoundTrip(t, db, simple)
	})
	t.Run("Operators", func(t *testing.T) { testOperators(t, db, src) })
	t.Run("OrderPaging", func(t *testing.T) { testOrderPaging(t, db, src) })
	t.Run("Insert", func(t *testing.T) { testInsert(t, db, src) })
	t.Run("UpdateDelete", func(t *testing.T) { testUpdateDelete(t, db, src) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, db, src) })
}

func setupSchema(t *testing.T, db *testDB) {
	ci := ""
	if db.citext != "" {
		ci = "ci " + db.citext + ","
	}
	for _, sql := range []string{
		`CREATE TYPE mood AS ENUM ('happy', 'sad')`,
		`CREATE DOMAIN posint AS int4 CHECK (VALUE > 0)`,
		`CREATE TABLE every (
			id   int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			i2   int2,
			i4   int4 NOT NULL DEFAULT 7,
			i8   int8,
			f4   float4,
			f8   double precision,
			num  numeric,
			num2 numeric(10,2),
			b    boolean,
			t    text,
			vc   varchar(20),
			ch   char(3),
			nm   name,
			` + ci + `
			u    uuid DEFAULT gen_random_uuid(),
			d    date,
			tm   time,
			ttz  timetz,
			ts   timestamp,
			tstz timestamptz DEFAULT now(),
			iv   interval,
			j    json,
			jb   jsonb,
			by   bytea,
			ia   int4[],
			ta   text[],
			mo   mood,
			mos  mood[],
			dom  posint,
			ser  serial,
			gen  int8 GENERATED ALWAYS AS (i4::int8 * 2) STORED,
			pt   point
		)`,
		`CREATE TABLE pair (a int4, b int4, c text NOT NULL, PRIMARY KEY (a, b))`,
		`CREATE VIEW every_view AS SELECT id, t FROM every`,
		`CREATE MATERIALIZED VIEW every_mat AS SELECT id FROM every`,
		`CREATE VIEW slow AS SELECT 1 AS x FROM pg_sleep(0.5)`,
		`CREATE TABLE people (id int4 PRIMARY KEY, name text NOT NULL, age int4, score float8, active bool, email text,
			"order" int4, "MixedCase" text)`,
		`INSERT INTO people VALUES
			(1, 'Ann', 30, 9.5, true, 'ann@example.com', 3, 'x'),
			(2, 'bob', 25, 7.0, false, NULL, 1, 'y'),
			(3, 'Cy_d', 40, 8.25, NULL, 'cy@EXAMPLE.com', 2, 'z'),
			(4, 'Dee%', NULL, NULL, true, 'dee@other.org', 5, NULL),
			(5, 'eve', 25, 6.5, false, 'eve@example.com', 4, 'x')`,
		`CREATE TABLE items (id int8 GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name text NOT NULL UNIQUE,
			qty int4 NOT NULL DEFAULT 1 CHECK (qty >= 0), note text)`,
		`CREATE TABLE orders (id int4 PRIMARY KEY, item_id int8 REFERENCES items (id))`,
	} {
		db.exec(t, sql)
	}
}

func testTables(t *testing.T, db *testDB, src dialects.Source) {
	tables, err := src.Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]dialects.Table{}
	for _, tb := range tables {
		names = append(names, tb.Name)
		byName[tb.Name] = tb
		if tb.Schema != db.schema {
			t.Errorf("%s: schema %q", tb.Name, tb.Schema)
		}
	}
	wantNames := []string{"every", "every_mat", "every_view", "items", "orders", "pair", "people", "slow"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("tables %v, want %v", names, wantNames)
	}

	s := db.schema
	type col = dialects.Column
	want := []col{
		{Name: "id", DBType: "bigint", Kind: dialects.KindInt, PrimaryKey: true, HasDefault: true},
		{Name: "i2", DBType: "smallint", Kind: dialects.KindInt, Nullable: true},
		{Name: "i4", DBType: "integer", Kind: dialects.KindInt, HasDefault: true, Default: "7"},
		{Name: "i8", DBType: "bigint", Kind: dialects.KindInt, Nullable: true},
		{Name: "f4", DBType: "real", Kind: dialects.KindFloat, Nullable: true},
		{Name: "f8", DBType: "double precision", Kind: dialects.KindFloat, Nullable: true},
		{Name: "num", DBType: "numeric", Kind: dialects.KindDecimal, Nullable: true},
		{Name: "num2", DBType: "numeric(10,2)", Kind: dialects.KindDecimal, Nullable: true},
		{Name: "b", DBType: "boolean", Kind: dialects.KindBool, Nullable: true},
		{Name: "t", DBType: "text", Kind: dialects.KindString, Nullable: true},
		{Name: "vc", DBType: "character varying(20)", Kind: dialects.KindString, Nullable: true},
		{Name: "ch", DBType: "character(3)", Kind: dialects.KindString, Nullable: true},
		{Name: "nm", DBType: "name", Kind: dialects.KindString, Nullable: true},
	}
	if db.citext != "" {
		// format_type qualifies a type that is not on the search path.
		every := byName["every"]
		got, _ := every.Column("ci")
		if got == nil || !strings.HasSuffix(got.DBType, "citext") {
			t.Errorf("ci: %+v", got)
		}
		want = append(want, col{Name: "ci", DBType: got.DBType, Kind: dialects.KindString, Nullable: true})
	}
	want = append(want,
		col{Name: "u", DBType: "uuid", Kind: dialects.KindUUID, Nullable: true, HasDefault: true, Default: "gen_random_uuid()"},
		col{Name: "d", DBType: "date", Kind: dialects.KindDate, Nullable: true},
		col{Name: "tm", DBType: "time without time zone", Kind: dialects.KindTime, Nullable: true},
		col{Name: "ttz", DBType: "time with time zone", Kind: dialects.KindTime, Nullable: true},
		col{Name: "ts", DBType: "timestamp without time zone", Kind: dialects.KindTimestamp, Nullable: true},
		col{Name: "tstz", DBType: "timestamp with time zone", Kind: dialects.KindTimestampTZ, Nullable: true, HasDefault: true, Default: "now()"},
		col{Name: "iv", DBType: "interval", Kind: dialects.KindOther, Nullable: true},
		col{Name: "j", DBType: "json", Kind: dialects.KindJSON, Nullable: true},
		col{Name: "jb", DBType: "jsonb", Kind: dialects.KindJSON, Nullable: true},
		col{Name: "by", DBType: "bytea", Kind: dialects.KindBytes, Nullable: true},
		col{Name: "ia", DBType: "integer[]", Kind: dialects.KindArray, Nullable: true},
		col{Name: "ta", DBType: "text[]", Kind: dialects.KindArray, Nullable: true},
		col{Name: "mo", DBType: s + ".mood", Kind: dialects.KindOther, Nullable: true},
		col{Name: "mos", DBType: s + ".mood[]", Kind: dialects.KindArray, Nullable: true},
		col{Name: "dom", DBType: s + ".posint", Kind: dialects.KindInt, Nullable: true},
		col{Name: "ser", DBType: "integer", Kind: dialects.KindInt, HasDefault: true, Default: "nextval('" + s + ".every_ser_seq'::regclass)"},
		col{Name: "gen", DBType: "bigint", Kind: dialects.KindInt, Nullable: true, HasDefault: true, Default: "((i4)::bigint * 2)"},
		col{Name: "pt", DBType: "point", Kind: dialects.KindOther, Nullable: true},
	)
	got := byName["every"].Columns
	for i := range max(len(got), len(want)) {
		var g, w col
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("every column %d:\n got %+v\nwant %+v", i, g, w)
		}
	}

	// A single-column foreign key names the column it references.
	orders := byName["orders"].Columns
	if len(orders) != 2 || orders[0].RefTable != "" || orders[1].RefTable != "items" || orders[1].RefColumn != "id" {
		t.Errorf("orders: %+v", orders)
	}

	pair := byName["pair"].Columns
	if len(pair) != 3 || !pair[0].PrimaryKey || !pair[1].PrimaryKey || pair[2].PrimaryKey || pair[2].Nullable {
		t.Errorf("pair: %+v", pair)
	}
	view := byName["every_view"].Columns
	if len(view) != 2 || view[0].Name != "id" || view[0].Kind != dialects.KindInt || view[0].PrimaryKey || !view[0].Nullable {
		t.Errorf("every_view: %+v", view)
	}
}

func testRoundTrip(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	db.exec(t, "TRUNCATE every RESTART IDENTITY")
	ciCol, ciVal := "", ""
	if db.citext != "" {
		ciCol, ciVal = "ci, ", "'MiXed', "
	}
	db.exec(t, `INSERT INTO every (i2, i4, i8, f4, f8, num, num2, b, t, vc, ch, nm, `+ciCol+`u, d, tm, ttz, ts, tstz, iv,
		j, jb, by, ia, ta, mo, mos, dom, pt) VALUES (
		-32768, 2147483647, -9223372036854775808, 1.1, 0.1, '12345678901234567890.123456789012', -0.5, true,
		'it''s "quoted" \ ünïcødé ✓ 🎉', 'x', 'ab', 'n', `+ciVal+`'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '2024-02-29',
		'13:04:05.12', '13:04:05+02', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.5+02', '1 day 02:03:04',
		'{"big": 12345678901234567890123, "x": [1, 2.50]}', '{"b": 1, "a": 2.50, "big": 9007199254740993}',
		'\x00ff10', '{1,NULL,3}', '{"a b","c,d",NULL,"\"q\""}', 'happy', '{happy,sad}', 5, '(1,2)')`)
	db.exec(t, `INSERT INTO every (u, tstz) VALUES (NULL, NULL)`)
	db.exec(t, `INSERT INTO every (i8, num, f8, f4, u, tstz, ia) VALUES (9223372036854775807, 'NaN', 'Infinity', '-Infinity', NULL, NULL, '{}')`)
	db.exec(t, `INSERT INTO every (i8, num, u, tstz, ia, ts, d) VALUES (9007199254740993, '-Infinity', NULL, NULL, '{{1,2},{3,4}}', 'infinity', '0044-03-15 BC')`)

	cols := []string{"id", "i2", "i4", "i8", "f4", "f8", "num", "num2", "b", "t", "vc", "ch", "nm", "u", "d", "tm", "ttz",
		"ts", "tstz", "iv", "j", "jb", "by", "ia", "ta", "mo", "mos", "dom", "ser", "gen", "pt"}
	if db.citext != "" {
		cols = append(cols, "ci")
	}
	rows, err := src.Read(ctx, &query.Plan{Action: query.Read, Schema: db.schema, Table: "every", Columns: cols,
		Order: []query.Order{{Column: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	rowCols := rows.Columns()
	got := collect(t, rows, nil)
	if len(got) != 4 {
		t.Fatalf("%d rows, want 4", len(got))
	}
	nulls := func(over map[string]any) map[string]any {
		m := map[string]any{}
		for _, c := range cols {
			m[c] = nil
		}
		for k, v := range over {
			m[k] = v
		}
		return m
	}
	want := []map[string]any{
		{
			"id": int64(1), "i2": int64(-32768), "i4": int64(2147483647), "i8": int64(-9223372036854775808),
			"f4": 1.1, "f8": 0.1, "num": json.Number("12345678901234567890.123456789012"), "num2": json.Number("-0.50"),
			"b": true, "t": `it's "quoted" \ ünïcødé ✓ 🎉`, "vc": "x", "ch": "ab ", "nm": "n",
			"u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "d": "2024-02-29", "tm": "13:04:05.12", "ttz": "13:04:05+02",
			"ts": "2024-01-02T03:04:05.123456", "tstz": time.Date(2024, 1, 2, 1, 4, 5, 500000000, time.UTC),
			"iv": "1 day 02:03:04",
			"j":  json.RawMessage(`{"big": 12345678901234567890123, "x": [1, 2.50]}`),
			"jb": json.RawMessage(`{"a": 2.50, "b": 1, "big": 9007199254740993}`),
			"by": []byte{0, 0xff, 0x10}, "ia": []any{int64(1), nil, int64(3)}, "ta": []any{"a b", "c,d", nil, `"q"`},
			"mo": "happy", "mos": []any{"happy", "sad"}, "dom": int64(5), "ser": int64(1), "gen": int64(4294967294),
			"pt": "(1,2)", "ci": "MiXed",
		},
		nulls(map[string]any{"id": int64(2), "i4": int64(7), "ser": int64(2), "gen": int64(14)}),
		nulls(map[string]any{"id": int64(3), "i4": int64(7), "ser": int64(3), "gen": int64(14),
			"i8": int64(9223372036854775807), "num": "NaN", "f8": "Infinity", "f4": "-Infinity", "ia": []any{}}),
		nulls(map[string]any{"id": int64(4), "i4": int64(7), "ser": int64(4), "gen": int64(14),
			"i8": int64(9007199254740993), "num": "-Infinity", "ts": "infinity", "d": "0044-03-15 BC",
			"ia": []any{[]any{int64(1), int64(2)}, []any{int64(3), int64(4)}}}),
	}
	for r := range want {
		for i, c := range cols {
			if w, g := want[r][c], got[r][i]; !reflect.DeepEqual(w, g) {
				t.Errorf("row %d %s: got %#v (%T), want %#v (%T)", r+1, c, g, g, w, w)
			}
		}
	}
	wantKinds := map[string]dialects.Kind{"id": dialects.KindInt, "num": dialects.KindDecimal, "jb": dialects.KindJSON,
		"tstz": dialects.KindTimestampTZ, "ia": dialects.KindArray, "mos": dialects.KindArray, "pt": dialects.KindOther}
	for i, c := range rowCols {
		if c.Name != cols[i] {
			t.Errorf("column %d named %q, want %q", i, c.Name, cols[i])
		}
		if k, ok := wantKinds[c.Name]; ok && c.Kind != k {
			t.Errorf("column %s kind %s, want %s", c.Name, c.Kind, k)
		}
	}
	// The normalized values are what the faces encode: JSON must keep
	// every digit.
	js, err := json.Marshal(got[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"-9223372036854775808", "12345678901234567890.123456789012", "12345678901234567890123", "9007199254740993"} {
		if !strings.Contains(string(js), s) {
			t.Errorf("JSON of row 1 lost %s: %s", s, js)
		}
	}
}

func ids(t *testing.T, src dialects.Source, p *query.Plan) []int64 {
	t.Helper()
	rows, err := src.Read(context.Background(), p)
	out := []int64{}
	for _, r := range collect(t, rows, err) {
		out = append(out, r[0].(int64))
	}
	return out
}

func testOperators(t *testing.T, db *testDB, src dialects.Source) {
	people := func(where query.Expr) *query.Plan {
		return &query.Plan{Action: query.Read, Schema: db.schema, Table: "people", Columns: []string{"id", "name"},
			Where: where, Order: []query.Order{{Column: "id"}}}
	}
	tests := []struct {
		name  string
		where query.Expr
		want  []int64
	}{
		{"eq", cond("age", query.Eq, int64(25)), []int64{2, 5}},
		{"eq request string", cond("age", query.Eq, "25"), []int64{2, 5}},
		{"ne", cond("name", query.Ne, "bob"), []int64{1, 3, 4, 5}},
		{"gt", cond("age", query.Gt, int64(25)), []int64{1, 3}},
		{"ge", cond("age", query.Ge, int64(30)), []int64{1, 3}},
		{"lt", cond("score", query.Lt, 7.0), []int64{5}},
		{"le", cond("score", query.Le, "7"), []int64{2, 5}},
		{"like prefix", cond("name", query.Like, "C%"), []int64{3}},
		{"like escaped percent", cond("name", query.Like, `%\%`), []int64{4}},
		{"like escaped underscore", cond("name", query.Like, `%\_%`), []int64{3}},
		{"like is case sensitive", cond("name", query.Like, "ann"), []int64{}},
		{"ilike", cond("email", query.ILike, "%@example.com"), []int64{1, 3, 5}},
		{"in", cond("id", query.In, int64(1), int64(3), int64(99)), []int64{1, 3}},
		{"not in", cond("name", query.NotIn, "bob", "eve"), []int64{1, 3, 4}},
		{"in empty", cond("id", query.In), []int64{}},
		{"between", cond("age", query.Between, int64(25), int64(30)), []int64{1, 2, 5}},
		{"is null", cond("email", query.IsNull), []int64{2}},
		{"not null", cond("age", query.IsNotNull), []int64{1, 2, 3, 5}},
		{"is true", cond("active", query.IsTrue), []int64{1, 4}},
		{"is false", cond("active", query.IsFalse), []int64{2, 5}},
		{"or of and", query.Or{cond("name", query.Eq, "Ann"), query.And{cond("age", query.Ge, int64(40)), cond("email", query.IsNotNull)}}, []int64{1, 3}},
		{"not keeps null", query.Not{X: cond("active", query.IsTrue)}, []int64{2, 3, 5}},
		{"not of or", query.Not{X: query.Or{cond("id", query.Eq, int64(1)), cond("id", query.Eq, int64(2))}}, []int64{3, 4, 5}},
		{"empty and", query.And{}, []int64{1, 2, 3, 4, 5}},
		{"empty or", query.Or{}, []int64{}},
		{"reserved word column", cond("order", query.Eq, int64(3)), []int64{1}},
		{"mixed case column", cond("MixedCase", query.Eq, "x"), []int64{1, 5}},
		{"injection stays a value", cond("name", query.Eq, "x' OR '1'='1"), []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(t, src, people(tt.where)); !slices.Equal(got, tt.want) {
				t.Fatalf("ids %v, want %v", got, tt.want)
			}
		})
	}
}

func testOrderPaging(t *testing.T, db *testDB, src dialects.Source) {
	page := func(limit, offset int64) *query.Plan {
		return &query.Plan{Action: query.Read, Schema: db.schema, Table: "people", Columns: []string{"id"},
			Order: []query.Order{{Column: "age", Desc: true}, {Column: "id"}}, Limit: limit, Offset: offset}
	}
	// PostgreSQL sorts NULL first in descending order.
	if got := ids(t, src, page(0, 0)); !slices.Equal(got, []int64{4, 3, 1, 2, 5}) {
		t.Fatalf("order: %v", got)
	}
	for _, tt := range []struct {
		offset int64
		want   []int64
	}{{0, []int64{4, 3}}, {2, []int64{1, 2}}, {4, []int64{5}}, {6, []int64{}}, {100, []int64{}}} {
		if got := ids(t, src, page(2, tt.offset)); !slices.Equal(got, tt.want) {
			t.Errorf("offset %d: %v, want %v", tt.offset, got, tt.want)
		}
	}
	// Schema may be left to the source; another schema is not found here.
	p := page(1, 0)
	p.Schema = ""
	if got := ids(t, src, p); !slices.Equal(got, []int64{4}) {
		t.Errorf("empty schema: %v", got)
	}
	p.Schema = "public"
	wantKind(t, readAll(src, p), fault.NotFound)
}

func insertPlan(db *testDB, rows ...[]any) *query.Plan {
	return &query.Plan{Action: query.Insert, Schema: db.schema, Table: "items", Columns: []string{"id", "name", "qty"}, Rows: rows}
}

func testInsert(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	def := query.Default{}
	res, err := src.Write(ctx, insertPlan(db,
		[]any{def, "a", int64(2)},
		[]any{def, "b", def},
		[]any{def, "c", "3"},
	))
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 3 {
		t.Errorf("RowsAffected %d", res.RowsAffected)
	}
	var names []string
	for _, c := range res.Columns {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"id", "name", "qty", "note"}) || res.Columns[0].Kind != dialects.KindInt {
		t.Errorf("columns %+v", res.Columns)
	}
	want := [][]any{{int64(1), "a", int64(2), nil}, {int64(2), "b", int64(1), nil}, {int64(3), "c", int64(3), nil}}
	if !reflect.DeepEqual(res.Returned, want) {
		t.Errorf("returned %v, want %v", res.Returned, want)
	}

	// One bad row fails the whole batch.
	before := db.count(t, "items")
	_, err = src.Write(ctx, insertPlan(db, []any{def, "d", int64(1)}, []any{def, "e", int64(1)}, []any{def, "f", int64(-1)}))
	wantKind(t, err, fault.Invalid)
	if n := db.count(t, "items"); n != before {
		t.Fatalf("failed batch left %d rows, had %d", n, before)
	}

	// Duplicate key: Conflict naming neither constraint nor value, driver
	// error kept.
	_, err = src.Write(ctx, insertPlan(db, []any{def, "a", int64(1)}))
	wantKind(t, err, fault.Conflict)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Errorf("errors.As PgError: %v", err)
	}
	if msg := fault.As(err).Message; msg != dialects.DuplicateKeyMessage {
		t.Errorf("message %q", msg)
	}

	// A batch over the 65535-value limit is split, in one transaction.
	big := func(prefix string, n int) *query.Plan {
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = []any{def, fmt.Sprintf("%s-%d", prefix, i), int64(i)}
		}
		return insertPlan(db, rows...)
	}
	res, err = src.Write(ctx, big("bulk", 40000)) // 80000 values
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 40000 || len(res.Returned) != 40000 || res.Returned[39999][1] != "bulk-39999" {
		t.Fatalf("bulk: affected %d, returned %d", res.RowsAffected, len(res.Returned))
	}
	before = db.count(t, "items")
	p := big("bulk2", 40000)
	p.Rows[39999][1] = "a" // duplicate in the second chunk
	_, err = src.Write(ctx, p)
	wantKind(t, err, fault.Conflict)
	if n := db.count(t, "items"); n != before {
		t.Fatalf("failed chunked batch left %d rows, had %d", n, before)
	}

	// DEFAULT VALUES.
	db.exec(t, "CREATE TABLE defaults_only (id int8 GENERATED ALWAYS AS IDENTITY, at date DEFAULT '2024-01-01')")
	res, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: "defaults_only", Rows: [][]any{{}}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Returned, [][]any{{int64(1), "2024-01-01"}}) {
		t.Errorf("default values: %v", res.Returned)
	}
}

func testUpdateDelete(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	db.exec(t, "CREATE TABLE ud AS SELECT g AS id, g % 3 AS grp, 'n' || g AS name FROM generate_series(1, 30) g")
	res, err := src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: "ud",
		Set:   []query.Assign{{Column: "name", Value: "changed"}, {Column: "grp", Value: int64(9)}},
		Where: query.And{cond("grp", query.Eq, int64(0)), cond("id", query.Le, int64(15))}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 5 {
		t.Errorf("update RowsAffected %d, want 5", res.RowsAffected)
	}
	res, err = src.Write(ctx, &query.Plan{Action: query.Delete, Schema: db.schema, Table: "ud", Where: cond("grp", query.Eq, int64(9))})
	if err != nil || res.RowsAffected != 5 {
		t.Fatalf("delete: %d, %v", res.RowsAffected, err)
	}
	res, err = src.Write(ctx, &query.Plan{Action: query.Delete, Schema: db.schema, Table: "ud", Where: cond("id", query.Eq, int64(-1))})
	if err != nil || res.RowsAffected != 0 {
		t.Fatalf("delete none: %d, %v", res.RowsAffected, err)
	}
	_, err = src.Write(ctx, &query.Plan{Action: query.Delete, Schema: db.schema, Table: "ud"})
	wantKind(t, err, fault.Invalid)
	res, err = src.Write(ctx, &query.Plan{Action: query.Delete, Schema: db.schema, Table: "ud", All: true})
	if err != nil || res.RowsAffected != 25 {
		t.Fatalf("delete all: %d, %v", res.RowsAffected, err)
	}
}

func testErrors(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	items := func(where query.Expr) *query.Plan {
		return &query.Plan{Action: query.Read, Schema: db.schema, Table: "items", Columns: []string{"id"}, Where: where}
	}
	t.Run("bad input", func(t *testing.T) {
		err := readAll(src, items(cond("id", query.Eq, "abc")))
		wantKind(t, err, fault.Invalid)
		if msg := fault.As(err).Message; !strings.Contains(msg, `invalid input syntax for type bigint: "abc"`) {
			t.Errorf("message %q", msg)
		}
		_, err = src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: "items",
			Set: []query.Assign{{Column: "qty", Value: "99999999999"}}, All: true})
		wantKind(t, err, fault.Invalid) // out of range
	})
	t.Run("constraints", func(t *testing.T) {
		_, err := src.Write(ctx, insertPlan(db, []any{query.Default{}, nil, int64(1)}))
		wantKind(t, err, fault.Invalid) // not null
		_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: "orders",
			Columns: []string{"id", "item_id"}, Rows: [][]any{{int64(1), int64(999999999)}}})
		wantKind(t, err, fault.Invalid) // foreign key
		_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: "every",
			Columns: []string{"gen"}, Rows: [][]any{{int64(1)}}})
		wantKind(t, err, fault.Invalid) // generated column
	})
	t.Run("statement timeout", func(t *testing.T) {
		slow := db.open(t, dialects.Config{StatementTimeout: 100 * time.Millisecond})
		start := time.Now()
		rows, err := slow.Read(ctx, &query.Plan{Action: query.Read, Schema: db.schema, Table: "slow", Columns: []string{"x"}})
		if err == nil {
			_ = rows.Close()
		}
		wantKind(t, err, fault.Timeout) // reported by Read itself, before any row
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
			t.Errorf("errors.As PgError: %v", err)
		}
		if d := time.Since(start); d > 400*time.Millisecond {
			t.Errorf("took %v", d)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		rows, err := src.Read(cctx, &query.Plan{Action: query.Read, Schema: db.schema, Table: "slow", Columns: []string{"x"}})
		if err == nil {
			_ = rows.Close()
		}
		wantKind(t, err, fault.Timeout)
	})
	t.Run("unreachable", func(t *testing.T) {
		down := db.open(t, dialects.Config{DSN: "postgres://minimal@127.0.0.1:1/minimal?sslmode=disable&connect_timeout=2"})
		wantKind(t, down.Ping(ctx), fault.Unavailable)
		_, err := down.Tables(ctx)
		wantKind(t, err, fault.Unavailable)
		wantKind(t, readAll(down, items(nil)), fault.Unavailable)
		_, err = down.Write(ctx, insertPlan(db, []any{query.Default{}, "zz", int64(1)}))
		wantKind(t, err, fault.Unavailable)
	})
	t.Run("closed", func(t *testing.T) {
		closed := db.open(t, dialects.Config{})
		if err := closed.Close(); err != nil {
			t.Fatal(err)
		}
		wantKind(t, readAll(closed, items(nil)), fault.Unavailable)
		wantKind(t, closed.Ping(ctx), fault.Unavailable)
	})
	t.Run("bad dsn", func(t *testing.T) {
		_, err := pg.Open(ctx, dialects.Config{DSN: "postgres://u:secret@host:notaport/db"})
		wantKind(t, err, fault.Invalid)
		if strings.Contains(fault.As(err).Message, "secret") {
			t.Errorf("message shows the password: %q", fault.As(err).Message)
		}
	})
}
