package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/littlebitlabs/minimal/fault"
)

// EnvControlDSN names the environment variable that, when set and not
// empty, puts the control plane on PostgreSQL (postgres://… or a key=value
// connection string) instead of the SQLite file in the data directory.
// Several gateway replicas share one control plane this way.
const EnvControlDSN = "MINIMAL_CONTROL_DSN"

// ChangesChannel is the PostgreSQL LISTEN/NOTIFY channel on which every
// write to the control plane is announced, in the transaction that bumps
// the change counter (payload: the new counter value).
const ChangesChannel = "minimal_changes"

// migrationLockKey is the key of the session-level advisory lock held while
// migrations run on PostgreSQL, so replicas starting together migrate once
// ("minimal" in ASCII).
const migrationLockKey int64 = 0x6d696e696d616c

// postgres is the PostgreSQL backend: the statements are the SQLite ones,
// rebound by the driver wrapper below; a write takes the change counter's
// row lock first (see Store.write) and announces itself with pg_notify.
var postgres = dialect{
	name:          "PostgreSQL",
	notify:        `SELECT pg_notify('` + ChangesChannel + `', CAST(seq AS TEXT)) FROM changes WHERE id = 1`,
	lockSession:   `SELECT 1 FROM sessions WHERE id = ? FOR UPDATE`,
	migrateLock:   fmt.Sprintf(`SELECT pg_advisory_lock(%d)`, migrationLockKey),
	migrateUnlock: fmt.Sprintf(`SELECT pg_advisory_unlock(%d)`, migrationLockKey),
}

// openPostgres opens the pooled handle on the control plane at dsn. It
// returns the parsed configuration too, for the LISTEN connections. The
// error never repeats the DSN, which may hold a password.
func openPostgres(ctx context.Context, dsn string) (*sql.DB, *pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, nil, fault.New(fault.Invalid, "store: the control-plane connection string (--control-dsn or %s) is not a valid PostgreSQL connection string (expected postgres://user:pass@host:5432/db)", EnvControlDSN)
	}
	db := sql.OpenDB(pgConnector{base: stdlib.GetConnector(*cfg)})
	// A replica needs a few connections: one per concurrent write (they
	// queue on the change counter's row lock), reads and session journals.
	// The bound keeps several replicas well inside max_connections.
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, dbErr(err, "store: connect to the PostgreSQL control plane (--control-dsn or %s)", EnvControlDSN)
	}
	return db, cfg, nil
}

// pgConnector hands database/sql pgx connections wrapped in pgConn.
type pgConnector struct{ base driver.Connector }

// Connect opens one pgx connection and wraps it.
func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("store: pgx returned a %T, want *stdlib.Conn", conn)
	}
	return &pgConn{Conn: pc}, nil
}

// Driver returns the pgx driver.
func (c pgConnector) Driver() driver.Driver { return c.base.Driver() }

// pgConn is a pgx connection that accepts the store's statements as they
// are written, with '?' placeholders: it rebinds them to $1, $2, … — the
// one place the two backends' SQL differs. Every other ability of the pgx
// connection (pinging, session reset, value checking) is promoted as is.
//
// It also gives read-only transactions REPEATABLE READ when the caller
// asked for no isolation level: a multi-statement read (Store.Policy) then
// sees one snapshot, as it does on SQLite, instead of one per statement.
type pgConn struct{ *stdlib.Conn }

// Prepare rebinds query and prepares it.
func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebind(query))
}

// PrepareContext rebinds query and prepares it.
func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

// ExecContext rebinds query and runs it.
func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(query), args)
}

// QueryContext rebinds query and runs it.
func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}

// BeginTx starts a transaction; see pgConn for the read-only default.
func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly && sql.IsolationLevel(opts.Isolation) == sql.LevelDefault {
		opts.Isolation = driver.IsolationLevel(sql.LevelRepeatableRead)
	}
	return c.Conn.BeginTx(ctx, opts)
}

// rebind turns the '?' placeholders of query into $1, $2, … in order. A
// '?' inside a string literal, a quoted identifier, a dollar-quoted string
// or a comment is left alone.
func rebind(query string) string {
	i := 0
	for i < len(query) && query[i] != '?' {
		i++
	}
	if i == len(query) {
		return query
	}
	out := make([]byte, 0, len(query)+8)
	n := 0
	for i = 0; i < len(query); {
		c := query[i]
		switch {
		case c == '?':
			n++
			out = fmt.Appendf(out, "$%d", n)
			i++
			continue
		case c == '\'' || c == '"':
			j := skipQuoted(query, i, c)
			out = append(out, query[i:j]...)
			i = j
			continue
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			j := i + 2
			for j < len(query) && query[j] != '\n' {
				j++
			}
			out = append(out, query[i:j]...)
			i = j
			continue
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			j := i + 2
			for j+1 < len(query) && (query[j] != '*' || query[j+1] != '/') {
				j++
			}
			j = min(j+2, len(query))
			out = append(out, query[i:j]...)
			i = j
			continue
		case c == '$':
			if j, ok := skipDollarQuoted(query, i); ok {
				out = append(out, query[i:j]...)
				i = j
				continue
			}
		}
		out = append(out, c)
		i++
	}
	return string(out)
}

// skipQuoted returns the index just past the literal or quoted identifier
// opened by quote at query[i]; a doubled quote inside is an escaped one.
func skipQuoted(query string, i int, quote byte) int {
	for j := i + 1; j < len(query); j++ {
		if query[j] == quote {
			if j+1 < len(query) && query[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(query)
}

// skipDollarQuoted reports whether a dollar-quoted string ($$…$$ or
// $tag$…$tag$) opens at query[i], and the index just past it.
func skipDollarQuoted(query string, i int) (int, bool) {
	if i > 0 && isIdentByte(query[i-1]) {
		return 0, false // part of an identifier such as a$b
	}
	j := i + 1
	for j < len(query) && isIdentByte(query[j]) && !(j == i+1 && query[j] >= '0' && query[j] <= '9') {
		j++
	}
	if j >= len(query) || query[j] != '$' {
		return 0, false // $1 or a lone $
	}
	tag := query[i : j+1]
	for k := j + 1; k+len(tag) <= len(query); k++ {
		if query[k:k+len(tag)] == tag {
			return k + len(tag), true
		}
	}
	return len(query), true
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
}

var (
	_ driver.Connector          = pgConnector{}
	_ driver.Conn               = (*pgConn)(nil)
	_ driver.ConnPrepareContext = (*pgConn)(nil)
	_ driver.ConnBeginTx        = (*pgConn)(nil)
	_ driver.ExecerContext      = (*pgConn)(nil)
	_ driver.QueryerContext     = (*pgConn)(nil)
	_ driver.Pinger             = (*pgConn)(nil)
	_ driver.SessionResetter    = (*pgConn)(nil)
	_ driver.NamedValueChecker  = (*pgConn)(nil)
)
