package dialects

import (
	"context"
	"time"
)

// TimeoutGrace is how much longer than the statement timeout the gateway
// waits on a database call. Where the database enforces the statement
// timeout itself (PostgreSQL's statement_timeout, MySQL's
// max_execution_time, ClickHouse's max_execution_time) its own answer comes
// first and says what happened; the gateway's deadline ends what the
// database does not bound or cannot report: a server that stopped
// answering, a connection lost without a reset, a write waiting on a lock.
const TimeoutGrace = time.Second

// Bound derives the context one database call runs under from ctx: it ends
// at the statement timeout plus TimeoutGrace at the latest (with no
// statement timeout, only when ctx does). A call that returns rows keeps it
// until the rows are closed, so the deadline covers reading them. A call
// past it fails as fault.Timeout (504), whatever the server does. The
// sources of databases that enforce a statement timeout themselves (pg, ma,
// ch) bound every call they make this way; where the context deadline is
// the only statement timeout there is (ms, and mi's in-process SQLite), it
// is the statement timeout itself, with no grace.
func Bound(ctx context.Context, statementTimeout time.Duration) (context.Context, context.CancelFunc) {
	if statementTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, statementTimeout+TimeoutGrace)
}
