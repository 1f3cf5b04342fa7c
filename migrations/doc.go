// Package migrations holds the numbered SQL migrations of the control-plane
// store, embedded in the binary. Files are named NNNN_name.sql; All returns
// them sorted by version. A file named NNNN_name.sqlite.sql (or
// .postgres.sql) runs on that backend only: the other records its version
// without running it. The store's runner applies each pending migration
// in its own transaction and records it in schema_migrations, a table the
// runner creates itself.
//
// The SQL is written to run unchanged on SQLite and PostgreSQL (but for
// the files of one backend, kept to what only that backend offers): ids are TEXT
// UUIDs generated in Go, timestamps are BIGINT Unix nanoseconds (UTC),
// booleans are INTEGER 0/1, JSON documents are TEXT and sealed secrets are
// base64 TEXT. A migration must never be edited once released; add a new
// file instead.
//
// migrations imports nothing of the project.
package migrations
