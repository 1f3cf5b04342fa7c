package ma

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func init() { dialects.Register("ma", Open) }

const (
	// defaultDialTimeout bounds connecting when the DSN sets no timeout;
	// without it an unreachable host hangs for the OS's TCP timeout.
	defaultDialTimeout = 10 * time.Second
	// driverDefaultPacket is the driver's max_allowed_packet when the DSN
	// names none.
	driverDefaultPacket = 64 << 20
)

// Source is a database/sql pool over go-sql-driver/mysql, limited to one
// database (the schema). Every connection is set up by Source's connector:
// time_zone '+00:00' (so TIMESTAMP values are read as UTC), strict sql_mode
// and the statement timeout; statements are prepared once per connection
// and kept (see stmtCache).
type Source struct {
	db      *sql.DB
	schema  string
	dsnDB   string // the DSN's database: each connection's default one
	timeout time.Duration
	closed  atomic.Bool
	server  atomic.Pointer[serverInfo]
	stmts   *stmtCache

	metaMu sync.RWMutex
	meta   map[string]*tableMeta // by table name
}

// serverInfo is what the first connection learned about the server.
type serverInfo struct {
	version string
	mariaDB bool
	// returning is true on MariaDB 10.5 and later: INSERT … RETURNING.
	returning bool
	// autoincStep is @@auto_increment_increment: the distance between the
	// ids one multi-row insert generates.
	autoincStep int64
}

// tableMeta is what introspection found about one table, used to decode
// results (kinds the protocol cannot tell) and to read inserted rows back.
type tableMeta struct {
	cols    []dialects.Column
	kinds   map[string]dialects.Kind
	autoinc string   // the AUTO_INCREMENT column, if any
	pk      []string // primary key columns in key order
	// hasTimestamps is set when a column is a DATETIME or TIMESTAMP, whose
	// bound values may need adapting (see adapt).
	hasTimestamps bool
}

// Open creates the pool for cfg. It does not connect: the first statement
// (or Ping) does, so a database that is down at start-up is reported as
// Unavailable when used, not as a failed registration. The DSN is the
// driver's, user:pass@tcp(host:3306)/db?param=value, or a mysql:// URL
// (see driverDSN). The schema is a
// database name; empty means the DSN's database.
func Open(_ context.Context, cfg dialects.Config) (dialects.Source, error) {
	mc, err := parseDSN(cfg.DSN) // the message shown to callers names nothing of the DSN
	if err != nil {
		return nil, err
	}
	schema := cfg.Schema
	if schema == "" {
		schema = mc.DBName
	}
	if schema == "" {
		return nil, fault.New(fault.Invalid, "no database: name it in the connection string (…/dbname) or as the schema")
	}
	if err := checkIdent(schema); err != nil {
		return nil, err
	}
	// What the decoders and the renderer rely on, whatever the DSN says.
	mc.ParseTime = false         // dates come as text and are decoded here, exactly
	mc.Loc = time.UTC            // time.Time arguments are sent in UTC, the session's zone
	mc.ClientFoundRows = true    // UPDATE counts matched rows, as PostgreSQL does
	mc.InterpolateParams = false // values travel as bound parameters, never in SQL text
	mc.MultiStatements = false
	// No file of the gateway's host ever goes to a server: a LOAD DATA
	// LOCAL request is answered with nothing (no file or reader is
	// registered with the driver either).
	mc.AllowAllFiles = false
	if mc.Timeout == 0 {
		mc.Timeout = defaultDialTimeout
	}
	mc.Logger = driverLogger{}
	if mc.MaxAllowedPacket == driverDefaultPacket {
		mc.MaxAllowedPacket = 0 // ask the server, so large values fail cleanly
	}
	// Go strings are UTF-8 and LIKE binds its pattern as utf8mb4.
	collation := ""
	if strings.HasPrefix(mc.Collation, "utf8mb4_") {
		collation = mc.Collation
	}
	if err := mc.Apply(mysql.Charset("utf8mb4", collation)); err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "invalid MySQL connection string")
	}
	inner, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "invalid MySQL connection string")
	}
	s := &Source{schema: schema, dsnDB: mc.DBName, timeout: max(cfg.StatementTimeout, 0), meta: map[string]*tableMeta{}}
	s.db = sql.OpenDB(&connector{inner: inner, src: s})
	s.db.SetMaxOpenConns(cfg.PoolSize())
	s.db.SetMaxIdleConns(cfg.PoolSize())
	s.db.SetConnMaxIdleTime(5 * time.Minute)
	s.stmts = newStmtCache(s.db)
	return s, nil
}

