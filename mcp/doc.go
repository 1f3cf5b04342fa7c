// Package mcp is the MCP face of the gateway: the endpoint
// POST /minimal/mcp/rpc/v1 on its own listener, and the same tools over
// stdin/stdout for a local agent.
//
// The JSON-RPC layer is github.com/mark3labs/mcp-go. It serves protocol
// 2026-07-28 (stateless: server/discover, the MCP-Protocol-Version,
// Mcp-Method and Mcp-Name header rules and their error codes) and the
// initialize handshake of 2025-11-25, 2025-06-18 and 2025-03-26 on the same
// endpoint, deciding the era per request. In front of it this package adds
// what the gateway requires before any JSON-RPC is read: DNS-rebinding
// protection on loopback binds (Host and Origin), the credential layer
// (401 for a missing or invalid token, 403 for an identity that is not of
// kind mcp or a space with MCP switched off, each with a JSON body saying
// why), a body limit, and the 400/-32022 answer for an unsupported
// MCP-Protocol-Version header of the handshake era.
//
// Tools only translate: arguments become a query.Plan (the query object
// goes through query.FromParams, as a REST query string does) and
// engine.Execute is the one road for data; listings come from
// engine.Databases and engine.Tables. Every tool but start_ai_session and
// help runs in an AI session (package sessions), which journals the call
// before the tool runs and its outcome after. A call names its AI session
// with the session_id argument, X-Session-Id or, in the handshake era, the
// Mcp-Session-Id that initialize issued and start_ai_session bound
// (transport.go); JSON-RPC rules mcp-go leaves out are in jsonrpc.go.
//
// tools/list shows a caller only the tools it could succeed with
// (engine.Could), each compact, help {tool} giving the whole entry
// (listing.go); every tool declares an output schema its structured
// content validates against (mini-app tools whose answers take one shape).
//
// Refusals take three shapes: the credential layer answers HTTP errors, an
// unknown tool is a JSON-RPC error (-32602), and everything the caller can
// fix (validation, permission, not found, session rules) is a normal result
// with isError true and {"code","message"} as its text, and no structured
// content.
//
// mcp imports engine, sessions, auth, query, store, fault, dialects and
// wire; never api.
package mcp
