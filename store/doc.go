// Package store is the control-plane store of the gateway: orgs, projects,
// spaces, identities, registered databases, locks, token revocations and
// settings. All state lives here; a gateway process only caches it.
//
// # Backend
//
// Open uses an SQLite file, <dataDir>/control.db, through modernc.org/sqlite
// (pure Go). Several processes — the CLI and a running server — may open the
// same file at once: connections use WAL, a 5 s busy timeout and BEGIN
// IMMEDIATE transactions, so writers queue instead of failing with
// SQLITE_BUSY (and a first connection SQLite refuses as busy while another
// turns a new file into WAL mode is opened again), and the migration runner re-checks schema_migrations inside
// its write transaction, so a migration is applied exactly once.
//
// With EnvControlDSN (MINIMAL_CONTROL_DSN) set, or a DSN given to
// OpenControl, the store is a PostgreSQL database instead, through pgx's
// database/sql driver, and several gateway replicas share it. The data
// directory still holds the master key file (unless EnvMasterKey is set,
// as it must be for replicas to share the key).
//
// Every statement is written once, with '?' placeholders, in SQL that both
// accept (no INSERT OR REPLACE, no SQLite functions; ids are TEXT UUIDs made
// in Go, times BIGINT Unix nanoseconds, booleans INTEGER 0/1, upserts as ON
// CONFLICT ... DO UPDATE), and the same numbered migrations build both
// (a migration named NNNN_name.sqlite.sql runs on SQLite only, and the other
// backend records its version: 0009 stores audit_log WITHOUT ROWID). The
// exceptions are the two writers' own connections on SQLite: the audit
// writer prepares its INSERTs as INSERT OR FAIL and the journal writer its
// transactions as BEGIN IMMEDIATE. What else differs is data in one place
// (dialect): on PostgreSQL the driver wrapper rebinds '?' to $1, $2, …;
// the migration runner holds an advisory lock where SQLite relies on BEGIN
// IMMEDIATE; a write transaction takes the
// change counter's row lock first, which makes writers take turns as BEGIN
// IMMEDIATE does; a read-only transaction is REPEATABLE READ, one snapshot;
// SQLSTATE 23505 is fault.Conflict as SQLITE_CONSTRAINT_UNIQUE is, and an
// unreachable server fault.Unavailable.
//
// # Change counter
//
// Every write of configuration (tenancy, identities, databases, policy,
// revocations, settings) bumps a single counter in the same transaction
// (table changes). A server polls ChangeSeq, which is one primary-key read,
// and reloads its caches when the value moves. Writes that fail change
// nothing, the counter included. AI sessions and their journal are data,
// not configuration: they are written without moving the counter, so MCP
// traffic does not make every server reload its catalog and policies.
//
// Changes tells a server to look now rather than at its next poll: on
// PostgreSQL every write also sends NOTIFY on ChangesChannel in its
// transaction, and Changes listens on a connection of its own; on SQLite it
// reports the writes made through the same Store.
//
// # Policy
//
// A project's permission templates (with ordered rules), role bindings,
// row scopes and locks form its Policy. Policy reads it in one snapshot in
// a deterministic order; ReplacePolicy swaps all of it in one transaction
// and one change-counter bump, after checking it as a whole (CheckPolicy
// runs the same checks without writing). Scope filters are stored as text;
// their grammar is checked by package policy, which store does not import.
// Every policy write advances the project's policy version; an edit of
// what VersionedPolicy read is written with ReplacePolicyAt, which compares
// and advances the version in its transaction, so replicas sharing a
// PostgreSQL control plane never overwrite each other's edits (a moved
// version is fault.Conflict wrapping ErrStaleVersion).
//
// # Secrets
//
// Database DSNs and sealed settings are encrypted with AES-256-GCM under a
// 32-byte master key and stored as "v1:" followed by base64 of nonce and
// ciphertext. The key comes from the MINIMAL_MASTER_KEY environment variable
// (base64 or hex) or else from <dataDir>/master.key, which is created with
// mode 0600 on first use. Plaintext DSNs exist only in memory.
//
// # Errors
//
// Every error is a *fault.Error: Invalid for bad input, NotFound for a
// missing row, Conflict for a duplicate, Internal for the rest (Timeout when
// the context deadline passed). Callers test fault.KindOf, never the text.
//
// store imports fault and migrations of the project, and pgx's database/sql
// driver for the PostgreSQL backend.
package store