// driverLogger sends the driver's own log lines (a connection found dead,
// a packet cut short) to slog at debug level instead of stderr: each
// failure they describe also comes back as an error, mapped by mapErr.
type driverLogger struct{}

// Print logs one driver line.
func (driverLogger) Print(v ...any) { slog.Debug("mysql driver", "msg", fmt.Sprint(v...)) }

// connector wraps the driver's connector to set up every new connection.
type connector struct {
	inner driver.Connector
	src   *Source
}

// Connect opens a connection and sets up its session; a connection whose
// setup fails is closed and the error returned, so none is half set up.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.src.setup(ctx, conn); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// Driver returns the MySQL driver.
func (c *connector) Driver() driver.Driver { return c.inner.Driver() }

// setup learns the server's version on the first connection and sets the
// session of every one.
func (s *Source) setup(ctx context.Context, conn driver.Conn) error {
	info := s.server.Load()
	if info == nil {
		q, ok := conn.(driver.QueryerContext)
		if !ok {
			return errors.New("ma: driver connection cannot query")
		}
		rows, err := q.QueryContext(ctx, "SELECT VERSION(), @@SESSION.auto_increment_increment", nil)
		if err != nil {
			return err
		}
		dest := make([]driver.Value, 2)
		err = rows.Next(dest)
		_ = rows.Close()
		if err != nil {
			return err
		}
		info = parseServer(valueString(dest[0]), valueString(dest[1]))
		s.server.CompareAndSwap(nil, info)
		info = s.server.Load()
	}
	e, ok := conn.(driver.ExecerContext)
	if !ok {
		return errors.New("ma: driver connection cannot execute")
	}
	_, err := e.ExecContext(ctx, sessionSQL(info, s.timeout), nil)
	return err
}

func valueString(v driver.Value) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	}
	return ""
}

// parseServer reads VERSION(): "10.11.6-MariaDB-0+deb12u1", "8.0.36",
// "5.5.5-10.4.32-MariaDB" (the old replication prefix some proxies add).
func parseServer(version, step string) *serverInfo {
	info := &serverInfo{version: version, autoincStep: 1}
	if n, err := strconv.ParseInt(step, 10, 64); err == nil && n > 0 {
		info.autoincStep = n
	}
	info.mariaDB = strings.Contains(strings.ToLower(version), "mariadb")
	var major, minor int
	if parts := strings.SplitN(strings.TrimPrefix(version, "5.5.5-"), ".", 3); len(parts) >= 2 {
		major, minor = leadingInt(parts[0]), leadingInt(parts[1])
	}
	info.returning = info.mariaDB && (major > 10 || major == 10 && minor >= 5)
	return info
}

