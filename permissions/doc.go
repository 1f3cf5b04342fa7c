// Package permissions holds the gates of the permission pipeline. This
// release implements gate 1, the lock mask: an operator's locks on
// `type/schema/table` patterns narrow a token's key_type. Gates 2 (Casbin
// permission templates) and 3 (row scopes) plug in beside it.
//
// The engine calls these functions from engine.Execute and nowhere else.
// permissions imports query and store; never engine, api or mcp.
package permissions
