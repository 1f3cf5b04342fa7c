package custom

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// Type is the declared type of a parameter.
type Type string

// The parameter types. A value is checked against its type before anything
// runs and bound as the neutral value the dialects take (see
// dialects.Runner): string → string; integer → int64; number → its decimal
// text; boolean → bool; date → "2006-01-02"; timestamp → RFC 3339 in UTC;
// uuid → canonical lower-case text.
const (
	String    Type = "string"
	Integer   Type = "integer"
	Number    Type = "number"
	Boolean   Type = "boolean"
	Date      Type = "date"
	Timestamp Type = "timestamp"
	UUID      Type = "uuid"
)

var types = map[Type]bool{String: true, Integer: true, Number: true, Boolean: true, Date: true, Timestamp: true, UUID: true}

// Reserved names cannot be parameters: the REST face reads them from the
// query string itself.
var reserved = map[string]bool{"version": true, "format": true}

// maxParamName bounds a parameter name (PostgreSQL's identifier length).
const maxParamName = 63

// Param is a compiled parameter: its type, whether it is required, its
// default (a coerced value, when HasDefault) and its bounds.
type Param struct {
	Name       string
	Type       Type
	Required   bool
	HasDefault bool
	Default    any
	// MaxLength bounds a string's length in characters (0: none).
	MaxLength int
	// Min and Max bound an integer or number, inclusive (nil: none).
	Min, Max *float64
}

// compileParam checks one declared parameter.
func compileParam(d store.CustomParam) (Param, error) {
	p := Param{Name: d.Name, Type: Type(d.Type), Required: d.Required, Min: d.Min, Max: d.Max}
	if err := checkParamName(d.Name); err != nil {
		return Param{}, err
	}
	if !types[p.Type] {
		return Param{}, fault.New(fault.Invalid, "parameter %q: type %q is not one of string, integer, number, boolean, date, timestamp, uuid", d.Name, d.Type)
	}
	if d.MaxLength != nil {
		if p.Type != String {
			return Param{}, fault.New(fault.Invalid, "parameter %q: max_length applies to a string, not to a %s", d.Name, p.Type)
		}
		if *d.MaxLength < 1 {
			return Param{}, fault.New(fault.Invalid, "parameter %q: max_length must be 1 or more", d.Name)
		}
		p.MaxLength = *d.MaxLength
	}
	for _, b := range []struct {
		name string
		v    *float64
	}{{"min", d.Min}, {"max", d.Max}} {
		if b.v == nil {
			continue
		}
		if p.Type != Integer && p.Type != Number {
			return Param{}, fault.New(fault.Invalid, "parameter %q: %s applies to an integer or a number, not to a %s", d.Name, b.name, p.Type)
		}
		if math.IsNaN(*b.v) || math.IsInf(*b.v, 0) || p.Type == Integer && *b.v != math.Trunc(*b.v) {
			return Param{}, fault.New(fault.Invalid, "parameter %q: %s %v is not a usable bound", d.Name, b.name, *b.v)
		}
	}
	if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
		return Param{}, fault.New(fault.Invalid, "parameter %q: min %v is greater than max %v", d.Name, *p.Min, *p.Max)
	}
	if d.Default != nil {
		if d.Required {
			return Param{}, fault.New(fault.Invalid, "parameter %q is required and has a default: a default makes it optional", d.Name)
		}
		v, err := p.Coerce(*d.Default)
		if err != nil {
			return Param{}, fault.New(fault.Invalid, "default of %s", fault.As(err).Message)
		}
		p.HasDefault, p.Default = true, v
	}
	return p, nil
}

// checkParamName accepts [A-Za-z_][A-Za-z0-9_]*, at most 63 bytes, not a
// reserved name.
func checkParamName(name string) error {
	if name == "" {
		return fault.New(fault.Invalid, "a parameter has no name")
	}
	if len(name) > maxParamName {
		return fault.New(fault.Invalid, "parameter name %q is longer than %d bytes", name, maxParamName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return fault.New(fault.Invalid, "parameter name %q must be a letter or '_' followed by letters, digits or '_'", name)
		}
	}
	if reserved[name] {
		return fault.New(fault.Invalid, "parameter name %q is reserved (the query string's version and format)", name)
	}
	return nil
}