// leadingInt reads the digits s starts with ("5-MariaDB" is 5).
func leadingInt(s string) int {
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// sessionSQL is the statement that sets up a connection: UTC time zone,
// strict mode (an out-of-range or malformed value is an error, not a
// warning and a clamped value), and the statement timeout where the server
// has one: MariaDB's max_statement_time (seconds, every statement) or
// MySQL's max_execution_time (milliseconds, SELECT only).
func sessionSQL(info *serverInfo, timeout time.Duration) string {
	var b strings.Builder
	b.WriteString("SET SESSION time_zone = '+00:00', sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_ALL_TABLES')")
	if timeout > 0 {
		if info.mariaDB {
			b.WriteString(", max_statement_time = ")
			b.WriteString(strconv.FormatFloat(max(timeout.Seconds(), 0.000001), 'f', 6, 64))
		} else {
			b.WriteString(", max_execution_time = ")
			b.WriteString(strconv.FormatInt(max(timeout.Milliseconds(), 1), 10))
		}
	}
	return b.String()
}

// serverInfo returns what the first connection learned, connecting if no
// connection was made yet.
func (s *Source) serverInfo(ctx context.Context) (*serverInfo, error) {
	if info := s.server.Load(); info != nil {
		return info, nil
	}
	if err := s.db.PingContext(ctx); err != nil {
		return nil, err
	}
	if info := s.server.Load(); info != nil {
		return info, nil
	}
	return nil, fault.New(fault.Internal, "server version unknown")
}

// Dialect returns the renderer for this server: the MariaDB form (INSERT …
// RETURNING) until a connection has shown the server to be MySQL or a
// MariaDB before 10.5. Source itself always renders with the right form.
func (s *Source) Dialect() dialects.Dialect {
	if info := s.server.Load(); info != nil && !info.returning {
		return Dialect{NoReturning: true}
	}
	return Dialect{}
}

// Ping checks that a connection can be had and answers.
func (s *Source) Ping(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	return s.err(ctx, s.db.PingContext(ctx))
}

// Close closes the pool; later calls fail as Unavailable.
func (s *Source) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		s.stmts.close()
		return s.db.Close()
	}
	return nil
}

func (s *Source) err(ctx context.Context, err error) error {
	return mapErr(ctx, err, s.closed.Load())
}

// bound limits an operation to the statement timeout plus
// dialects.TimeoutGrace (dialects.Bound): the server's own limit answers
// first, with its error; the deadline bounds what the server does not
// (MySQL writes, a server that stopped answering).
func (s *Source) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return dialects.Bound(ctx, s.timeout)
}

// plan binds a plan to this source's database: an empty schema means ours,
// any other is not found here.
func (s *Source) plan(p *query.Plan) (*query.Plan, error) {
	if p == nil {
		return nil, fault.New(fault.Invalid, "no plan")
	}
	if s.closed.Load() {
		return nil, fault.New(fault.Unavailable, "database source is closed")
	}
	if p.Schema == s.schema {
		return p, nil
	}
	if p.Schema != "" {
		return nil, fault.New(fault.NotFound, "table %q not found", p.Table)
	}
	cp := *p
	cp.Schema = s.schema
	return &cp, nil
}

// tablesSQL lists the columns of every table and view of a database, with
// whether each belongs to the primary key. A MySQL UNIQUE NOT NULL key
// shows as COLUMN_KEY 'PRI' when the table has no primary key, so the key
// comes from STATISTICS instead.
const tablesSQL = `
SELECT c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE, c.COLUMN_TYPE, c.IS_NULLABLE, c.COLUMN_DEFAULT, c.EXTRA,
       c.GENERATION_EXPRESSION, pk.SEQ_IN_INDEX
FROM information_schema.COLUMNS c
JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
LEFT JOIN information_schema.STATISTICS pk ON pk.TABLE_SCHEMA = c.TABLE_SCHEMA AND pk.TABLE_NAME = c.TABLE_NAME
     AND pk.COLUMN_NAME = c.COLUMN_NAME AND pk.INDEX_NAME = 'PRIMARY'
WHERE c.TABLE_SCHEMA = ? AND t.TABLE_TYPE IN ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')`

// jsonChecksSQL finds MariaDB's JSON columns: JSON is an alias of LONGTEXT
// there, recognizable only by the CHECK (json_valid(`col`)) it adds.
const jsonChecksSQL = `
SELECT TABLE_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?`

const erUnknownTable = 1109 // information_schema.CHECK_CONSTRAINTS before MariaDB 10.2.22

