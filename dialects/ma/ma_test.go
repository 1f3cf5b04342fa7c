package ma_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/dialects/ma"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

const dsnEnv = "MINIMAL_TEST_MA_DSN"

// testDB is the DSN's database with uniquely prefixed tables, dropped when
// the test ends: the test user may own one database only, so tests share
// it and keep to their own names.
type testDB struct {
	dsn     string
	schema  string
	prefix  string
	admin   *sql.DB
	mariaDB bool
	major   int
	minor   int
}

func newTestDB(t testing.TB) *testDB {
	t.Helper()
	dsn := dialecttest.DSN(t, dsnEnv)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("%s: %v", dsnEnv, err)
	}
	if cfg.DBName == "" {
		t.Fatalf("%s names no database", dsnEnv)
	}
	// The admin session works in UTC, like the Source's.
	cfg.ParseTime = false
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin := sql.OpenDB(conn)
	var b [4]byte
	_, _ = rand.Read(b[:])
	db := &testDB{dsn: dsn, schema: cfg.DBName, prefix: "ma" + hex.EncodeToString(b[:]) + "_", admin: admin}
	var version string
	if err := admin.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatalf("connect %s: %v", dsnEnv, err)
	}
	db.mariaDB = strings.Contains(strings.ToLower(version), "mariadb")
	_, _ = fmt.Sscanf(strings.TrimPrefix(version, "5.5.5-"), "%d.%d", &db.major, &db.minor)
	t.Cleanup(func() {
		defer admin.Close()
		rows, err := admin.Query(`SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES
			WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ?`, db.schema, db.prefix+"%")
		if err != nil {
			t.Errorf("list test tables: %v", err)
			return
		}
		var drops []string
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				t.Error(err)
			}
			if typ == "VIEW" {
				drops = append([]string{"DROP VIEW `" + name + "`"}, drops...)
			} else {
				drops = append(drops, "DROP TABLE `"+name+"`")
			}
		}
		_ = rows.Close()
		// One connection, with foreign keys off, so tables drop in any order.
		conn, err := admin.Conn(context.Background())
		if err != nil {
			t.Errorf("drop test tables: %v", err)
			return
		}
		defer conn.Close()
		drops = append([]string{"SET foreign_key_checks = 0"}, drops...)
		for _, d := range drops {
			if _, err := conn.ExecContext(context.Background(), d); err != nil {
				t.Errorf("%s: %v", d, err)
			}
		}
	})
	return db
}

// n is the full name of one of the test's tables.
func (db *testDB) n(name string) string { return db.prefix + name }

// q is the quoted full name.
func (db *testDB) q(name string) string { return "`" + db.n(name) + "`" }

// sql replaces {name} by the quoted full table name.
func (db *testDB) sql(text string) string {
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			return text
		}
		j := strings.IndexByte(text[i:], '}')
		text = text[:i] + db.q(text[i+1:i+j]) + text[i+j+1:]
	}
}

func (db *testDB) exec(t testing.TB, text string, args ...any) {
	t.Helper()
	if _, err := db.admin.Exec(db.sql(text), args...); err != nil {
		t.Fatalf("%s: %v", db.sql(text), err)
	}
}

