// Package pg is the PostgreSQL database type ("pg") of the gateway, built on
// pgx/v5 and its pool.
//
// It owns three things: Dialect, the pure renderer of a query.Plan into SQL
// with $n placeholders (golden tested in package dialects); Source, a live
// pool that introspects one schema and runs plans; and the normalization of
// PostgreSQL values into the neutral cell types of dialects.Rows, decoded per
// column from the wire bytes without reflection on the hot path. Driver
// errors are mapped to *fault.Error here and stay wrapped, so
// errors.As(err, **pgconn.PgError) keeps working.
//
// The package registers itself as "pg" in its init; cmd/minimal blank-imports
// it. It imports dialects, query and fault only; never engine, api or mcp.
package pg