// Tables introspects the database from information_schema.
func (s *Source) Tables(ctx context.Context) ([]dialects.Table, error) {
	if s.closed.Load() {
		return nil, fault.New(fault.Unavailable, "database source is closed")
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	tables, metas, err := s.introspect(ctx, "")
	if err == nil {
		err = s.foreignKeys(ctx, tables)
	}
	if err != nil {
		return nil, s.err(ctx, err)
	}
	s.metaMu.Lock()
	s.meta = metas
	s.metaMu.Unlock()
	return tables, nil
}

// introspect reads one table's columns, or every table's when table is "".
func (s *Source) introspect(ctx context.Context, table string) ([]dialects.Table, map[string]*tableMeta, error) {
	info, err := s.serverInfo(ctx)
	if err != nil {
		return nil, nil, err
	}
	text, args := tablesSQL, []any{s.schema}
	if table != "" {
		text += " AND c.TABLE_NAME = ?"
		args = append(args, table)
	}
	// Byte order, like PostgreSQL's C collation, and so that two names
	// differing only in case are never interleaved.
	text += "\nORDER BY CAST(c.TABLE_NAME AS BINARY), c.ORDINAL_POSITION"
	jsonCols := map[[2]string]bool{}
	if info.mariaDB {
		if err := s.jsonColumns(ctx, jsonCols); err != nil {
			return nil, nil, err
		}
	}
	rs, release, err := s.rawQuery(ctx, text, args)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	defer rs.Close()
	var out []dialects.Table
	metas := map[string]*tableMeta{}
	var pkSeq [][]int // per table: key position of each column, 0 if none
	for rs.Next() {
		var (
			tname, dataType, extra string
			nullable               string
			def, genExpr           sql.NullString
			seq                    sql.NullInt64
			col                    dialects.Column
		)
		if err := rs.Scan(&tname, &col.Name, &dataType, &col.DBType, &nullable, &def, &extra, &genExpr, &seq); err != nil {
			return nil, nil, err
		}
		col.Nullable = nullable == "YES"
		col.Kind = kindOf(strings.ToLower(dataType), strings.ToLower(col.DBType))
		if jsonCols[[2]string{tname, col.Name}] {
			col.Kind, col.DBType = dialects.KindJSON, "json"
		}
		col.PrimaryKey = seq.Valid
		lextra := strings.ToLower(extra)
		autoinc := strings.Contains(lextra, "auto_increment")
		generated := strings.Contains(lextra, "virtual generated") || strings.Contains(lextra, "stored generated") ||
			strings.Contains(lextra, "persistent generated")
		switch {
		case generated && genExpr.Valid:
			col.HasDefault, col.Default = true, genExpr.String
		case def.Valid && def.String != "NULL":
			// MariaDB reports a column without default as NULL and one
			// whose default is NULL as the text NULL (literals are quoted).
			col.HasDefault, col.Default = true, def.String
		}
		if autoinc || generated {
			col.HasDefault = true
		}
		if n := len(out); n == 0 || out[n-1].Name != tname {
			out = append(out, dialects.Table{Schema: s.schema, Name: tname})
			metas[tname] = &tableMeta{kinds: map[string]dialects.Kind{}}
			pkSeq = append(pkSeq, nil)
		}
		t := &out[len(out)-1]
		t.Columns = append(t.Columns, col)
		m := metas[tname]
		m.kinds[col.Name] = col.Kind
		if col.Kind == dialects.KindTimestamp || col.Kind == dialects.KindTimestampTZ {
			m.hasTimestamps = true
		}
		if autoinc {
			m.autoinc = col.Name
		}
		pkSeq[len(pkSeq)-1] = append(pkSeq[len(pkSeq)-1], int(seq.Int64))
	}
	if err := rs.Err(); err != nil {
		return nil, nil, err
	}
	for i := range out {
		m := metas[out[i].Name]
		m.cols = out[i].Columns
		keys := make([]string, len(m.cols)+1)
		for j, seq := range pkSeq[i] {
			if seq > 0 && seq < len(keys) {
				keys[seq] = m.cols[j].Name
			}
		}
		for _, k := range keys {
			if k != "" {
				m.pk = append(m.pk, k)
			}
		}
	}
	return out, metas, nil
}

// jsonColumns marks the (table, column) pairs MariaDB guards with
// json_valid.
func (s *Source) jsonColumns(ctx context.Context, into map[[2]string]bool) error {
	rs, release, err := s.rawQuery(ctx, jsonChecksSQL, []any{s.schema})
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == erUnknownTable {
			return nil // a server too old to have JSON checks listed
		}
		return err
	}
	defer release()
	defer rs.Close()
	for rs.Next() {
		var table, clause string
		if err := rs.Scan(&table, &clause); err != nil {
			return err
		}
		if col, ok := jsonValidColumn(clause); ok {
			into[[2]string{table, col}] = true
		}
	}
	return rs.Err()
}