func (db *testDB) count(t testing.TB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.admin.QueryRow("SELECT COUNT(*) FROM " + db.q(table)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (db *testDB) hasUUID() bool {
	return db.mariaDB && (db.major > 10 || db.major == 10 && db.minor >= 7)
}

func (db *testDB) open(t testing.TB, cfg dialects.Config) dialects.Source {
	t.Helper()
	if cfg.DSN == "" {
		cfg.DSN = db.dsn
	}
	src, err := dialects.Open(context.Background(), "ma", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

func (db *testDB) read(table string, where query.Expr, cols ...string) *query.Plan {
	return &query.Plan{Action: query.Read, Schema: db.schema, Table: db.n(table), Columns: cols, Where: where}
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

// readRows runs p on src and returns copies of its rows.
func readRows(t testing.TB, src dialects.Source, p *query.Plan) [][]any {
	t.Helper()
	rows, err := src.Read(context.Background(), p)
	return collect(t, rows, err)
}

// readAll runs a read to its end and returns its first error.
func readAll(ctx context.Context, src dialects.Source, p *query.Plan) error {
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

func wantNumber(t testing.TB, err error, number uint16) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != number {
		t.Errorf("errors.As MySQLError %d: %v", number, err)
	}
}

func cond(col string, op query.Op, args ...any) *query.Cond {
	return &query.Cond{Column: col, Op: op, Args: args}
}

func TestMariaDB(t *testing.T) {
	db := newTestDB(t)
	setupTables(t, db)
	src := db.open(t, dialects.Config{MaxConns: 4})
	if src.Dialect().Name() != "ma" || !slices.Contains(dialects.Types(), "ma") {
		t.Fatal("ma is not registered")
	}
	if err := src.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Run("Tables", func(t *testing.T) { testTables(t, db, src) })
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, db, src) })
	t.Run("WriteRoundTrip", func(t *testing.T) { testWriteRoundTrip(t, db, src) })
	t.Run("Operators", func(t *testing.T) { testOperators(t, db, src) })
	t.Run("OrderPaging", func(t *testing.T) { testOrderPaging(t, db, src) })
	t.Run("Insert", func(t *testing.T) { testInsert(t, db, src, "items") })
	t.Run("InsertReadBack", func(t *testing.T) {
		// The MySQL path, forced on whatever server this is.
		my := db.open(t, dialects.Config{})
		if err := ma.ForceMySQLInserts(context.Background(), my); err != nil {
			t.Fatal(err)
		}
		if d, ok := my.Dialect().(ma.Dialect); !ok || !d.NoReturning {
			t.Fatalf("Dialect() = %#v, want NoReturning", my.Dialect())
		}
		testInsert(t, db, my, "items2")
		testReadBackKeys(t, db, my)
	})
	t.Run("UpdateDelete", func(t *testing.T) { testUpdateDelete(t, db, src) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, db, src) })
}

func setupTables(t *testing.T, db *testDB) {
	uuidCol := ""
	if db.hasUUID() {
		uuidCol = "u uuid DEFAULT uuid(),"
	}
	for _, text := range []string{
		`CREATE TABLE {every} (
			id   bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
			ti   tinyint,
			bo   boolean,
			si   smallint,
			mi   mediumint,
			i    int NOT NULL DEFAULT 7,
			bi   bigint,
			ubi  bigint unsigned,
			ui   int unsigned,
			dc   decimal(30,12),
			dc2  decimal(10,2),
			f    float,
			dbl  double,
			c    char(3),
			vc   varchar(20),
			tx   text,
			en   enum('happy','sad'),
			st   set('a','b'),
			j    json,
			bn   binary(3),
			vb   varbinary(10),
			bl   blob,
			` + uuidCol + `
			d    date DEFAULT '2024-01-01',
			dt   datetime(6),
			ts   timestamp(6) NULL DEFAULT CURRENT_TIMESTAMP(6),
			tm   time(6),
			y    year,
			bt   bit(8),
			g    bigint AS (i * 2) VIRTUAL,
			geo  point
		) ENGINE=InnoDB`,
		"CREATE TABLE {pair} (a int, b int, c varchar(10) NOT NULL, PRIMARY KEY (b, a))",
		"CREATE VIEW {every_view} AS SELECT id, tx FROM {every}",
		"CREATE VIEW {slow} AS SELECT SLEEP(3) AS x",
		`CREATE TABLE {people} (id int PRIMARY KEY, name varchar(20) NOT NULL, age int, score double, active bool,
			email varchar(40), ` + "`order`" + ` int, ` + "`Mixed Case`" + ` varchar(5), ` + "`we``ird`" + ` varchar(5)
		) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
		`INSERT INTO {people} VALUES
			(1, 'Ann', 30, 9.5, true, 'ann@example.com', 3, 'x', 'p'),
			(2, 'bob', 25, 7.0, false, NULL, 1, 'y', 'q'),
			(3, 'Cy_d', 40, 8.25, NULL, 'cy@EXAMPLE.com', 2, 'z', NULL),
			(4, 'Dee%', NULL, NULL, true, 'dee@other.org', 5, NULL, NULL),
			(5, 'eve', 25, 6.5, false, 'eve@example.com', 4, 'x', NULL),
			(6, 'a\\b', 20, 1, false, 'back@slash.org', 6, NULL, NULL),
			(7, 'ÉMILE', 50, 2, true, 'émile@example.com', 7, NULL, NULL),
			(8, 'emile', 51, 3, true, 'emile@example.com', 8, NULL, NULL),
			(9, 'ab', 52, 4, true, NULL, 9, NULL, NULL)`,
		`CREATE TABLE {items} (id bigint AUTO_INCREMENT PRIMARY KEY, name varchar(40) NOT NULL UNIQUE,
			qty int NOT NULL DEFAULT 1 CHECK (qty >= 0), note text) ENGINE=InnoDB`,
		`CREATE TABLE {items2} (id bigint AUTO_INCREMENT PRIMARY KEY, name varchar(40) NOT NULL UNIQUE,
			qty int NOT NULL DEFAULT 1 CHECK (qty >= 0), note text) ENGINE=InnoDB`,
		`CREATE TABLE {orders} (id int PRIMARY KEY, item_id bigint, FOREIGN KEY (item_id) REFERENCES {items} (id)) ENGINE=InnoDB`,
	} {
		db.exec(t, text)
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
		if !strings.HasPrefix(tb.Name, db.prefix) {
			continue // another test's
		}
		name := strings.TrimPrefix(tb.Name, db.prefix)
		names = append(names, name)
		byName[name] = tb
		if tb.Schema != db.schema {
			t.Errorf("%s: schema %q", tb.Name, tb.Schema)
		}
	}
	wantNames := []string{"every", "every_view", "items", "items2", "orders", "pair", "people", "slow"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("tables %v, want %v", names, wantNames)
	}

	type col = dialects.Column
	want := []col{
		{Name: "id", DBType: "bigint(20)", Kind: dialects.KindInt, PrimaryKey: true, HasDefault: true},
		{Name: "ti", DBType: "tinyint(4)", Kind: dialects.KindInt, Nullable: true},
		{Name: "bo", DBType: "tinyint(1)", Kind: dialects.KindBool, Nullable: true},
		{Name: "si", DBType: "smallint(6)", Kind: dialects.KindInt, Nullable: true},
		{Name: "mi", DBType: "mediumint(9)", Kind: dialects.KindInt, Nullable: true},
		{Name: "i", DBType: "int(11)", Kind: dialects.KindInt, HasDefault: true, Default: "7"},
		{Name: "bi", DBType: "bigint(20)", Kind: dialects.KindInt, Nullable: true},
		{Name: "ubi", DBType: "bigint(20) unsigned", Kind: dialects.KindDecimal, Nullable: true},
		{Name: "ui", DBType: "int(10) unsigned", Kind: dialects.KindInt, Nullable: true},
		{Name: "dc", DBType: "decimal(30,12)", Kind: dialects.KindDecimal, Nullable: true},
		{Name: "dc2", DBType: "decimal(10,2)", Kind: dialects.KindDecimal, Nullable: true},
		{Name: "f", DBType: "float", Kind: dialects.KindFloat, Nullable: true},
		{Name: "dbl", DBType: "double", Kind: dialects.KindFloat, Nullable: true},
		{Name: "c", DBType: "char(3)", Kind: dialects.KindString, Nullable: true},
		{Name: "vc", DBType: "varchar(20)", Kind: dialects.KindString, Nullable: true},
		{Name: "tx", DBType: "text", Kind: dialects.KindString, Nullable: true},
		{Name: "en", DBType: "enum('happy','sad')", Kind: dialects.KindString, Nullable: true},
		{Name: "st", DBType: "set('a','b')", Kind: dialects.KindString, Nullable: true},
		{Name: "j", DBType: "json", Kind: dialects.KindJSON, Nullable: true},
		{Name: "bn", DBType: "binary(3)", Kind: dialects.KindBytes, Nullable: true},
		{Name: "vb", DBType: "varbinary(10)", Kind: dialects.KindBytes, Nullable: true},
		{Name: "bl", DBType: "blob", Kind: dialects.KindBytes, Nullable: true},
	}
	if db.hasUUID() {
		want = append(want, col{Name: "u", DBType: "uuid", Kind: dialects.KindUUID, Nullable: true, HasDefault: true, Default: "uuid()"})
	}
	want = append(want,
		col{Name: "d", DBType: "date", Kind: dialects.KindDate, Nullable: true, HasDefault: true, Default: "'2024-01-01'"},
		col{Name: "dt", DBType: "datetime(6)", Kind: dialects.KindTimestamp, Nullable: true},
		col{Name: "ts", DBType: "timestamp(6)", Kind: dialects.KindTimestampTZ, Nullable: true, HasDefault: true, Default: "current_timestamp(6)"},
		col{Name: "tm", DBType: "time(6)", Kind: dialects.KindTime, Nullable: true},
		col{Name: "y", DBType: "year(4)", Kind: dialects.KindInt, Nullable: true},
		col{Name: "bt", DBType: "bit(8)", Kind: dialects.KindInt, Nullable: true},
		col{Name: "g", DBType: "bigint(20)", Kind: dialects.KindInt, Nullable: true, HasDefault: true, Default: "`i` * 2"},
		col{Name: "geo", DBType: "point", Kind: dialects.KindBytes, Nullable: true},
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
		if !db.mariaDB {
			// MySQL spells types and defaults its own way; the kinds and
			// flags are what must agree.
			g.DBType, w.DBType, g.Default, w.Default = "", "", "", ""
		}
		if g != w {
			t.Errorf("every column %d:\n got %+v\nwant %+v", i, g, w)
		}
	}

	pair := byName["pair"].Columns
	if len(pair) != 3 || !pair[0].PrimaryKey || !pair[1].PrimaryKey || pair[2].PrimaryKey || pair[2].Nullable {
		t.Errorf("pair: %+v", pair)
	}
	view := byName["every_view"].Columns
	if len(view) != 2 || view[0].Name != "id" || view[0].Kind != dialects.KindInt || view[0].PrimaryKey {
		t.Errorf("every_view: %+v", view)
	}
	people := byName["people"].Columns
	if len(people) != 9 || people[7].Name != "Mixed Case" || people[8].Name != "we`ird" {
		t.Errorf("people: %+v", people)
	}
}

// everyCols are the columns of every, in order.
func everyCols(db *testDB) []string {
	cols := []string{"id", "ti", "bo", "si", "mi", "i", "bi", "ubi", "ui", "dc", "dc2", "f", "dbl", "c", "vc", "tx",
		"en", "st", "j", "bn", "vb", "bl"}
	if db.hasUUID() {
		cols = append(cols, "u")
	}
	return append(cols, "d", "dt", "ts", "tm", "y", "bt", "g", "geo")
}

const funnyText = `it's "quoted" \ ünïcødé ✓ 🎉 日本語`

func testRoundTrip(t *testing.T, db *testDB, src dialects.Source) {
	uuidCol, uuidVal := "", ""
	if db.hasUUID() {
		uuidCol, uuidVal = "u, ", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', "
	}
	db.exec(t, "TRUNCATE {every}")
	db.exec(t, `INSERT INTO {every} (ti, bo, si, mi, i, bi, ubi, ui, dc, dc2, f, dbl, c, vc, tx, en, st, j, bn, vb, bl, `+uuidCol+
		`d, dt, ts, tm, y, bt, geo) VALUES (
		-128, 1, -32768, -8388608, 2147483647, -9223372036854775808, 18446744073709551615, 4294967295,
		'123456789012345678.123456789012', -0.5, 1.1, 0.1, 'ab', '', ?, 'happy', 'a,b',
		?, X'00FF10', X'', X'DEADBEEF', `+uuidVal+
		`'2024-02-29', '2024-01-02 03:04:05.123456', '2024-01-02 01:04:05.5', '-838:59:59', 2155, b'10100101',
		ST_GeomFromText('POINT(1 2)'))`, funnyText, `{"big": 12345678901234567890123, "x": [1, 2.50]}`)
	db.exec(t, `INSERT INTO {every} (ts, d) VALUES (NULL, NULL)`)
	db.exec(t, `INSERT INTO {every} (ti, bo, bi, ubi, dbl, f, dt, ts, tm, y, bt, d) VALUES
		(127, 0, 9223372036854775807, 0, 1.7976931348623157e308, -3.4e38, '1000-01-01 00:00:00', '1970-01-01 00:00:01',
		'00:00:00', 1901, b'0', '9999-12-31')`)
	db.exec(t, `INSERT INTO {every} (bo, ts) VALUES (5, NULL)`)

	cols := everyCols(db)
	p := db.read("every", nil, cols...)
	p.Order = []query.Order{{Column: "id"}}
	rows, err := src.Read(context.Background(), p)
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
			"id": int64(1), "ti": int64(-128), "bo": true, "si": int64(-32768), "mi": int64(-8388608), "i": int64(2147483647),
			"bi": int64(-9223372036854775808), "ubi": json.Number("18446744073709551615"), "ui": int64(4294967295),
			"dc": json.Number("123456789012345678.123456789012"), "dc2": json.Number("-0.50"), "f": 1.1, "dbl": 0.1,
			"c": "ab", "vc": "", "tx": funnyText, "en": "happy", "st": "a,b",
			"j":  json.RawMessage(`{"big": 12345678901234567890123, "x": [1, 2.50]}`),
			"bn": []byte{0, 0xff, 0x10}, "vb": []byte{}, "bl": []byte{0xde, 0xad, 0xbe, 0xef},
			"u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "d": "2024-02-29", "dt": "2024-01-02T03:04:05.123456",
			"ts": time.Date(2024, 1, 2, 1, 4, 5, 500000000, time.UTC), "tm": "-838:59:59", "y": int64(2155),
			"bt": int64(0xa5), "g": int64(4294967294),
		},
		nulls(map[string]any{"id": int64(2), "i": int64(7), "g": int64(14)}),
		nulls(map[string]any{"id": int64(3), "i": int64(7), "g": int64(14), "ti": int64(127), "bo": false,
			"bi": int64(9223372036854775807), "ubi": json.Number("0"), "dbl": 1.7976931348623157e308, "f": -3.4e38,
			"dt": "1000-01-01T00:00:00", "ts": time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC), "tm": "00:00:00",
			"y": int64(1901), "bt": int64(0), "d": "9999-12-31"}),
		nulls(map[string]any{"id": int64(4), "i": int64(7), "g": int64(14), "bo": true, "d": "2024-01-01"}),
	}
	if !db.mariaDB {
		// MySQL normalizes JSON documents.
		want[0]["j"] = json.RawMessage(`{"x": [1, 2.50], "big": 1.2345678901234568e22}`)
	}
	for r := range want {
		for i, c := range cols {
			w, g := want[r][c], got[r][i]
			if c == "u" && r > 0 {
				// uuid() filled it.
				if u, ok := g.(string); !ok || len(u) != 36 || u != strings.ToLower(u) {
					t.Errorf("row %d u: %#v", r+1, g)
				}
				continue
			}
			if c == "geo" && r == 0 {
				// SRID (4 bytes) and the WKB of POINT(1 2) (21 bytes).
				if b, ok := g.([]byte); !ok || len(b) != 25 {
					t.Errorf("row 1 geo: %#v", g)
				}
				continue
			}
			if !reflect.DeepEqual(w, g) {
				t.Errorf("row %d %s: got %#v (%T), want %#v (%T)", r+1, c, g, g, w, w)
			}
		}
	}
	kinds := map[string]dialects.Kind{"bo": dialects.KindBool, "ubi": dialects.KindDecimal, "j": dialects.KindJSON,
		"ts": dialects.KindTimestampTZ, "dt": dialects.KindTimestamp, "bn": dialects.KindBytes, "u": dialects.KindUUID}
	for i, c := range rowCols {
		if c.Name != cols[i] {
			t.Errorf("result column %d is %q, want %q", i, c.Name, cols[i])
		}
		if k, ok := kinds[c.Name]; ok && c.Kind != k {
			t.Errorf("result column %s: kind %s, want %s", c.Name, c.Kind, k)
		}
	}
	if rowCols[2].DBType != "tinyint(1)" {
		t.Errorf("result column bo: DBType %q", rowCols[2].DBType)
	}
}

