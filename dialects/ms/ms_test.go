package ms_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/ms"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// dsnEnv names the SQL Server the integration tests run against, e.g.
// sqlserver://sa:Secret_1@127.0.0.1:1433?database=master. The login needs
// to create and drop a schema and its objects.
const dsnEnv = "MINIMAL_TEST_MS_DSN"

// msDSN returns the test server's DSN or skips the test, saying why. No SQL
// Server can be had on the machines this project is built on, so unlike the
// other dialects' tests this one skips even under MINIMAL_TEST_REQUIRE_DBS=1
// (dialecttest.DSN would fail there): SQL Server is proven by the golden SQL
// and the unit tests wherever it is absent, and by these tests wherever the
// variable names one.
func msDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skip("no SQL Server on this machine: set " + dsnEnv + " to run")
	}
	return dsn
}

// testDB is one uniquely named schema on the test server, dropped with
// everything the test created in it when the test ends.
type testDB struct {
	dsn    string
	schema string
	admin  *sql.DB
	drops  []string // statements undoing what was created, run last first
}

func newTestDB(t *testing.T) *testDB {
	t.Helper()
	dsn := msDSN(t)
	admin, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsnEnv, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		t.Fatalf("connect %s: %v", dsnEnv, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	db := &testDB{dsn: dsn, schema: "minimal_test_" + hex.EncodeToString(b[:]), admin: admin}
	db.exec(t, "CREATE SCHEMA "+db.q(""))
	db.drops = append(db.drops, "DROP SCHEMA "+db.q(""))
	t.Cleanup(func() {
		for i := len(db.drops) - 1; i >= 0; i-- {
			if _, err := admin.Exec(db.drops[i]); err != nil {
				t.Errorf("cleanup %s: %v", db.drops[i], err)
			}
		}
		_ = admin.Close()
	})
	return db
}

// q quotes name qualified by the test schema ("" gives the schema alone).
func (db *testDB) q(name string) string {
	s := "[" + db.schema + "]"
	if name == "" {
		return s
	}
	return s + ".[" + strings.ReplaceAll(name, "]", "]]") + "]"
}

func (db *testDB) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := db.admin.Exec(sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// create runs a CREATE statement for an object of the test schema and
// remembers how to drop it. kind is TABLE, VIEW or TYPE.
func (db *testDB) create(t testing.TB, kind, name, ddl string) {
	t.Helper()
	db.exec(t, ddl)
	db.drops = append(db.drops, "DROP "+kind+" "+db.q(name))
}

func (db *testDB) count(t testing.TB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.admin.QueryRow("SELECT COUNT_BIG(*) FROM " + db.q(table)).Scan(&n); err != nil {
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
	src, err := dialects.Open(context.Background(), "ms", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// withParam adds a connection parameter to a URL or an ADO-style DSN.
func withParam(dsn, key, value string) string {
	if strings.HasPrefix(dsn, "sqlserver://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + strings.ReplaceAll(key, " ", "+") + "=" + value
	}
	return strings.TrimSuffix(dsn, ";") + ";" + key + "=" + value
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

// wantNumber checks that the driver's error stays reachable with its
// number.
func wantNumber(t testing.TB, err error, number int32) {
	t.Helper()
	var me mssql.Error
	if !errors.As(err, &me) || me.Number != number {
		t.Errorf("errors.As mssql.Error %d: %v", number, err)
	}
}

func cond(col string, op query.Op, args ...any) *query.Cond {
	return &query.Cond{Column: col, Op: op, Args: args}
}

func TestSQLServer(t *testing.T) {
	db := newTestDB(t)
	setupSchema(t, db)
	src := db.open(t, dialects.Config{MaxConns: 4})
	if src.Dialect().Name() != "ms" || !slices.Contains(dialects.Types(), "ms") {
		t.Fatal("ms is not registered")
	}
	if err := src.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Run("Tables", func(t *testing.T) { testTables(t, db, src) })
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, db, src) })
	t.Run("RoundTripGUIDConversion", func(t *testing.T) {
		conv := db.open(t, dialects.Config{DSN: withParam(db.dsn, "guid conversion", "true")})
		testRoundTrip(t, db, conv)
	})
	t.Run("Operators", func(t *testing.T) { testOperators(t, db, src) })
	t.Run("OrderPaging", func(t *testing.T) { testOrderPaging(t, db, src) })
	t.Run("Insert", func(t *testing.T) { testInsert(t, db, src) })
	t.Run("UpdateDelete", func(t *testing.T) { testUpdateDelete(t, db, src) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, db, src) })
}

func setupSchema(t *testing.T, db *testDB) {
	db.create(t, "TYPE", "ssn", "CREATE TYPE "+db.q("ssn")+" FROM varchar(11) NULL")
	db.create(t, "TABLE", "every", `CREATE TABLE `+db.q("every")+` (
		[id]   bigint IDENTITY(1,1) PRIMARY KEY,
		[ti]   tinyint,
		[si]   smallint,
		[i]    int NOT NULL DEFAULT 7,
		[bi]   bigint,
		[r]    real,
		[f]    float,
		[dec]  decimal(38,12),
		[num]  numeric(10,2),
		[m]    money,
		[sm]   smallmoney,
		[b]    bit,
		[c]    char(3),
		[vc]   varchar(20),
		[nc]   nchar(3),
		[nvc]  nvarchar(max),
		[tx]   text,
		[ntx]  ntext,
		[x]    xml,
		[u]    uniqueidentifier DEFAULT NEWID(),
		[d]    date,
		[t]    time(7),
		[dt]   datetime,
		[dt2]  datetime2(7),
		[sdt]  smalldatetime,
		[dto]  datetimeoffset(7) DEFAULT SYSDATETIMEOFFSET(),
		[bin]  binary(3),
		[vb]   varbinary(max),
		[img]  image,
		[code] `+db.q("ssn")+`,
		[gen]  AS (CAST([i] AS bigint) * 2),
		[rv]   rowversion
	)`)
	db.create(t, "TABLE", "pair", "CREATE TABLE "+db.q("pair")+" ([a] int, [b] int, [c] nvarchar(10) NOT NULL, PRIMARY KEY ([a], [b]))")
	db.create(t, "VIEW", "every_view", "CREATE VIEW "+db.q("every_view")+" AS SELECT [id], [nvc] FROM "+db.q("every"))
	// Rows stream from the first moment, so a cut or a deadline is noticed
	// by the server at once; reading them all would take hours.
	db.create(t, "VIEW", "slow", "CREATE VIEW "+db.q("slow")+` AS SELECT a.object_id AS x
		FROM sys.all_objects AS a CROSS JOIN sys.all_objects AS b CROSS JOIN sys.all_objects AS c`)
	db.create(t, "TABLE", "people", `CREATE TABLE `+db.q("people")+` ([id] int PRIMARY KEY,
		[name] nvarchar(50) COLLATE Latin1_General_100_CI_AS NOT NULL, [age] int, [score] float, [active] bit,
		[email] varchar(100) COLLATE Latin1_General_100_CI_AS, [order] int, [MixedCase] nvarchar(10))`)
	db.exec(t, `INSERT INTO `+db.q("people")+` VALUES
		(1, N'Ann', 30, 9.5, 1, 'ann@example.com', 3, N'x'),
		(2, N'bob', 25, 7.0, 0, NULL, 1, N'y'),
		(3, N'Cy_d', 40, 8.25, NULL, 'cy@EXAMPLE.com', 2, N'z'),
		(4, N'Dee%[1]', NULL, NULL, 1, 'dee@other.org', 5, NULL),
		(5, N'eve', 25, 6.5, 0, 'eve@example.com', 4, N'x')`)
	db.create(t, "TABLE", "items", `CREATE TABLE `+db.q("items")+` ([id] bigint IDENTITY(1,1) PRIMARY KEY,
		[name] nvarchar(100) NOT NULL CONSTRAINT [items_name_key] UNIQUE, [qty] int NOT NULL DEFAULT 1 CHECK ([qty] >= 0),
		[note] nvarchar(max))`)
	db.create(t, "TABLE", "orders", "CREATE TABLE "+db.q("orders")+" ([id] int PRIMARY KEY, [item_id] bigint REFERENCES "+db.q("items")+" ([id]))")
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
	wantNames := []string{"every", "every_view", "items", "orders", "pair", "people", "slow"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("tables %v, want %v", names, wantNames)
	}

	type col = dialects.Column
	want := []col{
		{Name: "id", DBType: "bigint", Kind: dialects.KindInt, PrimaryKey: true, HasDefault: true},
		{Name: "ti", DBType: "tinyint", Kind: dialects.KindInt, Nullable: true},
		{Name: "si", DBType: "smallint", Kind: dialects.KindInt, Nullable: true},
		{Name: "i", DBType: "int", Kind: dialects.KindInt, HasDefault: true, Default: "((7))"},
		{Name: "bi", DBType: "bigint", Kind: dialects.KindInt, Nullable: true},
		{Name: "r", DBType: "real", Kind: dialects.KindFloat, Nullable: true},
		{Name: "f", DBType: "float", Kind: dialects.KindFloat, Nullable: true},
		{Name: "dec", DBType: "decimal(38,12)", Kind: dialects.KindDecimal, Nullable: true},
		{Name: "num", DBType: "numeric(10,2)", Kind: dialects.KindDecimal, Nullable: true},
		{Name: "m", DBType: "money", Kind: dialects.KindDecimal, Nullable: true},
		{Name: "sm", DBType: "smallmoney", Kind: dialects.KindDecimal, Nullable: true},
		{Name: "b", DBType: "bit", Kind: dialects.KindBool, Nullable: true},
		{Name: "c", DBType: "char(3)", Kind: dialects.KindString, Nullable: true},
		{Name: "vc", DBType: "varchar(20)", Kind: dialects.KindString, Nullable: true},
		{Name: "nc", DBType: "nchar(3)", Kind: dialects.KindString, Nullable: true},
		{Name: "nvc", DBType: "nvarchar(max)", Kind: dialects.KindString, Nullable: true},
		{Name: "tx", DBType: "text", Kind: dialects.KindString, Nullable: true},
		{Name: "ntx", DBType: "ntext", Kind: dialects.KindString, Nullable: true},
		{Name: "x", DBType: "xml", Kind: dialects.KindString, Nullable: true},
		{Name: "u", DBType: "uniqueidentifier", Kind: dialects.KindUUID, Nullable: true, HasDefault: true},
		{Name: "d", DBType: "date", Kind: dialects.KindDate, Nullable: true},
		{Name: "t", DBType: "time(7)", Kind: dialects.KindTime, Nullable: true},
		{Name: "dt", DBType: "datetime", Kind: dialects.KindTimestamp, Nullable: true},
		{Name: "dt2", DBType: "datetime2(7)", Kind: dialects.KindTimestamp, Nullable: true},
		{Name: "sdt", DBType: "smalldatetime", Kind: dialects.KindTimestamp, Nullable: true},
		{Name: "dto", DBType: "datetimeoffset(7)", Kind: dialects.KindTimestampTZ, Nullable: true, HasDefault: true},
		{Name: "bin", DBType: "binary(3)", Kind: dialects.KindBytes, Nullable: true},
		{Name: "vb", DBType: "varbinary(max)", Kind: dialects.KindBytes, Nullable: true},
		{Name: "img", DBType: "image", Kind: dialects.KindBytes, Nullable: true},
		{Name: "code", DBType: "ssn", Kind: dialects.KindString, Nullable: true},
		{Name: "gen", DBType: "bigint", Kind: dialects.KindInt, Nullable: true, HasDefault: true},
		{Name: "rv", DBType: "timestamp", Kind: dialects.KindBytes, HasDefault: true},
	}
	got := byName["every"].Columns
	for i := range max(len(got), len(want)) {
		var g, w col
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		// The server spells default and computed expressions its own way
		// ("(newid())", "(CONVERT([bigint],[i])*(2))"): checked loosely.
		gd, wd := g.Default, w.Default
		g.Default, w.Default = "", ""
		if g != w {
			t.Errorf("every column %d:\n got %+v\nwant %+v", i, g, w)
		}
		if wd != "" && gd != wd {
			t.Errorf("every.%s: Default %q, want %q", g.Name, gd, wd)
		}
		if (g.Name == "u" || g.Name == "dto" || g.Name == "gen") && gd == "" {
			t.Errorf("every.%s: no Default expression", g.Name)
		}
	}

	pair := byName["pair"].Columns
	if len(pair) != 3 || !pair[0].PrimaryKey || !pair[1].PrimaryKey || pair[2].PrimaryKey || pair[2].Nullable {
		t.Errorf("pair: %+v", pair)
	}
	view := byName["every_view"].Columns
	if len(view) != 2 || view[0].Name != "id" || view[0].Kind != dialects.KindInt || view[0].PrimaryKey || view[1].DBType != "nvarchar(max)" {
		t.Errorf("every_view: %+v", view)
	}
	if o := byName["orders"].Columns; len(o) != 2 || o[0].RefTable != "" || o[1].RefTable != "items" || o[1].RefColumn != "id" {
		t.Errorf("orders: the foreign key of item_id is not shown: %+v", o)
	}
}

const roundTripGUID = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"

func testRoundTrip(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	db.exec(t, "TRUNCATE TABLE "+db.q("every")) // ids from 1 again
	db.exec(t, `INSERT INTO `+db.q("every")+` ([ti], [si], [i], [bi], [r], [f], [dec], [num], [m], [sm], [b], [c], [vc], [nc],
		[nvc], [tx], [ntx], [x], [u], [d], [t], [dt], [dt2], [sdt], [dto], [bin], [vb], [img], [code]) VALUES (
		255, -32768, 2147483647, -9223372036854775808, 1.1, 0.1, 12345678901234567890.123456789012, -0.5,
		922337203685477.5807, -214748.3648, 1, 'ab', 'x', N'ab', N'it''s "quoted" \ ünïcødé ✓ 🎉', 'tx', N'ntx',
		N'<a>1</a>', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '2024-02-29', '13:04:05.12', '2024-01-02T03:04:05.003',
		'2024-01-02T03:04:05.1234567', '2024-01-02T03:04:00', '2024-01-02T03:04:05.5+02:00', 0x00FF10, 0x00FF10, 0x01,
		'123-45-6789')`)
	db.exec(t, "INSERT INTO "+db.q("every")+" ([u], [dto]) VALUES (NULL, NULL)")
	db.exec(t, "INSERT INTO "+db.q("every")+" ([bi], [u], [dto], [vb], [nvc]) VALUES (9223372036854775807, NULL, NULL, 0x, N'')")

	cols := []string{"id", "ti", "si", "i", "bi", "r", "f", "dec", "num", "m", "sm", "b", "c", "vc", "nc", "nvc", "tx", "ntx",
		"x", "u", "d", "t", "dt", "dt2", "sdt", "dto", "bin", "vb", "img", "code", "gen"}
	rows, err := src.Read(ctx, &query.Plan{Action: query.Read, Schema: db.schema, Table: "every", Columns: cols,
		Order: []query.Order{{Column: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	rowCols := rows.Columns()
	got := collect(t, rows, nil)
	if len(got) != 3 {
		t.Fatalf("%d rows, want 3", len(got))
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
			"id": int64(1), "ti": int64(255), "si": int64(-32768), "i": int64(2147483647), "bi": int64(-9223372036854775808),
			"r": 1.1, "f": 0.1, "dec": json.Number("12345678901234567890.123456789012"), "num": json.Number("-0.50"),
			"m": json.Number("922337203685477.5807"), "sm": json.Number("-214748.3648"), "b": true,
			"c": "ab ", "vc": "x", "nc": "ab ", "nvc": `it's "quoted" \ ünïcødé ✓ 🎉`, "tx": "tx", "ntx": "ntx",
			"x": "<a>1</a>", "u": roundTripGUID, "d": "2024-02-29", "t": "13:04:05.12",
			"dt": "2024-01-02T03:04:05.003", "dt2": "2024-01-02T03:04:05.1234567", "sdt": "2024-01-02T03:04:00",
			"dto": time.Date(2024, 1, 2, 1, 4, 5, 500000000, time.UTC),
			"bin": []byte{0, 0xff, 0x10}, "vb": []byte{0, 0xff, 0x10}, "img": []byte{1}, "code": "123-45-6789",
			"gen": int64(4294967294),
		},
		nulls(map[string]any{"id": int64(2), "i": int64(7), "gen": int64(14)}),
		nulls(map[string]any{"id": int64(3), "i": int64(7), "gen": int64(14), "bi": int64(9223372036854775807),
			"vb": []byte{}, "nvc": ""}),
	}
	for r := range want {
		for i, c := range cols {
			w, g := want[r][c], got[r][i]
			if tw, ok := w.(time.Time); ok {
				if tg, ok := g.(time.Time); !ok || !tg.Equal(tw) {
					t.Errorf("row %d %s: got %#v, want %v", r+1, c, g, tw)
				}
				continue
			}
			if !reflect.DeepEqual(w, g) {
				t.Errorf("row %d %s: got %#v (%T), want %#v (%T)", r+1, c, g, g, w, w)
			}
		}
	}
	wantKinds := map[string]dialects.Kind{"id": dialects.KindInt, "dec": dialects.KindDecimal, "m": dialects.KindDecimal,
		"u": dialects.KindUUID, "dto": dialects.KindTimestampTZ, "dt2": dialects.KindTimestamp, "d": dialects.KindDate,
		"t": dialects.KindTime, "vb": dialects.KindBytes, "b": dialects.KindBool, "r": dialects.KindFloat, "x": dialects.KindString}
	for i, c := range rowCols {
		if c.Name != cols[i] {
			t.Errorf("column %d named %q, want %q", i, c.Name, cols[i])
		}
		if k, ok := wantKinds[c.Name]; ok && c.Kind != k {
			t.Errorf("column %s kind %s, want %s", c.Name, c.Kind, k)
		}
	}
	// The normalized values are what the faces encode: JSON keeps every
	// digit.
	js, err := json.Marshal(got[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"-9223372036854775808", "12345678901234567890.123456789012", "922337203685477.5807"} {
		if !strings.Contains(string(js), s) {
			t.Errorf("JSON of row 1 lost %s: %s", s, js)
		}
	}
	// A uniqueidentifier found by the string a client sends, in either case.
	ids := func(where query.Expr) []int64 {
		rows, err := src.Read(ctx, &query.Plan{Action: query.Read, Schema: db.schema, Table: "every", Columns: []string{"id"}, Where: where})
		var out []int64
		for _, r := range collect(t, rows, err) {
			out = append(out, r[0].(int64))
		}
		return out
	}
	for _, u := range []string{roundTripGUID, strings.ToUpper(roundTripGUID)} {
		if got := ids(cond("u", query.Eq, u)); !slices.Equal(got, []int64{1}) {
			t.Errorf("u = %s: %v", u, got)
		}
	}
	if got := ids(cond("dto", query.Eq, "2024-01-02T01:04:05.5Z")); !slices.Equal(got, []int64{1}) {
		t.Errorf("dto = the same instant in UTC: %v", got)
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
		{"like escaped percent", cond("name", query.Like, `%\%%`), []int64{4}},
		{"like escaped underscore", cond("name", query.Like, `%\_%`), []int64{3}},
		// [ is literal: unescaped, %[1] would be "ends with 1".
		{"like bracket is literal", cond("name", query.Like, "%[1]"), []int64{4}},
		{"like bracket from a request", cond("name", query.Like, query.LikePattern("*%[1]")), []int64{4}},
		// The column's collation is case-insensitive; like is not.
		{"like is case sensitive", cond("name", query.Like, "ann"), []int64{}},
		{"like is accent sensitive", cond("name", query.Like, "Ånn"), []int64{}},
		{"ilike", cond("email", query.ILike, "%@example.com"), []int64{1, 3, 5}},
		{"ilike upper pattern", cond("name", query.ILike, "ANN"), []int64{1}},
		{"in", cond("id", query.In, int64(1), int64(3), int64(99)), []int64{1, 3}},
		{"not in", cond("name", query.NotIn, "bob", "eve"), []int64{1, 3, 4}},
		{"in empty", cond("id", query.In), []int64{}},
		{"not in empty", cond("id", query.NotIn), []int64{1, 2, 3, 4, 5}},
		{"between", cond("age", query.Between, int64(25), int64(30)), []int64{1, 2, 5}},
		{"is null", cond("email", query.IsNull), []int64{2}},
		{"not null", cond("age", query.IsNotNull), []int64{1, 2, 3, 5}},
		{"is true", cond("active", query.IsTrue), []int64{1, 4}},
		{"is false", cond("active", query.IsFalse), []int64{2, 5}},
		{"eq true", cond("active", query.Eq, true), []int64{1, 4}},
		{"or of and", query.Or{cond("name", query.Eq, "Ann"), query.And{cond("age", query.Ge, int64(40)), cond("email", query.IsNotNull)}}, []int64{1, 3}},
		{"not keeps null", query.Not{X: cond("active", query.IsTrue)}, []int64{2, 3, 5}},
		{"not is false keeps null", query.Not{X: cond("active", query.IsFalse)}, []int64{1, 3, 4}},
		{"not of comparison skips null", query.Not{X: cond("age", query.Eq, int64(25))}, []int64{1, 3}},
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
	// SQL Server sorts NULL as the smallest value: last in descending order.
	if got := ids(t, src, page(0, 0)); !slices.Equal(got, []int64{3, 1, 2, 5, 4}) {
		t.Fatalf("order: %v", got)
	}
	for _, tt := range []struct {
		offset int64
		want   []int64
	}{{0, []int64{3, 1}}, {2, []int64{2, 5}}, {4, []int64{4}}, {5, []int64{}}, {100, []int64{}}} {
		if got := ids(t, src, page(2, tt.offset)); !slices.Equal(got, tt.want) {
			t.Errorf("offset %d: %v, want %v", tt.offset, got, tt.want)
		}
	}
	// Offset alone, and a page without an order (ORDER BY (SELECT NULL)).
	if got := ids(t, src, page(0, 3)); !slices.Equal(got, []int64{5, 4}) {
		t.Errorf("offset without limit: %v", got)
	}
	unordered := &query.Plan{Action: query.Read, Schema: db.schema, Table: "people", Columns: []string{"id"}, Limit: 3, Offset: 1}
	if got := ids(t, src, unordered); len(got) != 3 {
		t.Errorf("unordered page: %v", got)
	}
	// Schema may be left to the source; another schema is not found here.
	p := page(1, 0)
	p.Schema = ""
	if got := ids(t, src, p); !slices.Equal(got, []int64{3}) {
		t.Errorf("empty schema: %v", got)
	}
	p.Schema = "dbo"
	wantKind(t, readAll(src, p), fault.NotFound)
}

func insertPlan(db *testDB, rows ...[]any) *query.Plan {
	return &query.Plan{Action: query.Insert, Schema: db.schema, Table: "items", Columns: []string{"id", "name", "qty"}, Rows: rows}
}

// byID sorts returned rows by their first column (the identity).
func byID(rows [][]any) [][]any {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i][0].(int64) < rows[j][0].(int64) })
	return rows
}

func testInsert(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	def := query.Default{}
	// id is an IDENTITY named with DEFAULT cells: left out of the INSERT.
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
		t.Errorf("returned %v, want %v (in insert order)", res.Returned, want)
	}

	// One bad row fails the whole statement.
	before := db.count(t, "items")
	_, err = src.Write(ctx, insertPlan(db, []any{def, "d", int64(1)}, []any{def, "e", int64(1)}, []any{def, "f", int64(-1)}))
	wantKind(t, err, fault.Invalid) // CHECK
	wantNumber(t, err, 547)
	if n := db.count(t, "items"); n != before {
		t.Fatalf("failed batch left %d rows, had %d", n, before)
	}

	// Duplicate key: Conflict, driver error kept.
	_, err = src.Write(ctx, insertPlan(db, []any{def, "a", int64(1)}))
	wantKind(t, err, fault.Conflict)
	wantNumber(t, err, 2627)

	// A batch over 1000 rows and 2098 values is split, in one transaction.
	big := func(prefix string, n int) *query.Plan {
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = []any{def, fmt.Sprintf("%s-%d", prefix, i), int64(i)}
		}
		return insertPlan(db, rows...)
	}
	res, err = src.Write(ctx, big("bulk", 2500))
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 2500 || len(res.Returned) != 2500 {
		t.Fatalf("bulk: affected %d, returned %d", res.RowsAffected, len(res.Returned))
	}
	if last := byID(res.Returned)[2499]; last[1] != "bulk-2499" {
		t.Errorf("bulk: last row %v", last)
	}
	before = db.count(t, "items")
	p := big("bulk2", 2500)
	p.Rows[2499][1] = "a" // duplicate in the last chunk
	_, err = src.Write(ctx, p)
	wantKind(t, err, fault.Conflict)
	if n := db.count(t, "items"); n != before {
		t.Fatalf("failed chunked batch left %d rows, had %d", n, before)
	}

	// An identity mixing explicit values and DEFAULT: SQL Server refuses.
	_, err = src.Write(ctx, insertPlan(db, []any{int64(9000), "x1", int64(1)}, []any{def, "x2", int64(1)}))
	wantKind(t, err, fault.Invalid)
	_, err = src.Write(ctx, insertPlan(db, []any{int64(9000), "x1", int64(1)}))
	wantKind(t, err, fault.Invalid) // IDENTITY_INSERT is off
	wantNumber(t, err, 544)

	// DEFAULT VALUES.
	db.create(t, "TABLE", "defaults_only", "CREATE TABLE "+db.q("defaults_only")+" ([id] bigint IDENTITY(1,1), [at] date DEFAULT '2024-01-01')")
	res, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: "defaults_only", Rows: [][]any{{}}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Returned, [][]any{{int64(1), "2024-01-01"}}) || res.RowsAffected != 1 {
		t.Errorf("default values: %v", res.Returned)
	}

	// NULL reaches columns no NULL parameter converts to (varbinary,
	// uniqueidentifier), and typed values are bound as the engine gives them.
	db.create(t, "TABLE", "typed", "CREATE TABLE "+db.q("typed")+` ([id] int IDENTITY(1,1) PRIMARY KEY, [vb] varbinary(max),
		[u] uniqueidentifier, [ts] datetime2(6), [tz] datetimeoffset(6), [dec] decimal(20,6), [b] bit)`)
	res, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: "typed",
		Columns: []string{"vb", "u", "ts", "tz", "dec", "b"}, Rows: [][]any{
			{nil, nil, nil, nil, nil, nil},
			{[]byte{0, 1, 0xff}, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "2024-02-29T23:59:59.123456",
				"2024-02-29T23:59:59.123456+02:00", "12345678901234.123456", true},
		}})
	if err != nil {
		t.Fatal(err)
	}
	wantTyped := [][]any{
		{int64(1), nil, nil, nil, nil, nil, nil},
		{int64(2), []byte{0, 1, 0xff}, roundTripGUID, "2024-02-29T23:59:59.123456",
			time.Date(2024, 2, 29, 21, 59, 59, 123456000, time.UTC), json.Number("12345678901234.123456"), true},
	}
	got := byID(res.Returned)
	for r := range wantTyped {
		for i := range wantTyped[r] {
			w, g := wantTyped[r][i], got[r][i]
			if tw, ok := w.(time.Time); ok {
				if tg, ok := g.(time.Time); !ok || !tg.Equal(tw) {
					t.Errorf("typed row %d col %d: %#v, want %v", r, i, g, tw)
				}
			} else if !reflect.DeepEqual(w, g) {
				t.Errorf("typed row %d col %d: %#v (%T), want %#v", r, i, g, g, w)
			}
		}
	}

	// A table with a trigger cannot answer OUTPUT without INTO.
	db.create(t, "TABLE", "trig", "CREATE TABLE "+db.q("trig")+" ([id] int IDENTITY(1,1) PRIMARY KEY, [n] int)")
	db.exec(t, "CREATE TRIGGER "+db.q("trig_ins")+" ON "+db.q("trig")+" AFTER INSERT AS SET NOCOUNT ON;")
	_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: "trig", Columns: []string{"n"}, Rows: [][]any{{int64(1)}}})
	wantKind(t, err, fault.Unsupported)
	wantNumber(t, err, 334)
}

