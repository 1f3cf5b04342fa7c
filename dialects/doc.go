// Package dialects defines how the engine talks to a database type: a
// Dialect renders a query.Plan into SQL and bound arguments (pure, golden
// tested), a Source is a live connection pool that introspects tables and
// runs plans. Each database type lives in its own sub-package and registers a
// Factory in its init, like database/sql drivers do.
//
// A Source may have optional abilities, found by a type assertion like
// database/sql/driver's optional interfaces: Stats, ValueChecker, and the
// file capabilities of files.go (Snapshots, History, SchemaChanges,
// AliasStore) that the mi source has. This package and its sub-packages are
// the only code of the gateway that opens a registered database or a table
// file; the engine reaches the file capabilities only through its gated,
// audited entry points.
//
// A dialect never imports engine, api or mcp.
package dialects