// testWriteRoundTrip writes values as the engine binds them and reads them
// back, filtering on each.
func testWriteRoundTrip(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	db.exec(t, "TRUNCATE {every}")
	cols := []string{"bo", "bi", "ubi", "dc", "f", "dbl", "vc", "tx", "j", "vb", "d", "dt", "ts", "tm"}
	vals := []any{true, int64(-9223372036854775808), "18446744073709551615", "-123456789012345678.123456789012", 1.1,
		0.1, "", funnyText, json.RawMessage(`{"a": [1, 2.50], "n": 9007199254740993}`), []byte{}, "2024-02-29",
		"2024-02-29T23:59:59.123456+02:00", "2024-02-29T23:59:59.123456+02:00", "13:04:05.5"}
	if db.hasUUID() {
		cols = append(cols, "u")
		vals = append(vals, "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF")
	}
	res, err := src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: db.n("every"),
		Columns: cols, Rows: [][]any{vals, make([]any, len(vals))}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 2 || len(res.Returned) != 2 {
		t.Fatalf("affected %d, returned %d", res.RowsAffected, len(res.Returned))
	}
	want := map[string]any{"bo": true, "bi": int64(-9223372036854775808), "ubi": json.Number("18446744073709551615"),
		"dc": json.Number("-123456789012345678.123456789012"), "f": 1.1, "dbl": 0.1, "vc": "", "tx": funnyText,
		"j": json.RawMessage(`{"a": [1, 2.50], "n": 9007199254740993}`), "vb": []byte{}, "d": "2024-02-29",
		"dt": "2024-02-29T23:59:59.123456", "ts": time.Date(2024, 2, 29, 21, 59, 59, 123456000, time.UTC),
		"tm": "13:04:05.5", "u": "ffffffff-ffff-4fff-bfff-ffffffffffff"}
	check := func(what string, rcols []dialects.Column, row []any) {
		t.Helper()
		for i, c := range rcols {
			w, ok := want[c.Name]
			if !ok {
				continue
			}
			if !reflect.DeepEqual(row[i], w) {
				t.Errorf("%s %s: got %#v (%T), want %#v", what, c.Name, row[i], row[i], w)
			}
		}
	}
	check("Returned", res.Columns, res.Returned[0])
	got := readRows(t, src, db.read("every", nil, cols...))
	var rcols []dialects.Column
	for _, c := range cols {
		rcols = append(rcols, dialects.Column{Name: c})
	}
	check("Read", rcols, got[0])
	for _, c := range got[1] {
		if c != nil {
			t.Errorf("row of NULLs read %v", got[1])
			break
		}
	}

	// Every value finds its row again; zones are converted for timestamp
	// (an instant) and dropped for datetime (a wall-clock time).
	filters := []query.Expr{
		cond("bi", query.Eq, int64(-9223372036854775808)),
		cond("ubi", query.Eq, "18446744073709551615"),
		cond("dc", query.Eq, "-123456789012345678.123456789012"),
		cond("dc", query.Lt, "-123456789012345678.123456789011"),
		cond("dbl", query.Eq, 0.1),
		cond("vc", query.Eq, ""),
		cond("tx", query.Eq, funnyText),
		cond("bo", query.Eq, true),
		cond("bo", query.IsTrue),
		cond("d", query.Eq, "2024-02-29"),
		cond("dt", query.Eq, "2024-02-29T23:59:59.123456"),
		cond("dt", query.Eq, "2024-02-29T23:59:59.123456-05:00"),
		cond("ts", query.Eq, "2024-02-29T21:59:59.123456Z"),
		cond("ts", query.Eq, "2024-02-29 22:59:59.123456+01:00"),
		cond("ts", query.Between, "2024-02-29T22:00:00+00:30", "2024-03-01T00:00:00+02"),
		query.Not{X: cond("ts", query.Ne, time.Date(2024, 2, 29, 21, 59, 59, 123456000, time.UTC))},
		cond("tm", query.Eq, "13:04:05.5"),
	}
	if db.hasUUID() {
		filters = append(filters, cond("u", query.Eq, "ffffffff-ffff-4fff-bfff-FFFFFFFFFFFF"))
	}
	for _, f := range filters {
		got := readRows(t, src, db.read("every", f, "id"))
		if len(got) != 1 {
			t.Errorf("filter %#v: %d rows, want 1", f, len(got))
		}
	}
	// And the update path adapts values too.
	res, err = src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: db.n("every"),
		Set:   []query.Assign{{Column: "ts", Value: "2000-01-01T01:00:00+01:00"}},
		Where: cond("ts", query.Eq, "2024-02-29T21:59:59.123456+00:00")})
	if err != nil || res.RowsAffected != 1 {
		t.Fatalf("update: %d, %v", res.RowsAffected, err)
	}
	got = readRows(t, src, db.read("every", cond("ts", query.Eq, "2000-01-01 00:00:00"), "ts"))
	if len(got) != 1 || !got[0][0].(time.Time).Equal(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("after update: %v", got)
	}
}

