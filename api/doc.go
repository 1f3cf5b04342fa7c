// Package api is the REST face of the gateway: a chi router serving the Auto
// API, the admin API and health endpoints. Response encoding, the error
// envelope and the error kind → HTTP status table are package wire's, shared
// with the MCP face. Handlers only translate: request → query.Plan →
// engine.Execute → encoded answer. No permission logic, no SQL, no dialect
// checks live here.
//
// api imports engine, auth, store, policy, permissions (refusal text, scope
// parsing), custom, dialects (connection probes), observe, query, fault and
// wire; never mcp.
package api
