// Package engine runs every data operation of the gateway through one road,
// Execute: resolve the table in the catalog, apply the permission gates,
// validate and coerce the plan against the table's columns, hand it to the
// table's dialect, audit, and stream the result back.
//
// What a plan cannot say — a source's optional file capabilities (the mi
// source's snapshots, row history, schema changes, schema_batch, alias
// store) — goes through the entry points of files.go, which apply the same
// gates and audit every call; nothing else reaches those capabilities.
//
// The catalog keeps one dialects.Source per registered database and a cache
// of introspected tables; it follows the control-plane store's change
// counter so a `minimal db add` reaches a running server within seconds.
//
// engine imports auth (Principal), permissions, dialects, store, query and
// observe (the request id and face of a context, for audit entries); never
// api or mcp.
package engine