// jsonValidColumn reads the column of a "json_valid(`col`)" check.
func jsonValidColumn(clause string) (string, bool) {
	const pre, suf = "json_valid(`", "`)"
	if !strings.HasPrefix(clause, pre) || !strings.HasSuffix(clause, suf) || len(clause) < len(pre)+len(suf)+1 {
		return "", false
	}
	name := clause[len(pre) : len(clause)-len(suf)]
	// Inside, a backtick is doubled; a lone one means the clause is more
	// than one column.
	if strings.Count(name, "`")%2 != 0 || strings.Contains(strings.ReplaceAll(name, "``", ""), "`") {
		return "", false
	}
	return strings.ReplaceAll(name, "``", "`"), true
}

// kindOf maps information_schema's DATA_TYPE (and COLUMN_TYPE, for
// tinyint(1) and unsigned bigint) to a Kind.
func kindOf(dataType, columnType string) dialects.Kind {
	switch dataType {
	case "tinyint":
		if strings.HasPrefix(columnType, "tinyint(1)") {
			return dialects.KindBool
		}
		return dialects.KindInt
	case "smallint", "mediumint", "int", "integer", "year", "bit":
		return dialects.KindInt
	case "bigint":
		if strings.Contains(columnType, "unsigned") {
			// Up to 2⁶⁴-1: exact as a decimal, compared and bound as text.
			return dialects.KindDecimal
		}
		return dialects.KindInt
	case "decimal", "numeric", "fixed":
		return dialects.KindDecimal
	case "float", "double", "real", "double precision":
		return dialects.KindFloat
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		return dialects.KindString
	case "json":
		return dialects.KindJSON
	case "date":
		return dialects.KindDate
	case "datetime":
		return dialects.KindTimestamp
	case "timestamp":
		return dialects.KindTimestampTZ
	case "time":
		return dialects.KindTime
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob",
		"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
		"geometrycollection", "geomcollection":
		return dialects.KindBytes
	case "uuid":
		return dialects.KindUUID
	}
	return dialects.KindOther
}

// tableMeta returns what is known of a table, introspecting it when it was
// never seen. A table that does not exist has no meta (nil, nil): the
// statement will say so.
func (s *Source) tableMeta(ctx context.Context, table string) (*tableMeta, error) {
	s.metaMu.RLock()
	m := s.meta[table]
	s.metaMu.RUnlock()
	if m != nil {
		return m, nil
	}
	_, metas, err := s.introspect(ctx, table)
	if err != nil {
		return nil, err
	}
	m = metas[table]
	if m != nil {
		s.metaMu.Lock()
		s.meta[table] = m
		s.metaMu.Unlock()
	}
	return m, nil
}

// rawQuery runs a statement through the statement cache. release must be
// called once the rows are closed.
func (s *Source) rawQuery(ctx context.Context, text string, args []any) (*sql.Rows, func(), error) {
	return s.queryOn(ctx, nil, text, args)
}

// queryOn runs a query in tx, or on the pool when tx is nil.
func (s *Source) queryOn(ctx context.Context, tx *sql.Tx, text string, args []any) (*sql.Rows, func(), error) {
	cs, ok, err := s.stmts.get(ctx, text)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		var rs *sql.Rows
		if tx != nil {
			rs, err = tx.QueryContext(ctx, text, args...)
		} else {
			rs, err = s.db.QueryContext(ctx, text, args...)
		}
		return rs, func() {}, err
	}
	st := cs.stmt
	if tx != nil {
		st = tx.StmtContext(ctx, st) // closed with the transaction
	}
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		s.stmts.put(cs)
		return nil, nil, err
	}
	return rs, func() { s.stmts.put(cs) }, nil
}

