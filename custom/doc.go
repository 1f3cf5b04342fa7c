// Package custom is the model of custom APIs: operator-written,
// parameterized SQL served at
// /minimal/api/rest/custom/v1/{org}/{project}/{uri}?version=N and by the
// MCP tool call_api.
//
// It owns three things, all pure (no I/O):
//
//   - Check and Compile: the rules of a definition (store.CustomAPI) —
//     typed parameters, the lexical rules of the statements (a :name is a
//     parameter outside quotes and comments; a declared :name inside
//     quotes, positional placeholders and a second statement are refused),
//     the statement verbs against the mode, and the tables each statement
//     writes, found in its text;
//   - Bind: a caller's values checked against the declared types and
//     bounds, defaults filled in, unknown and missing names refused;
//   - Statements: each :name turned into the database's positional
//     placeholder, its value into the matching bound argument. Values never
//     enter the SQL text.
//
// Running a call — tenancy, the permission gates, the database — is the
// engine's (engine.CallAPI); the faces only translate. Definitions are
// stored by package store, which checks their shape but does not read the
// SQL: callers that write definitions (`minimal apply`, the admin API) run
// Check first.
//
// custom imports store, dialects, query and fault; never engine, api or
// mcp.
package custom
