// Package mi serves mini-app tables as the gateway database type "mi".
//
// A mini-app "scope root" (Config.DSN, a directory, optionally written as a
// file:// URL) holds one subdirectory per table: <name>/schema.yaml describes
// the fields and <name>/<name>.db is a SQLite file with the fixed layout of
// mini-app-mcp (rows, _aliases, _row_history, _row_history_archive). The
// layout is followed exactly, so a directory written by mini-app-mcp opens
// unchanged and mini-app-mcp keeps working on a directory written here: rows
// hold compact JSON with sorted keys (serde_json's form, numbers keep their
// integer or float shape), ids are lower-case UUID v4, timestamps Unix
// seconds, and every write appends _row_history entries in the same
// transaction (unless the schema says history: off). The same transaction
// rolls a row's oldest entries into a zstd JSON-lines blob of
// _row_history_archive when it has more than MINI_APP_HISTORY_KEEP_RECENT +
// MINI_APP_HISTORY_CHUNK_MIN raw ones (archive.go), as mini-app-mcp does;
// versions continue the numbering of both tiers, and HistoryAt reads both.
//
// # Columns
//
// Every table shows id (string, primary key, generated), created_at and
// updated_at (integer Unix seconds, maintained), then the schema fields in
// yaml order: string → string, number → float, boolean → boolean,
// array → array, object → json; a field is nullable unless required.
//
// # Render conventions
//
// Dialect.Render is pure and deterministic, and never splices a request
// value into SQL text:
//
//   - read: SELECT id, data, created_at, updated_at FROM rows [WHERE …]
//     [ORDER BY …] [LIMIT ? OFFSET ?]. The projection is done in Go, so the
//     SELECT list never changes. LIMIT/OFFSET appear when either is set; a
//     zero Limit with an Offset binds LIMIT -1.
//   - A field is addressed as json_extract(data, ?) with the JSON path
//     $."field" bound as an argument (the label JSON-escaped, so any name
//     works); id, created_at and updated_at are referenced directly.
//   - eq ne gt ge lt le bw in nin compare with bound values: booleans as
//     1/0, numbers as int64 (integral json.Number) or float64, arrays and
//     objects as their compact sorted-key JSON text (compared with the text
//     json_extract returns). Empty in is false, empty nin is true.
//   - like is case-sensitive: the LIKE pattern is rewritten (as a bound
//     value) into the equivalent GLOB pattern. ilike is LIKE ? ESCAPE '\',
//     which SQLite folds for ASCII letters only.
//   - isnull/notnull: json_extract(data, ?) IS [NOT] NULL, so an absent key
//     and a JSON null are both null. istrue/isfalse test json_type(data, ?)
//     = 'true' / 'false', so only real JSON booleans match.
//   - NULL comparisons follow SQL: ne and nin do not match null fields.
//   - ORDER BY json_extract(data, ?) ASC|DESC in the given order (SQLite puts
//     nulls first when ascending).
//   - update and delete render the row selection they act on,
//     SELECT id, data FROM rows [WHERE …]; Source.Write runs it inside its
//     transaction and applies the change row by row. Without a filter the
//     plan must say All.
//   - insert renders INSERT INTO rows (id, data, created_at, updated_at)
//     VALUES (?, ?, ?, ?)[, (?, ?, ?, ?)…] with, per row, the arguments
//     IDMarker ("{uuid-v4}") or the row's entry of Plan.IDs, the row's data
//     as compact sorted-key JSON, NowMarker ("{unix-now}") twice.
//     Source.Write executes the one-row form of that statement per row with
//     the markers replaced by a fresh UUID v4 and the Unix seconds of the
//     call. Plan.IDs (a restored row's old id) must be lower-case UUIDs.
//   - A value for id, created_at or updated_at (insert cell other than
//     Default{} or nil, or an update assignment) is Unsupported from Render
//     and Invalid from Source.Write.
//
// # Read values
//
// id is a string, created_at and updated_at are int64. Field cells are
// decoded from the stored JSON with json.Decoder.UseNumber: strings as
// string, numbers as json.Number (so 5 and 5.0 stay apart), booleans as
// bool, arrays as []any (nested objects inside as json.RawMessage), objects
// as json.RawMessage of compact sorted-key JSON, absent keys and JSON null
// as nil.
//
// # Writes
//
// Insert validates every row against the schema before the transaction
// starts (required fields present and non-null, JSON types matching;
// unknown keys are kept as mini-app does); Default{} for a field omits the
// key, nil stores a JSON null. Update merges the new values into each
// selected row (nil or Default{} removes an optional key), validates, and
// stores. Delete removes the selected rows. json.Number is stored in its
// own form (5 stays 5, 5.0 stays 5.0); a float64 cannot carry that
// difference, so a whole float64 is stored as an integer (5) and any other
// as the shortest float (2.5). Writers of one Source take turns per table
// in Go; other processes are waited for up to the 5 s busy timeout.
//
// # Documents
//
// Source is a dialects.DocumentStore: a plan may carry whole JSON
// documents (query.Plan.Docs) or ask for them (query.Plan.Doc), which is
// how the mini-app tools keep a row exactly as given. An insert with Docs
// stores each document (one per row; the engine derived the plan's Rows
// from it for the gates) with every key, explicit null and number literal
// as given, after the same schema validation; keys named id, created_at
// or updated_at are document keys like any other (the row's own columns
// stay apart, as in mini-app-mcp). Its returned rows end with the stored
// document, in query.DocColumn. An update with Docs applies its one document
// to every selected row: as a shallow merge patch (null removes a key, a
// required field cannot be removed), or with DocReplace as the new
// document, keeping the stored keys outside query.Plan.DocKeys (those a
// column-limited caller cannot reach). A read with Doc answers one more
// column, query.DocColumn, after the projection: the stored data text as
// a json.RawMessage, byte for byte, or with DocKeys the object holding
// only those keys (compact, sorted). Render shows an insert with Docs as
// it shows any insert, the documents' text in place of the rows' data.
// ORDER BY may name any key (json_extract of a bound path), so an order
// on a key the schema does not name sorts by it too.
//
// # File capabilities
//
// Source has every optional file capability of package dialects
// (files.go): Snapshot and CountRows (dialects.Snapshots), HistoryAt
// (dialects.History), CreateTable, ReplaceSchema, DropSchema and Batch
// (dialects.SchemaChanges: backups go to <dir>/_backup as
// <table>.<unix_secs>.yaml + .db pairs, the db copied by VACUUM INTO), and
// the alias store <dir>/_global.db (dialects.AliasStore). This package is
// the only code of the gateway that opens a mini-app table's SQLite file;
// the engine reaches these methods only through its gated, audited entry
// points.
//
// mi imports dialects, query and fault only; never engine, api or mcp.
package mi