// execOn runs a statement without rows in tx, or on the pool when tx is nil.
func (s *Source) execOn(ctx context.Context, tx *sql.Tx, text string, args []any) (sql.Result, error) {
	cs, ok, err := s.stmts.get(ctx, text)
	if err != nil {
		return nil, err
	}
	if !ok {
		if tx != nil {
			return tx.ExecContext(ctx, text, args...)
		}
		return s.db.ExecContext(ctx, text, args...)
	}
	defer s.stmts.put(cs)
	st := cs.stmt
	if tx != nil {
		st = tx.StmtContext(ctx, st)
	}
	return st.ExecContext(ctx, args...)
}

// Read renders and runs a read plan and streams its rows.
func (s *Source) Read(ctx context.Context, p *query.Plan) (dialects.Rows, error) {
	p, err := s.plan(p)
	if err != nil {
		return nil, err
	}
	if p.Action != query.Read {
		return nil, fault.New(fault.Invalid, "Read needs a read plan, got %s", p.Action)
	}
	st, err := Dialect{}.Render(p)
	if err != nil {
		return nil, err // refused before anything is asked of the server
	}
	qctx, cancel := s.bound(ctx)
	meta, err := s.tableMeta(qctx, p.Table)
	if err != nil {
		err = s.err(qctx, err) // mapped before cancel ends qctx
		cancel()
		return nil, err
	}
	if q := adapt(p, meta); q != p {
		if st, err = (Dialect{}).Render(q); err != nil {
			cancel()
			return nil, err
		}
	}
	r, err := s.query(qctx, nil, st, meta)
	if err != nil {
		cancel()
		return nil, err
	}
	r.cancel = cancel
	return r, nil
}

// query runs st and prepares its rows for decoding; the first row is
// fetched, so a statement that fails (bad value, timeout, constraint) fails
// here, before the caller has started to answer.
func (s *Source) query(ctx context.Context, tx *sql.Tx, st dialects.Stmt, meta *tableMeta) (*rows, error) {
	rs, release, err := s.queryOn(ctx, tx, st.SQL, st.Args)
	if err != nil {
		return nil, s.err(ctx, err)
	}
	return s.newRows(ctx, rs, release, meta)
}

// newRows prepares rs for decoding, with meta's kinds as hints (meta may be
// nil), and fetches the first row. release is called once rs is closed.
func (s *Source) newRows(ctx context.Context, rs *sql.Rows, release func(), meta *tableMeta) (*rows, error) {
	cts, err := rs.ColumnTypes()
	if err != nil {
		_ = rs.Close()
		release()
		return nil, s.err(ctx, err)
	}
	n := len(cts)
	r := &rows{
		ctx:     ctx,
		src:     s,
		rs:      rs,
		release: release,
		cols:    make([]dialects.Column, n),
		dec:     make([]decodeFunc, n),
		raw:     make([]sql.RawBytes, n),
		dest:    make([]any, n),
		vals:    make([]any, n),
	}
	for i, ct := range cts {
		hint, dbType := dialects.KindOther, ""
		if meta != nil {
			if k, ok := meta.kinds[ct.Name()]; ok {
				hint = k
				for _, c := range meta.cols {
					if c.Name == ct.Name() {
						dbType = c.DBType
						break
					}
				}
			}
		}
		dec, kind := pickDecoder(ct.DatabaseTypeName(), hint)
		if kind != hint || dbType == "" {
			dbType = strings.ToLower(ct.DatabaseTypeName())
		}
		r.dec[i] = dec
		r.cols[i] = dialects.Column{Name: ct.Name(), DBType: dbType, Kind: kind, Nullable: true}
		r.dest[i] = &r.raw[i]
	}
	r.peeked, r.hasRow = true, rs.Next()
	if !r.hasRow {
		if err := rs.Err(); err != nil {
			r.closeAll()
			return nil, s.err(ctx, err)
		}
	}
	return r, nil
}

