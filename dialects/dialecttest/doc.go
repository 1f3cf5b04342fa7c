// Package dialecttest holds what every dialect is tested against: the golden
// SQL cases (Cases, rendered by each dialect and compared with
// dialects/testdata) and the helpers integration tests use to find their
// database (DSN).
//
// It is imported by tests only. It imports dialects, query and fault, never a
// dialect sub-package, engine, api or mcp.
package dialecttest
