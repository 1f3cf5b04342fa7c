// Package fault holds the one typed error of the gateway. Every layer returns
// *fault.Error (or wraps one) so that the REST face can map a Kind to an HTTP
// status in one table and the MCP face can decide which refusals a caller can
// fix. Errors are never matched by their text.
//
// fault imports nothing of the project.
package fault