func testOperators(t *testing.T, db *testDB, src dialects.Source) {
	ids := func(where query.Expr) []int64 {
		t.Helper()
		p := db.read("people", where, "id")
		p.Order = []query.Order{{Column: "id"}}
		var out []int64
		for _, r := range readRows(t, src, p) {
			out = append(out, r[0].(int64))
		}
		return out
	}
	tests := []struct {
		name  string
		where query.Expr
		want  []int64
	}{
		{"eq", cond("age", query.Eq, int64(25)), []int64{2, 5}},
		{"ne", cond("age", query.Ne, int64(25)), []int64{1, 3, 6, 7, 8, 9}},
		{"gt", cond("age", query.Gt, int64(30)), []int64{3, 7, 8, 9}},
		{"ge", cond("age", query.Ge, int64(30)), []int64{1, 3, 7, 8, 9}},
		{"lt", cond("score", query.Lt, 7.0), []int64{5, 6, 7, 8, 9}},
		{"le", cond("score", query.Le, 7.0), []int64{2, 5, 6, 7, 8, 9}},
		{"like prefix", cond("name", query.Like, "e%"), []int64{5, 8}},
		{"like is case-sensitive", cond("name", query.Like, "a%"), []int64{6, 9}},
		{"like is accent-sensitive", cond("name", query.Like, "%mile"), []int64{8}},
		{"like underscore wildcard", cond("name", query.Like, "a_"), []int64{9}},
		{"like escaped underscore", cond("name", query.Like, `Cy\_d`), []int64{3}},
		{"like escaped underscore no match", cond("name", query.Like, `C\_`), nil},
		{"like escaped percent", cond("name", query.Like, `%\%`), []int64{4}},
		{"like escaped backslash", cond("name", query.Like, `a\\b`), []int64{6}},
		{"like one character for a multibyte letter", cond("name", query.Like, "_MILE"), []int64{7}},
		{"ilike", cond("name", query.ILike, "A%"), []int64{1, 6, 9}},
		{"ilike email", cond("email", query.ILike, "%@example.com"), []int64{1, 3, 5, 7, 8}},
		{"ilike is accent-sensitive", cond("name", query.ILike, "émile"), []int64{7}},
		{"ilike escaped", cond("name", query.ILike, `cy\_D`), []int64{3}},
		{"in", cond("id", query.In, int64(1), int64(3), int64(99)), []int64{1, 3}},
		{"in strings", cond("name", query.In, "Ann", "eve"), []int64{1, 5}},
		{"nin", cond("id", query.NotIn, int64(1), int64(2), int64(3), int64(4), int64(5), int64(6)), []int64{7, 8, 9}},
		{"in empty", cond("id", query.In), nil},
		{"nin empty", cond("id", query.NotIn), []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"between", cond("age", query.Between, int64(25), int64(30)), []int64{1, 2, 5}},
		{"is null", cond("age", query.IsNull), []int64{4}},
		{"is not null", cond("email", query.IsNotNull), []int64{1, 3, 4, 5, 6, 7, 8}},
		{"is true", cond("active", query.IsTrue), []int64{1, 4, 7, 8, 9}},
		{"is false", cond("active", query.IsFalse), []int64{2, 5, 6}},
		{"and", query.And{cond("age", query.Eq, int64(25)), cond("name", query.Eq, "eve")}, []int64{5}},
		{"or", query.Or{cond("id", query.Eq, int64(1)), cond("age", query.IsNull)}, []int64{1, 4}},
		{"not", query.Not{X: query.Or{cond("active", query.IsTrue), cond("active", query.IsNull)}}, []int64{2, 5, 6}},
		{"nested", query.And{cond("score", query.Gt, 1.5), query.Or{cond("name", query.Like, "%e%"),
			query.And{cond("age", query.Lt, int64(30)), cond("active", query.IsFalse)}}}, []int64{2, 5, 8}},
		{"empty and", query.And{}, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"empty or", query.Or{}, nil},
		{"quoted identifiers", query.And{cond("order", query.Gt, int64(3)), cond("Mixed Case", query.Eq, "x"),
			cond("we`ird", query.IsNull)}, []int64{5}},
		{"value looks like SQL", cond("name", query.Eq, "x' OR '1'='1"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(tt.where); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func testOrderPaging(t *testing.T, db *testDB, src dialects.Source) {
	page := func(order []query.Order, limit, offset int64) []int64 {
		t.Helper()
		p := db.read("people", nil, "id")
		p.Order, p.Limit, p.Offset = order, limit, offset
		var out []int64
		for _, r := range readRows(t, src, p) {
			out = append(out, r[0].(int64))
		}
		return out
	}
	byAgeDescName := []query.Order{{Column: "age", Desc: true}, {Column: "name"}}
	// NULL sorts first ascending and last descending.
	if got, want := page(byAgeDescName, 0, 0), []int64{9, 8, 7, 3, 1, 2, 5, 6, 4}; !slices.Equal(got, want) {
		t.Errorf("age desc, name: %v, want %v", got, want)
	}
	if got, want := page([]query.Order{{Column: "active"}, {Column: "id", Desc: true}}, 0, 0), []int64{3, 6, 5, 2, 9, 8, 7, 4, 1}; !slices.Equal(got, want) {
		t.Errorf("active, id desc: %v, want %v", got, want)
	}
	if got, want := page(byAgeDescName, 3, 3), []int64{3, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("page 2: %v, want %v", got, want)
	}
	if got, want := page(byAgeDescName, 4, 8), []int64{4}; !slices.Equal(got, want) {
		t.Errorf("last page: %v, want %v", got, want)
	}
	if got := page(byAgeDescName, 4, 12); len(got) != 0 {
		t.Errorf("past the end: %v", got)
	}
	if got, want := page([]query.Order{{Column: "id"}}, 0, 7), []int64{8, 9}; !slices.Equal(got, want) {
		t.Errorf("offset without limit: %v, want %v", got, want)
	}
}

func insertPlan(db *testDB, table string, rows ...[]any) *query.Plan {
	return &query.Plan{Action: query.Insert, Schema: db.schema, Table: db.n(table), Columns: []string{"id", "name", "qty"}, Rows: rows}
}

func testInsert(t *testing.T, db *testDB, src dialects.Source, table string) {
	ctx := context.Background()
	def := query.Default{}
	res, err := src.Write(ctx, insertPlan(db, table,
		[]any{def, "a", int64(2)},
		[]any{def, "b", def},
		[]any{nil, "c", "3"},
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
	before := db.count(t, table)
	_, err = src.Write(ctx, insertPlan(db, table, []any{def, "d", int64(1)}, []any{def, "e", int64(1)}, []any{def, "f", int64(-1)}))
	wantKind(t, err, fault.Invalid)
	if n := db.count(t, table); n != before {
		t.Fatalf("failed batch left %d rows, had %d", n, before)
	}

	// Duplicate key: Conflict, driver error kept.
	_, err = src.Write(ctx, insertPlan(db, table, []any{def, "a", int64(1)}))
	wantKind(t, err, fault.Conflict)
	wantNumber(t, err, 1062)

	// A batch over the 65535-value limit is split, in one transaction.
	big := func(prefix string, n int) *query.Plan {
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = []any{def, fmt.Sprintf("%s-%d", prefix, i), int64(i)}
		}
		return insertPlan(db, table, rows...)
	}
	res, err = src.Write(ctx, big("bulk", 40000)) // 80000 values
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 40000 || len(res.Returned) != 40000 || res.Returned[39999][1] != "bulk-39999" {
		t.Fatalf("bulk: affected %d, returned %d", res.RowsAffected, len(res.Returned))
	}
	if first, last := res.Returned[0][0].(int64), res.Returned[39999][0].(int64); last-first != 39999 {
		t.Errorf("bulk ids %d…%d", first, last)
	}
	before = db.count(t, table)
	p := big("bulk2", 40000)
	p.Rows[39999][1] = "a" // duplicate in the second chunk
	_, err = src.Write(ctx, p)
	wantKind(t, err, fault.Conflict)
	if n := db.count(t, table); n != before {
		t.Fatalf("failed chunked batch left %d rows, had %d", n, before)
	}

	// Rows with every column left to the server.
	res, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: db.n("every"), Rows: [][]any{{}, {}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 2 || len(res.Returned) != 2 || res.Returned[0][5] != int64(7) {
		t.Errorf("default rows: %d %v", res.RowsAffected, res.Returned)
	}
}

// testReadBackKeys covers what only the MySQL path has to work out: given
// and generated keys mixed, composite keys, and tables whose rows cannot be
// keyed.
func testReadBackKeys(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	def := query.Default{}
	res, err := src.Write(ctx, insertPlan(db, "items2",
		[]any{int64(900000), "given", int64(1)},
		[]any{def, "generated", int64(2)},
		[]any{int64(500000), "given2", int64(3)},
		[]any{nil, "generated2", int64(4)},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{int64(900000), "given", int64(1), nil}, {int64(900001), "generated", int64(2), nil},
		{int64(500000), "given2", int64(3), nil}, {int64(900002), "generated2", int64(4), nil}}
	if res.RowsAffected != 4 || !reflect.DeepEqual(res.Returned, want) {
		t.Errorf("mixed keys: %d %v, want %v", res.RowsAffected, res.Returned, want)
	}

	res, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: db.n("pair"),
		Columns: []string{"c", "a", "b"}, Rows: [][]any{{"x", int64(1), int64(2)}, {"y", int64(2), int64(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	want = [][]any{{int64(1), int64(2), "x"}, {int64(2), int64(1), "y"}}
	if !reflect.DeepEqual(res.Returned, want) {
		t.Errorf("composite keys: %v, want %v", res.Returned, want)
	}

	db.exec(t, "CREATE TABLE {nokey} (a int, b varchar(3) DEFAULT 'z')")
	res, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: db.n("nokey"),
		Columns: []string{"a"}, Rows: [][]any{{int64(1)}, {int64(2)}}})
	if err != nil || res.RowsAffected != 2 || res.Returned != nil {
		t.Errorf("no key: %d %v %v", res.RowsAffected, res.Returned, err)
	}
}

func testUpdateDelete(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	db.exec(t, "CREATE TABLE {ud} (id int PRIMARY KEY, grp int, name varchar(10))")
	for i := 1; i <= 30; i++ {
		db.exec(t, "INSERT INTO {ud} VALUES (?, ?, ?)", i, i%3, fmt.Sprintf("n%d", i))
	}
	ud := db.n("ud")
	res, err := src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: ud,
		Set:   []query.Assign{{Column: "name", Value: "changed"}, {Column: "grp", Value: int64(9)}},
		Where: query.And{cond("grp", query.Eq, int64(0)), cond("id", query.Le, int64(15))}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 5 {
		t.Errorf("update RowsAffected %d, want 5", res.RowsAffected)
	}
	// Rows that match but keep their values count too, as in PostgreSQL.
	res, err = src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: ud,
		Set: []query.Assign{{Column: "name", Value: "changed"}}, Where: cond("grp", query.Eq, int64(9))})
	if err != nil || res.RowsAffected != 5 {
		t.Errorf("unchanged update: %d, %v", res.RowsAffected, err)
	}
	res, err = src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: ud,
		Set: []query.Assign{{Column: "name", Value: query.Default{}}}, Where: cond("id", query.Eq, int64(30))})
	if err != nil || res.RowsAffected != 1 {
		t.Errorf("update to DEFAULT: %d, %v", res.RowsAffected, err)
	}
	res, err = src.Write(ctx, &query.Plan{Action: query.Delete, Schema: db.schema, Table: ud, Where: cond("grp", query.Eq, int64(9))})
	if err != nil || res.RowsAffected != 5 {
		t.Fatalf("delete: %d, %v", res.RowsAffected, err)
	}
	res, err = src.Write(ctx, &query.Plan{Action: query.Delete, Schema: db.schema, Table: ud, Where: cond("id", query.Eq, int64(-1))})
	if err != nil || res.RowsAffected != 0 {
		t.Fatalf("delete none: %d, %v", res.RowsAffected, err)
	}
	_, err = src.Write(ctx, &query.Plan{Action: query.Delete, Schema: db.schema, Table: ud})
	wantKind(t, err, fault.Invalid)
	res, err = src.Write(ctx, &query.Plan{Action: query.Delete, Table: ud, All: true}) // schema left to the source
	if err != nil || res.RowsAffected != 25 {
		t.Fatalf("delete all: %d, %v", res.RowsAffected, err)
	}
	_, err = src.Write(ctx, &query.Plan{Action: query.Delete, Schema: "elsewhere", Table: ud, All: true})
	wantKind(t, err, fault.NotFound)
}

func testErrors(t *testing.T, db *testDB, src dialects.Source) {
	ctx := context.Background()
	items := func(where query.Expr) *query.Plan { return db.read("items", where, "id") }
	t.Run("bad value", func(t *testing.T) {
		_, err := src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: db.n("items"),
			Set: []query.Assign{{Column: "qty", Value: "99999999999"}}, All: true})
		wantKind(t, err, fault.Invalid) // out of range
		wantNumber(t, err, 1264)
		_, err = src.Write(ctx, &query.Plan{Action: query.Update, Schema: db.schema, Table: db.n("items"),
			Set: []query.Assign{{Column: "qty", Value: "abc"}}, All: true})
		wantKind(t, err, fault.Invalid)
		_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: db.n("every"),
			Columns: []string{"d"}, Rows: [][]any{{"2024-02-30"}}})
		wantKind(t, err, fault.Invalid)
		_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: db.n("every"),
			Columns: []string{"j"}, Rows: [][]any{{json.RawMessage(`{"a":`)}}})
		wantKind(t, err, fault.Invalid) // not JSON: the check
	})
	t.Run("constraints", func(t *testing.T) {
		_, err := src.Write(ctx, insertPlan(db, "items", []any{query.Default{}, nil, int64(1)}))
		wantKind(t, err, fault.Invalid) // not null
		wantNumber(t, err, 1048)
		_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: db.n("orders"),
			Columns: []string{"id", "item_id"}, Rows: [][]any{{int64(1), int64(999999999)}}})
		wantKind(t, err, fault.Invalid) // foreign key
		wantNumber(t, err, 1452)
		_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Schema: db.schema, Table: db.n("every"),
			Columns: []string{"g"}, Rows: [][]any{{int64(1)}}})
		wantKind(t, err, fault.Invalid) // generated column
	})
	t.Run("missing table", func(t *testing.T) {
		err := readAll(ctx, src, db.read("nope", nil, "id"))
		wantKind(t, err, fault.NotFound)
	})
	t.Run("statement timeout", func(t *testing.T) {
		slow := db.open(t, dialects.Config{StatementTimeout: 300 * time.Millisecond})
		start := time.Now()
		rows, err := slow.Read(ctx, db.read("slow", nil, "x"))
		if err == nil {
			_ = rows.Close()
		}
		wantKind(t, err, fault.Timeout) // reported by Read itself, before any row
		if db.mariaDB {
			wantNumber(t, err, 1969)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
		// The pool is still usable afterwards.
		if err := readAll(ctx, slow, items(nil)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		rows, err := src.Read(cctx, db.read("slow", nil, "x"))
		if err == nil {
			_ = rows.Close()
		}
		wantKind(t, err, fault.Timeout)
		if err := readAll(ctx, src, items(nil)); err != nil {
			t.Fatalf("after a canceled read: %v", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		down := db.open(t, dialects.Config{DSN: "minimal:minimal@tcp(127.0.0.1:1)/minimal?timeout=2s"})
		wantKind(t, down.Ping(ctx), fault.Unavailable)
		_, err := down.Tables(ctx)
		wantKind(t, err, fault.Unavailable)
		wantKind(t, readAll(ctx, down, &query.Plan{Action: query.Read, Table: "t", Columns: []string{"id"}}), fault.Unavailable)
		_, err = down.Write(ctx, &query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a"}, Rows: [][]any{{int64(1)}}})
		wantKind(t, err, fault.Unavailable)
	})
	t.Run("bad password", func(t *testing.T) {
		cfg, _ := mysql.ParseDSN(db.dsn)
		cfg.Passwd = "not-the-password"
		cfg.User = "minimal_no_such_user"
		bad := db.open(t, dialects.Config{DSN: cfg.FormatDSN()})
		err := bad.Ping(ctx)
		wantKind(t, err, fault.Unavailable)
		wantNumber(t, err, 1045)
	})
	t.Run("closed", func(t *testing.T) {
		closed := db.open(t, dialects.Config{})
		if err := closed.Close(); err != nil {
			t.Fatal(err)
		}
		wantKind(t, readAll(ctx, closed, items(nil)), fault.Unavailable)
		wantKind(t, closed.Ping(ctx), fault.Unavailable)
		_, err := closed.Tables(ctx)
		wantKind(t, err, fault.Unavailable)
	})
	t.Run("bad dsn", func(t *testing.T) {
		for _, dsn := range []string{"u:secret@tcp(host:3306", "u:secret@tcp(host:3306)/db?timeout=soon", "u:secret@tcp(host:3306)/"} {
			_, err := ma.Open(ctx, dialects.Config{DSN: dsn})
			wantKind(t, err, fault.Invalid)
			if strings.Contains(fault.As(err).Message, "secret") {
				t.Errorf("message shows the password: %q", fault.As(err).Message)
			}
		}
	})
}
