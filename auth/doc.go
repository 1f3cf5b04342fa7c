// Package auth signs and verifies access tokens (JWT, HS256, via
// golang-jwt/jwt/v5), turns a verified token into a Principal, carries the
// Principal in a request context, and enforces the minting rule: a token
// never holds more than the identity it names.
//
// auth imports store (identities, revocations, the sealed signing key) and
// query (masks); never engine, api or mcp.
package auth
