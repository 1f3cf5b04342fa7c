// Package ch is the ClickHouse database type ("ch") of the gateway, built on
// clickhouse-go/v2 over ClickHouse's native protocol. It works with servers
// from 18.x (the Debian package the tests run against) to current ones.
//
// It owns three things: Dialect, the pure renderer of a query.Plan into SQL
// with ? placeholders that the driver fills in and escapes on the client
// (golden tested in package dialects); Source, a live pool limited to one
// ClickHouse database that introspects it from system.tables and
// system.columns and runs plans, with updates and deletes as mutations it
// waits on; and the normalization of ClickHouse values into the neutral
// cell types of dialects.Rows. Driver errors are mapped to *fault.Error here
// by exception code and stay wrapped, so errors.As(err, **clickhouse.Exception)
// keeps working.
//
// ClickHouse differs from the SQL databases in ways the package hides
// where it can and documents where it cannot: no transactions (a
// multi-row insert is one statement, one block), asynchronous mutations
// instead of UPDATE and DELETE (waited on, rows counted before), no unique
// keys (so never a Conflict), and no implicit conversions (values are typed
// against the table's column types before they are bound).
//
// The package registers itself as "ch" in its init; cmd/minimal blank-imports
// it. It imports dialects, query and fault only; never engine, api or mcp.
package ch
