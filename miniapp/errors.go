package miniapp

import (
	"fmt"

	"github.com/littlebitlabs/minimal/fault"
)

// Error is a mini-app domain error: Code is the contract's code
// (VALIDATION_ERROR, NOT_FOUND, …) and Error() its display text, which is
// what a tool answers with isError true.
type Error struct {
	Code string
	Text string
	// Kind classifies the error for the gateway (journal, logs).
	Kind fault.Kind
	// Data holds the contract's extra members (field, id, table, …).
	Data map[string]any
}

func (e *Error) Error() string { return e.Text }

// Fault returns the error as the gateway's typed error, for the journal.
func (e *Error) Fault() *fault.Error {
	return &fault.Error{Kind: e.Kind, Code: e.Code, Message: e.Text}
}

func newErr(kind fault.Kind, code string, data map[string]any, format string, args ...any) *Error {
	return &Error{Code: code, Kind: kind, Data: data, Text: fmt.Sprintf(format, args...)}
}

func validationErr(field, reason string) *Error {
	return newErr(fault.Invalid, "VALIDATION_ERROR", map[string]any{"field": field}, "validation error on field '%s': %s", field, reason)
}

func rowNotFound(id string) *Error {
	return newErr(fault.NotFound, "NOT_FOUND", map[string]any{"id": id}, "row not found: %s", id)
}

func tableNotFound(t string) *Error {
	return newErr(fault.NotFound, "TABLE_NOT_FOUND", map[string]any{"table": t}, "table not found: %s", t)
}

func tableRequired() *Error {
	return newErr(fault.Invalid, "TABLE_REQUIRED", nil, "table argument is required in multi-table mode")
}

func schemaErr(msg string) *Error {
	return newErr(fault.Invalid, "SCHEMA_ERROR", nil, "schema parse error: %s", msg)
}

func ambiguousID(prefix string, ids []string) *Error {
	return newErr(fault.Invalid, "AMBIGUOUS_ID", map[string]any{"id_prefix": prefix, "candidates": ids},
		"ambiguous id prefix '%s': %d candidates", prefix, len(ids))
}

func configErr(msg string) *Error {
	return newErr(fault.Invalid, "CONFIG_ERROR", nil, "config error: %s", msg)
}

// asError turns any error of a tool into the contract's display form.
// Gateway refusals keep their message (a permission refusal names the
// roles, as on REST); a missing or hidden table is TABLE_NOT_FOUND;
// internal failures are storage errors.
func asError(err error, table string) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	fe := fault.As(err)
	switch fe.Kind {
	case fault.NotFound:
		if fe.Message == "table not found" || fe.Message == "table not found: "+table {
			return tableNotFound(table)
		}
		return &Error{Code: "NOT_FOUND", Kind: fe.Kind, Text: fe.Message}
	case fault.Invalid:
		return &Error{Code: "VALIDATION_ERROR", Kind: fe.Kind, Text: fe.Message}
	case fault.Forbidden, fault.Conflict, fault.TooLarge, fault.Unsupported:
		return &Error{Code: fe.WireCode(), Kind: fe.Kind, Text: fe.Message}
	}
	return &Error{Code: "STORAGE_ERROR", Kind: fe.Kind, Text: "storage error: " + fe.Message}
}

// Unwrap exposes the gateway's typed error, so fault.As and the journal
// see the kind and code.
func (e *Error) Unwrap() error { return e.Fault() }
