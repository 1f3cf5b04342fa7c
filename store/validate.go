package store

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/fault"
)

// Limits on stored names.
const (
	maxNameLen = 128
	maxAbbrLen = 32
)

// Identity kinds.
const (
	KindUser    = "user"
	KindService = "service"
	KindMCP     = "mcp"
)

// checkName accepts a non-empty display name of at most 128 bytes, valid
// UTF-8, with no control characters and no surrounding spaces.
func checkName(what, s string) error {
	switch {
	case s == "":
		return fault.New(fault.Invalid, "%s is empty", what)
	case len(s) > maxNameLen:
		return fault.New(fault.Invalid, "%s is longer than %d bytes", what, maxNameLen)
	case !utf8.ValidString(s):
		return fault.New(fault.Invalid, "%s is not valid UTF-8", what)
	case strings.TrimSpace(s) != s:
		return fault.New(fault.Invalid, "%s %q has leading or trailing spaces", what, s)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fault.New(fault.Invalid, "%s %q contains control characters", what, s)
	}
	return nil
}

// checkAbbr accepts a URL-safe lower-case abbreviation: a letter, then
// letters, digits, '-' or '_', at most 32 bytes.
func checkAbbr(what, s string) error {
	if s == "" {
		return fault.New(fault.Invalid, "%s is empty", what)
	}
	if len(s) > maxAbbrLen {
		return fault.New(fault.Invalid, "%s is longer than %d bytes", what, maxAbbrLen)
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_'):
		default:
			return fault.New(fault.Invalid, "%s %q must be a lower-case letter followed by lower-case letters, digits, '-' or '_'", what, s)
		}
	}
	return nil
}

// ValidMask reports whether m is a 4-character CRUD mask: each position i is
// either the i-th letter of "crud" or '-' ("crud", "-r--", "cr--", "----").
func ValidMask(m string) bool {
	if len(m) != 4 {
		return false
	}
	for i := range 4 {
		if m[i] != "crud"[i] && m[i] != '-' {
			return false
		}
	}
	return true
}

func checkMask(what, m string) error {
	if !ValidMask(m) {
		return fault.New(fault.Invalid, "%s %q must be 4 characters, each the letter of \"crud\" at that position or '-'", what, m)
	}
	return nil
}

func checkKind(k string) error {
	switch k {
	case KindUser, KindService, KindMCP:
		return nil
	}
	return fault.New(fault.Invalid, "identity kind %q must be %q, %q or %q", k, KindUser, KindService, KindMCP)
}

// checkDBType accepts a short lower-case type code such as "pg" or "mi".
func checkDBType(t string) error {
	ok := len(t) >= 2 && len(t) <= 16
	for i, r := range t {
		if !(r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			ok = false
		}
	}
	if !ok {
		return fault.New(fault.Invalid, "database type %q must be 2-16 lower-case letters or digits, starting with a letter", t)
	}
	return nil
}

// checkSchema accepts a schema name usable as one URL path segment.
func checkSchema(s string) error {
	if err := checkName("schema", s); err != nil {
		return err
	}
	if strings.Contains(s, "/") {
		return fault.New(fault.Invalid, "schema %q must not contain '/'", s)
	}
	return nil
}

// checkPattern accepts an object pattern of one to three non-empty
// '/'-separated segments, type[/schema[/table]], each a path.Match glob
// ("pg", "pg/public", "pg/*/*", "pg/public/order*"). A shorter pattern
// covers everything below it: "pg" is every table of type pg. what names
// the pattern in the message ("lock pattern", "rule object", …).
func checkPattern(what, p string) error {
	if err := checkName(what, p); err != nil {
		return err
	}
	parts := strings.Split(p, "/")
	if len(parts) > 3 {
		return fault.New(fault.Invalid, "%s %q must have the form type[/schema[/table]] (at most three segments)", what, p)
	}
	for _, part := range parts {
		if part == "" {
			return fault.New(fault.Invalid, "%s %q has an empty segment", what, p)
		}
		if _, err := path.Match(part, ""); err != nil {
			return fault.Wrap(fault.Invalid, err, "%s %q is not a valid glob", what, p)
		}
	}
	return nil
}

// normRoles checks every role name and removes duplicates, keeping the
// first occurrence. The result is never nil.
func normRoles(roles []string) ([]string, error) {
	out := make([]string, 0, len(roles))
	seen := make(map[string]bool, len(roles))
	for _, r := range roles {
		if err := checkName("role", r); err != nil {
			return nil, err
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out, nil
}
