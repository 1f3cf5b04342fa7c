// Package api is the REST face of the gateway: a chi router serving the Auto
// API, health endpoints, the error envelope, and response encoding (see
// api/encode). Handlers only translate: request → query.Plan →
// engine.Execute → encoded answer. No permission logic, no SQL, no dialect
// checks live here.
//
// api imports engine, auth, store, policy, permissions (refusal text, scope
// parsing), custom, dialects (connection probes), observe, query, fault and
// api/encode; never mcp.
package api
