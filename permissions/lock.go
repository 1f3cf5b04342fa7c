package permissions

import (
	"path"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Lock is an operator's lock: every object matching Pattern may at most be
// touched as Mask allows.
type Lock struct {
	Pattern string
	Mask    query.Mask
}

// Object names a table as permissions see it: "type/schema/table".
func Object(typ, schema, table string) string {
	return typ + "/" + schema + "/" + table
}

// ValidPattern checks a lock or rule pattern: one to three '/'-separated
// segments (type, schema, table), each a non-empty glob of path.Match.
func ValidPattern(p string) error {
	segs := strings.Split(p, "/")
	if len(segs) > 3 {
		return fault.New(fault.Invalid, "pattern %q has more than three segments (type/schema/table)", p)
	}
	for _, s := range segs {
		if s == "" {
			return fault.New(fault.Invalid, "pattern %q has an empty segment", p)
		}
		if _, err := path.Match(s, ""); err != nil {
			return fault.New(fault.Invalid, "pattern %q: bad glob %q", p, s)
		}
	}
	return nil
}

// Match reports whether a pattern covers an object. A pattern of fewer
// segments covers everything below it: "pg" is the whole type, "pg/public"
// the whole schema. Each segment is a glob ("pg/public/emp*").
func Match(pattern, object string) bool {
	for pattern != "" {
		var ps, os string
		ps, pattern, _ = strings.Cut(pattern, "/")
		if object == "" {
			return false
		}
		os, object, _ = strings.Cut(object, "/")
		if ok, err := path.Match(ps, os); err != nil || !ok {
			return false
		}
	}
	return true
}

// EffectiveMask is gate 1: the token's key_type AND every matching lock.
func EffectiveMask(keyType query.Mask, locks []Lock, object string) query.Mask {
	m := keyType
	for _, l := range locks {
		if Match(l.Pattern, object) {
			m &= l.Mask
		}
	}
	return m
}

// Refusal is the 403 every gate answers with; it names the roles the caller
// held, never which gate or rule refused.
func Refusal(roles []string) *fault.Error {
	return fault.New(fault.Forbidden, "insufficient permissions for this operation on this table, got [%s]", strings.Join(roles, ", "))
}

// CheckMask is gate 1 for one action on an object, the one place it is
// decided: the token's key_type must allow the action (else Refusal), and
// so must the key_type AND every matching lock (else LockedRefusal, which
// says the table is locked). It returns the effective mask either way.
func CheckMask(keyType query.Mask, locks []Lock, object string, action query.Action, roles []string) (query.Mask, error) {
	eff := EffectiveMask(keyType, locks, object)
	if !keyType.Allows(action) {
		return eff, Refusal(roles)
	}
	if !eff.Allows(action) {
		return eff, LockedRefusal(action, roles)
	}
	return eff, nil
}

// CheckKeyType is gate 1 without an object: the key_type must allow every
// action (else Refusal).
func CheckKeyType(keyType query.Mask, actions []query.Action, roles []string) error {
	for _, a := range actions {
		if !keyType.Allows(a) {
			return Refusal(roles)
		}
	}
	return nil
}

// LockedRefusal is the 403 of gate 1 when an operator's lock, not the
// token, forbids the action.
func LockedRefusal(a query.Action, roles []string) *fault.Error {
	return fault.New(fault.Forbidden, "this table is locked for %s, got [%s]", a, strings.Join(roles, ", "))
}
