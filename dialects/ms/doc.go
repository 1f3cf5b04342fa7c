// Package ms is the Microsoft SQL Server database type ("ms") of the
// gateway, built on database/sql and github.com/microsoft/go-mssqldb.
//
// It owns three things: Dialect, the pure renderer of a query.Plan into
// T-SQL with @p1…@pN placeholders, [bracket] quoting, OFFSET … FETCH paging
// and OUTPUT INSERTED.* (golden tested in package dialects); Source, a live
// database/sql pool that introspects one SQL Server schema from the sys.*
// catalog views and runs plans; and the normalization of SQL Server values
// into the neutral cell types of dialects.Rows (exact decimals, canonical
// GUID strings, dates and timestamps as text, datetimeoffset as UTC time).
// Driver errors are mapped to *fault.Error here and stay wrapped, so
// errors.As(err, *mssql.Error) keeps working.
//
// No SQL Server runs where this project is tested: the SQL is proven by the
// golden files and the unit tests of this package, and the integration and
// conformance tests run wherever MINIMAL_TEST_MS_DSN names a server.
//
// The package registers itself as "ms" in its init; cmd/minimal
// blank-imports it. It imports dialects, query and fault only; never engine,
// api or mcp.
package ms
