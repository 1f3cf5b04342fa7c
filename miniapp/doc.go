// Package miniapp serves the mini-app-mcp tool set (info, create, get,
// list, update, delete, reload, row_restore, content_view,
// content_replace, content_insert) and its resources (schema://…,
// docs://…) on the gateway's mi databases, wire-compatible with
// mini-app-mcp: the same arguments, result shapes and error texts.
//
// Every data operation is a query.Plan on the object mi/<schema>/<table>
// executed by engine.Execute, so locks, templates, row scopes and column
// limits apply exactly as on REST. What a plan cannot say — snapshots,
// backups and schema changes, schema_batch's SQL, row history, the alias
// store — are calls of the engine's file entry points (engine/files.go),
// which apply the same gates, audit, and reach the mi source's
// capabilities: this package opens no table file or database. Only
// metadata (schema.yaml) is read from the table directory itself.
//
// It also builds the drop-in mode: a private, temporary control plane that
// mounts mini-app-mcp's directories for one local user (DropIn).
//
// miniapp imports engine, auth, store, query, dialects, dialects/mi and
// fault; never api or mcp.
package miniapp