func testUpdateDelete(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	db.create(t, "TABLE", "ud", "CREATE TABLE "+db.q("ud")+" ([id] int PRIMARY KEY, [grp] int, [name] nvarchar(20))")
	db.exec(t, `INSERT INTO `+db.q("ud")+` ([id], [grp], [name])
		SELECT n, n % 3, CONCAT(N'n', n)
		FROM (SELECT TOP (30) CAST(ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS int) AS n FROM sys.all_objects) AS g`)
	res, err := src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: "ud",
		Set:   []query.Assign{{Column: "name", Value: "changed"}, {Column: "grp", Value: int64(9)}},
		Where: query.And{cond("grp", query.Eq, int64(0)), cond("id", query.Le, int64(15))}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 5 {
		t.Errorf("update RowsAffected %d, want 5", res.RowsAffected)
	}
	// Rows matched count, also when nothing changes.
	res, err = src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: "ud",
		Set: []query.Assign{{Column: "name", Value: "changed"}}, Where: cond("grp", query.Eq, int64(9))})
	if err != nil || res.RowsAffected != 5 {
		t.Fatalf("update to the same value: %d, %v", res.RowsAffected, err)
	}
	res, err = src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: "ud",
		Set: []query.Assign{{Column: "name", Value: nil}}, Where: cond("id", query.Eq, int64(1))})
	if err != nil || res.RowsAffected != 1 {
		t.Fatalf("update to NULL: %d, %v", res.RowsAffected, err)
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
		_, err = src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: "items",
			Set: []query.Assign{{Column: "qty", Value: "99999999999"}}, All: true})
		wantKind(t, err, fault.Invalid) // out of range
		err = readAll(src, &query.Plan{Action: query.Read, Schema: db.schema, Table: "every", Columns: []string{"id"},
			Where: cond("u", query.Eq, "not-a-guid")})
		wantKind(t, err, fault.Invalid)
	})
	t.Run("constraints", func(t *testing.T) {
		_, err := src.Write(ctx, insertPlan(db, []any{query.Default{}, nil, int64(1)}))
		wantKind(t, err, fault.Invalid) // not null
		wantNumber(t, err, 515)
		_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: "orders",
			Columns: []string{"id", "item_id"}, Rows: [][]any{{int64(1), int64(999999999)}}})
		wantKind(t, err, fault.Invalid) // foreign key
		wantNumber(t, err, 547)
		_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: "every",
			Columns: []string{"gen"}, Rows: [][]any{{int64(1)}}})
		wantKind(t, err, fault.Invalid) // computed column
	})
	t.Run("missing table", func(t *testing.T) {
		wantKind(t, readAll(src, &query.Plan{Action: query.Read, Schema: db.schema, Table: "gone", Columns: []string{"a"}}), fault.NotFound)
		_, err := src.Write(ctx, &query.Plan{Action: query.Delete, Schema: db.schema, Table: "gone", All: true})
		wantKind(t, err, fault.NotFound)
	})
	slowPlan := &query.Plan{Action: query.Read, Schema: db.schema, Table: "slow", Columns: []string{"x"}}
	t.Run("statement timeout", func(t *testing.T) {
		slow := db.open(t, dialects.Config{StatementTimeout: 300 * time.Millisecond})
		start := time.Now()
		wantKind(t, readAll(slow, slowPlan), fault.Timeout)
		if d := time.Since(start); d > 2500*time.Millisecond {
			t.Errorf("took %v", d)
		}
		// The pool is still good.
		if err := readAll(slow, items(nil)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		rows, err := src.Read(cctx, slowPlan)
		if err == nil {
			for rows.Next() {
				if _, err = rows.Values(); err != nil {
					break
				}
			}
			if cerr := rows.Close(); err == nil {
				err = cerr
			}
		}
		wantKind(t, err, fault.Timeout)
	})
	t.Run("unreachable", func(t *testing.T) {
		down := db.open(t, dialects.Config{DSN: "sqlserver://u:p@127.0.0.1:1?database=x&dial+timeout=2"})
		wantKind(t, down.Ping(ctx), fault.Unavailable)
		_, err := down.Tables(ctx)
		wantKind(t, err, fault.Unavailable)
		wantKind(t, readAll(down, items(nil)), fault.Unavailable)
		_, err = down.Write(ctx, insertPlan(db, []any{query.Default{}, "zz", int64(1)}))
		wantKind(t, err, fault.Unavailable)
	})
	t.Run("bad login", func(t *testing.T) {
		bad := db.open(t, dialects.Config{DSN: withParam(db.dsn, "password", "certainly-wrong")})
		err := bad.Ping(ctx)
		wantKind(t, err, fault.Unavailable)
		wantNumber(t, err, 18456)
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
		_, err := ms.Open(ctx, dialects.Config{DSN: "sqlserver://u:secret@host:1433?dial+timeout=soon"})
		wantKind(t, err, fault.Invalid)
		if strings.Contains(fault.As(err).Message, "secret") {
			t.Errorf("message shows the password: %q", fault.As(err).Message)
		}
	})
}
