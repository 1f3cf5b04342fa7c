package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/go-sql-driver/mysql"
)

// The other real dialects: the same items table in MariaDB and ClickHouse,
// read through the gateway and through the plain driver.

const (
	envMADSN = "MINIMAL_TEST_MA_DSN"
	envCHDSN = "MINIMAL_TEST_CH_DSN"
	// benchDB is the MariaDB and the ClickHouse database of the bench
	// table (the MariaDB test user may create databases named minimal_*).
	benchDB = "minimal_bench"
)

// dialectSpec is a database type the bench can compare.
type dialectSpec struct {
	code, env, product string
}

var dialectSpecs = []dialectSpec{
	{"pg", envDSN, "PostgreSQL"},
	{"ma", envMADSN, "MariaDB"},
	{"ch", envCHDSN, "ClickHouse"},
}

// parseDialects reads the -dialects list: codes from dialectSpecs,
// comma-separated, in any order; the result follows dialectSpecs' order.
func parseDialects(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.ContainsFunc(dialectSpecs, func(d dialectSpec) bool { return d.code == f }) {
			return nil, fmt.Errorf("unknown dialect %q in -dialects (known: pg, ma, ch)", f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return slices.IndexFunc(dialectSpecs, func(d dialectSpec) bool { return d.code == a }) -
			slices.IndexFunc(dialectSpecs, func(d dialectSpec) bool { return d.code == b })
	})
	return out, nil
}

// dialectColumns are the columns of the items table, in table order.
var dialectColumns = []string{"id", "name", "price", "qty", "active", "created", "note", "grp"}

// maSelect and chSelect are the SELECTs the direct baseline runs; the
// gateway renders the same ones (with quoted identifiers).
const (
	maSelect = "SELECT id, name, price, qty, active, created, note, grp FROM " + benchDB + "." + benchTable + " ORDER BY id LIMIT ? OFFSET ?"
	chSelect = maSelect
)

// maConfig is the DSN as the bench uses it: times as time.Time in UTC,
// the session in UTC (the gateway sets the same), utf8mb4.
func maConfig(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envMADSN, err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.MultiStatements = false
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
		return nil, err
	}
	return cfg, nil
}

func openMA(dsn string) (*sql.DB, error) {
	cfg, err := maConfig(dsn)
	if err != nil {
		return nil, err
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// setupMA creates database minimal_bench with the items table of rows rows
// (the same values as PostgreSQL's, timestamps to the microsecond), from
// MariaDB's sequence engine. It returns the server version and the
// function that drops the database.
func setupMA(ctx context.Context, dsn string, rows int) (version string, drop func() error, err error) {
	db, err := openMA(dsn)
	if err != nil {
		return "", nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return "", nil, fmt.Errorf("connect to MariaDB (%s): %w", envMADSN, err)
	}
	if i := strings.IndexByte(version, '-'); i > 0 {
		version = version[:i]
	}
	drop = func() error {
		db, err := openMA(dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+benchDB)
		return err
	}
	t := benchDB + "." + benchTable
	for _, s := range []string{
		"DROP DATABASE IF EXISTS " + benchDB,
		"CREATE DATABASE " + benchDB + " CHARACTER SET utf8mb4",
		`CREATE TABLE ` + t + ` (
			id      bigint NOT NULL PRIMARY KEY,
			name    varchar(100) NOT NULL,
			price   decimal(12,2) NULL,
			qty     int NULL,
			active  bool NULL,
			created timestamp(6) NULL DEFAULT NULL,
			note    text NULL,
			grp     int NOT NULL,
			KEY grp_id (grp, id)
		) ENGINE = InnoDB`,
		fmt.Sprintf(`INSERT INTO `+t+` (id, name, price, qty, active, created, note, grp)
SELECT seq,
       CONCAT(ELT(1 + seq %% 10, 'Widget','Gadget','Sprocket','Gizmo','Bracket','Flange','Valve','Hinge','Bolt','Gear'),
              ' ', UPPER(SUBSTR(MD5(seq), 1, 3 + seq %% 6))),
       IF(seq %% 97 = 0, NULL, ((seq * 7919) %% 99999 + 1) / 100),
       IF(seq %% 89 = 0, NULL, (seq * 31) %% 500),
       IF(seq %% 101 = 0, NULL, seq %% 3 <> 0),
       IF(seq %% 53 = 0, NULL, TIMESTAMPADD(MICROSECOND, seq %% 1000000,
              TIMESTAMPADD(SECOND, (seq * 104729) %% 157680000, '2020-01-01 00:00:00'))),
       CASE seq %% 5
           WHEN 0 THEN NULL
           WHEN 1 THEN CONCAT('ships in ', 1 + seq %% 14, ' days, handle with care')
           WHEN 2 THEN CONCAT('customer said "fragile" - ', SUBSTR(MD5(seq), 1, 8))
           WHEN 3 THEN REPEAT(MD5(seq * 3), 1 + seq %% 3)
           ELSE CONCAT('café order #', seq, ' für Zoë')
       END,
       (seq - 1) DIV %d
FROM `+benchDB+`.seq_1_to_%d`, groupSize(rows), rows),
		"ANALYZE TABLE " + t,
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return version, drop, fmt.Errorf("prepare MariaDB data: %w", err)
		}
	}
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t).Scan(&n); err != nil {
		return version, drop, fmt.Errorf("prepare MariaDB data: %w", err)
	}
	if n != int64(rows) {
		return version, drop, fmt.Errorf("prepare MariaDB data: table has %d rows, want %d", n, rows)
	}
	return version, drop, nil
}

