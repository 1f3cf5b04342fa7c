package store

// dialect is what the control plane's backends do differently, as data: the
// statements themselves are written once, with '?' placeholders, and
// rebound for PostgreSQL by its driver wrapper (see pgConn).
type dialect struct {
	// name is the backend's name in messages.
	name string
	// notify, when set, runs in every write transaction after the change
	// counter moved, to wake other processes at commit.
	notify string
	// lockSession, when set, locks one session row (its one argument is the
	// id) for the rest of a transaction. SQLite needs none: BEGIN IMMEDIATE
	// already makes every write transaction exclusive.
	lockSession string
	// migrateLock and migrateUnlock, when set, bracket the migration run
	// on one connection so that concurrent starts migrate once; SQLite
	// relies on BEGIN IMMEDIATE and the re-check in applyMigration instead.
	migrateLock, migrateUnlock string
}

// sqliteDialect is the default backend, the file <dataDir>/control.db.
var sqliteDialect = dialect{name: "SQLite"}
