// Package dialects defines how the engine talks to a database type: a
// Dialect renders a query.Plan into SQL and bound arguments (pure, golden
// tested), a Source is a live connection pool that introspects tables and
// runs plans. Each database type lives in its own sub-package and registers a
// Factory in its init, like database/sql drivers do.
//
// A dialect never imports engine, api or mcp.
package dialects