// Coerce checks a caller's value against the parameter and returns the
// value to bind. v is what JSON decoding gives (string, json.Number, bool)
// or a query-string value (string): numbers and booleans may come as their
// text, every other type only as a string. A wrong type, a malformed value
// or one out of bounds is fault.Invalid naming the parameter.
func (p *Param) Coerce(v any) (any, error) {
	bad := func(format string, args ...any) error {
		return fault.New(fault.Invalid, "parameter %q "+format, append([]any{p.Name}, args...)...)
	}
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case json.Number:
		if p.Type != Integer && p.Type != Number {
			return nil, bad("must be a %s, got a number", p.Type)
		}
		text = x.String()
	case bool:
		if p.Type != Boolean {
			return nil, bad("must be a %s, got a boolean", p.Type)
		}
		return x, nil
	case nil:
		return nil, bad("must be a %s, got null (leave it out instead)", p.Type)
	default:
		return nil, bad("must be a single %s value", p.Type)
	}
	switch p.Type {
	case String:
		if p.MaxLength > 0 && utf8.RuneCountInString(text) > p.MaxLength {
			return nil, bad("is longer than %d characters", p.MaxLength)
		}
		if !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 {
			return nil, bad("is not valid UTF-8 text")
		}
		return text, nil
	case Integer:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, bad("must be an integer, got %q", text)
		}
		if p.Min != nil && float64(n) < *p.Min || p.Max != nil && float64(n) > *p.Max {
			return nil, bad("must be %s, got %d", p.bounds(), n)
		}
		return n, nil
	case Number:
		f, ok := decimal(text)
		if !ok {
			return nil, bad("must be a number, got %q", text)
		}
		if p.Min != nil && f < *p.Min || p.Max != nil && f > *p.Max {
			return nil, bad("must be %s, got %s", p.bounds(), text)
		}
		return text, nil
	case Boolean:
		switch strings.ToLower(text) {
		case "true", "t", "1":
			return true, nil
		case "false", "f", "0":
			return false, nil
		}
		return nil, bad("must be true or false, got %q", text)
	case Date:
		t, err := time.Parse(time.DateOnly, text)
		if err != nil {
			return nil, bad("must be a date as 2006-01-02, got %q", text)
		}
		return t.Format(time.DateOnly), nil
	case Timestamp:
		t, err := parseTimestamp(text)
		if err != nil {
			return nil, bad("must be a timestamp as 2006-01-02T15:04:05Z (RFC 3339; without a zone, UTC), got %q", text)
		}
		return t.UTC().Format(time.RFC3339Nano), nil
	case UUID:
		u, err := uuid.Parse(text)
		if err != nil || len(text) != 36 {
			return nil, bad("must be a UUID as 01234567-89ab-cdef-0123-456789abcdef, got %q", text)
		}
		return u.String(), nil
	}
	return nil, bad("has an unknown type %q", p.Type)
}

// bounds describes the parameter's range for a message.
func (p *Param) bounds() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch {
	case p.Min != nil && p.Max != nil:
		return "between " + f(*p.Min) + " and " + f(*p.Max)
	case p.Min != nil:
		return "at least " + f(*p.Min)
	default:
		return "at most " + f(*p.Max)
	}
}

// decimal accepts a finite decimal number in JSON's or SQL's notation and
// returns its approximate value for the bounds.
func decimal(s string) (float64, bool) {
	if s == "" || strings.ContainsAny(s, "xXpP_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// parseTimestamp reads RFC 3339 with or without fractional seconds, and
// the same without a zone (taken as UTC).
func parseTimestamp(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.ParseInLocation("2006-01-02T15:04:05.999999999", s, time.UTC)
}