func openCH(dsn string) (clickhouse.Conn, error) {
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envCHDSN, err)
	}
	return clickhouse.Open(opts)
}

// setupCH creates database minimal_bench with the items table (MergeTree
// ORDER BY id) of rows rows. ClickHouse 18.16 has neither Bool nor
// DateTime64: active is a UInt8, created a DateTime in UTC (seconds). The
// rows come from numbers(N) by INSERT … SELECT: on 18.16 an INSERT …
// VALUES through the driver hangs.
func setupCH(ctx context.Context, dsn string, rows int) (version string, drop func() error, err error) {
	conn, err := openCH(dsn)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close()
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&version); err != nil {
		return "", nil, fmt.Errorf("connect to ClickHouse (%s): %w", envCHDSN, err)
	}
	drop = func() error {
		conn, err := openCH(dsn)
		if err != nil {
			return err
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return conn.Exec(ctx, "DROP DATABASE IF EXISTS "+benchDB)
	}
	t := benchDB + "." + benchTable
	for _, s := range []string{
		"DROP DATABASE IF EXISTS " + benchDB,
		"CREATE DATABASE " + benchDB,
		`CREATE TABLE ` + t + ` (
			id      Int64,
			name    String,
			price   Nullable(Decimal(12, 2)),
			qty     Nullable(Int32),
			active  Nullable(UInt8),
			created Nullable(DateTime('UTC')),
			note    Nullable(String),
			grp     Int32
		) ENGINE = MergeTree ORDER BY id`,
		fmt.Sprintf(`INSERT INTO `+t+` (id, name, price, qty, active, created, note, grp)
SELECT toInt64(g),
       concat(arrayElement(['Widget','Gadget','Sprocket','Gizmo','Bracket','Flange','Valve','Hinge','Bolt','Gear'], 1 + g %% 10),
              ' ', substring(hex(MD5(toString(g))), 1, 3 + g %% 6)),
       if(g %% 97 = 0, NULL, CAST(toDecimal64((g * 7919) %% 99999 + 1, 2) / 100, 'Decimal(12, 2)')),
       if(g %% 89 = 0, NULL, toInt32((g * 31) %% 500)),
       if(g %% 101 = 0, NULL, toUInt8(g %% 3 != 0)),
       if(g %% 53 = 0, NULL, toDateTime(toUInt32(1577836800 + (g * 104729) %% 157680000), 'UTC')),
       multiIf(g %% 5 = 0, NULL,
               g %% 5 = 1, concat('ships in ', toString(1 + g %% 14), ' days, handle with care'),
               g %% 5 = 2, concat('customer said "fragile" - ', lower(substring(hex(MD5(toString(g))), 1, 8))),
               g %% 5 = 3, lower(hex(MD5(toString(g * 3)))),
               concat('café order #', toString(g), ' für Zoë')),
       toInt32(intDiv(g - 1, %d))
FROM (SELECT number + 1 AS g FROM numbers(%d))`, groupSize(rows), rows),
	} {
		if err := conn.Exec(ctx, s); err != nil {
			return version, drop, fmt.Errorf("prepare ClickHouse data: %w", err)
		}
	}
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+t).Scan(&n); err != nil {
		return version, drop, fmt.Errorf("prepare ClickHouse data: %w", err)
	}
	if n != uint64(rows) {
		return version, drop, fmt.Errorf("prepare ClickHouse data: table has %d rows, want %d", n, rows)
	}
	return version, drop, nil
}
