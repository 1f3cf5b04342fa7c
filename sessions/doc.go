// Package sessions keeps the AI sessions of the MCP face and their call
// journal: Start and End a session, Begin a tool call (check that the
// session is live and owned by the caller, then journal the tool name and
// arguments before the tool runs; BeginRead, for a tool that only reads,
// queues the entry before the tool runs, to be committed within
// milliseconds) and Finish it (outcome, rows, duration).
// Journal reads a session's calls for the admin API and the CLI.
//
// Everything is persisted in the control-plane store, so a session started
// through one gateway replica is usable through any other.
//
// sessions imports store and fault of the project; never engine, api or mcp.
package sessions
