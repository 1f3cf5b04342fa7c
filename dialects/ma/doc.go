// Package ma is the MariaDB/MySQL database type ("ma") of the gateway, built
// on database/sql and github.com/go-sql-driver/mysql.
//
// It owns three things: Dialect, the pure renderer of a query.Plan into SQL
// with backtick-quoted identifiers and ? placeholders (golden tested in
// package dialects); Source, a live pool limited to one MySQL database (the
// registration's schema) that introspects it from information_schema and
// runs plans through prepared statements kept per connection; and the
// normalization of MariaDB/MySQL values into the neutral cell types of
// dialects.Rows, decoded per column from the raw bytes with decoders chosen
// once per query. Driver errors are mapped to *fault.Error here and stay
// wrapped, so errors.As(err, **mysql.MySQLError) keeps working.
//
// MariaDB 10.5 and later return inserted rows with INSERT … RETURNING *;
// on MySQL and older MariaDB the rows are read back by primary key, from
// LAST_INSERT_ID() for generated keys (see Source's insert). The server's
// flavor is learned on the first connection.
//
// The package registers itself as "ma" in its init; cmd/minimal blank-imports
// it. It imports dialects, query and fault only; never engine, api or mcp.
package ma