// rows adapts *sql.Rows to dialects.Rows, decoding each cell from the raw
// bytes with the decoder its column got once per query.
type rows struct {
	ctx     context.Context
	cancel  context.CancelFunc
	src     *Source
	rs      *sql.Rows
	release func()
	cols    []dialects.Column
	dec     []decodeFunc
	raw     []sql.RawBytes
	dest    []any
	vals    []any
	err     error
	done    bool

	// peeked is set while the first row, fetched by query, is unread;
	// hasRow tells whether there was one.
	peeked, hasRow bool
}

func (r *rows) Columns() []dialects.Column { return r.cols }

func (r *rows) Next() bool {
	if r.err != nil || r.done {
		return false
	}
	if r.peeked {
		r.peeked = false
		return r.hasRow
	}
	return r.rs.Next()
}

// Values decodes the current row into a slice reused by the next call.
func (r *rows) Values() ([]any, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.rs.Scan(r.dest...); err != nil {
		r.err = r.src.err(r.ctx, err)
		return nil, r.err
	}
	for i, src := range r.raw {
		if src == nil {
			r.vals[i] = nil
			continue
		}
		v, err := r.dec[i](src)
		if err != nil {
			r.err = fault.Wrap(fault.Internal, err, "cannot decode column %q", r.cols[i].Name)
			return nil, r.err
		}
		r.vals[i] = v
	}
	return r.vals, nil
}

func (r *rows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.src.err(r.ctx, r.rs.Err())
}

func (r *rows) Close() error {
	r.closeAll()
	return r.Err()
}

func (r *rows) closeAll() {
	if r.done {
		return
	}
	r.done = true
	_ = r.rs.Close()
	r.release()
	if r.cancel != nil {
		r.cancel()
	}
}

// Write runs an insert, update or delete. Update and delete are single
// statements, atomic on their own (on transactional engines such as
// InnoDB); an insert of several statements runs in one transaction.
func (s *Source) Write(ctx context.Context, p *query.Plan) (dialects.WriteResult, error) {
	p, err := s.plan(p)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	switch p.Action {
	case query.Insert, query.Update, query.Delete:
	default:
		return dialects.WriteResult{}, fault.New(fault.Invalid, "Write needs an insert, update or delete plan, got %s", p.Action)
	}
	if p.Action != query.Insert { // an insert is rendered chunk by chunk
		check := p
		if p.Action == query.Update && p.Return {
			cp := *p // its rows are read back (updateReturning)
			cp.Return = false
			check = &cp
		}
		if _, err := (Dialect{}).Render(check); err != nil {
			return dialects.WriteResult{}, err // refused before anything is asked of the server
		}
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	meta, err := s.tableMeta(ctx, p.Table)
	if err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	p = adapt(p, meta)
	switch p.Action {
	case query.Insert:
		res, err := s.insert(ctx, p, meta)
		if err != nil {
			return dialects.WriteResult{}, s.err(ctx, err)
		}
		return res, nil
	default:
		if p.Action == query.Update && p.Return {
			return s.updateReturning(ctx, p, meta)
		}
		st, err := Dialect{}.Render(p)
		if err != nil {
			return dialects.WriteResult{}, err
		}
		if p.Return {
			return s.deleteReturning(ctx, st, meta)
		}
		res, err := s.execOn(ctx, nil, st.SQL, st.Args)
		if err != nil {
			return dialects.WriteResult{}, s.err(ctx, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return dialects.WriteResult{}, s.err(ctx, err)
		}
		return dialects.WriteResult{RowsAffected: n}, nil
	}
}

// inTx runs fn in a transaction, committed when fn succeeds.
func (s *Source) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

var (
	_ dialects.Source  = (*Source)(nil)
	_ dialects.Rows    = (*rows)(nil)
	_ driver.Connector = (*connector)(nil)
)
