// Package sqlgen is the expression and statement renderer the SQL dialects
// share. A dialect describes its engine with a Syntax, mostly data
// (placeholder form, identifier quoting, boolean literals, paging form,
// RETURNING or OUTPUT, limits) and a few functions where an engine adapts a
// value or checks a name; Syntax.Render then turns a query.Plan into one
// dialects.Stmt, a pure function golden-tested through every dialect.
//
// A dialect whose statements differ in shape, not only in spelling
// (ClickHouse's typed values, its INSERT … SELECT and its negation pushed
// down to the comparisons), embeds a Builder in its own, takes parts over
// through small writer interfaces (CondWriter, InsertWriter,
// SetValueWriter) and calls back into the shared parts: the WHERE tree, identifier lists, ORDER BY and
// paging.
//
// sqlgen imports dialects, query and fault only; it never imports a dialect
// package, and never engine, api or mcp. Its code never asks which engine
// it writes for: every difference between engines is a field of a Syntax
// value, owned by its dialect.
package sqlgen
