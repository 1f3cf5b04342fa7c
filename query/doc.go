// Package query is the neutral model of one data operation (Plan, Expr) that
// both faces of the gateway build, and the parser of the REST filter grammar.
//
// It is pure: no I/O, no SQL. Request values live only in Cond.Args and
// insert/update values; identifiers are plain names to be checked against the
// catalog by the engine and quoted by a dialect.
//
// query imports nothing of the project except fault.
package query
