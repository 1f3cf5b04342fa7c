package mcp

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// kind is the JSON shape of a tool argument.
type kind uint8

const (
	kString  kind = iota // non-empty string
	kInteger             // integer, at least param.min
	kBoolean
	kQuery  // object of REST parameters: string, number, boolean or an array of them
	kObject // object of column → any JSON value, at least one member
	kRows   // non-empty array of objects
)

// param is one argument of a tool. A tool's params are its whole input:
// they give the published JSON Schema and the strict decoding, so the two
// cannot drift apart.
type param struct {
	name     string
	kind     kind
	required bool
	min      int64
	desc     string
	// header, when set, is the argument's x-mcp-header annotation: a
	// 2026-07-28 client mirrors it into the Mcp-Param-<header> header.
	header string
}

// schema returns the JSON Schema of a tool's input: every argument typed
// and described, required ones listed, no other property allowed.
func schema(params []param) json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for _, p := range params {
		var s map[string]any
		switch p.kind {
		case kString:
			s = map[string]any{"type": "string", "minLength": 1}
		case kInteger:
			s = map[string]any{"type": "integer", "minimum": p.min}
		case kBoolean:
			s = map[string]any{"type": "boolean"}
		case kQuery:
			scalar := map[string]any{"type": []string{"string", "number", "boolean"}}
			s = map[string]any{"type": "object", "additionalProperties": map[string]any{
				"anyOf": []any{scalar, map[string]any{"type": "array", "items": scalar}},
			}}
		case kObject:
			s = map[string]any{"type": "object", "minProperties": 1}
		case kRows:
			s = map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "object"}}
		}
		s["description"] = p.desc
		if p.header != "" {
			s["x-mcp-header"] = p.header
		}
		props[p.name] = s
		if p.required {
			required = append(required, p.name)
		}
	}
	b, err := json.Marshal(map[string]any{
		"type": "object", "properties": props, "required": required, "additionalProperties": false,
	})
	if err != nil {
		panic(err) // the schemas are built from constants
	}
	return b
}

// withParam returns the JSON Schema of a tool's input (an object schema
// with properties) with p added as an optional property.
func withParam(in json.RawMessage, p param) json.RawMessage {
	var s map[string]json.RawMessage
	var props map[string]json.RawMessage
	if json.Unmarshal(in, &s) != nil || json.Unmarshal(s["properties"], &props) != nil {
		panic("mcp: a tool's input schema is not an object schema") // built from constants
	}
	if props == nil {
		props = map[string]json.RawMessage{}
	}
	var one struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema([]param{p}), &one)
	props[p.name] = one.Properties[p.name]
	s["properties"], _ = json.Marshal(props)
	out, _ := json.Marshal(s)
	return out
}

// withoutParam returns the input schema in without the property name.
func withoutParam(in json.RawMessage, name string) json.RawMessage {
	var s map[string]json.RawMessage
	var props map[string]json.RawMessage
	if json.Unmarshal(in, &s) != nil || json.Unmarshal(s["properties"], &props) != nil {
		panic("mcp: a tool's input schema is not an object schema") // built from constants
	}
	if _, ok := props[name]; !ok {
		return in
	}
	delete(props, name)
	s["properties"], _ = json.Marshal(props)
	out, _ := json.Marshal(s)
	return out
}

// args are decoded, checked tool arguments. Numbers are json.Number, so
// values reach the engine exact, as REST bodies do.
type args map[string]any

func (a args) str(name string) string         { s, _ := a[name].(string); return s }
func (a args) flag(name string) bool          { b, _ := a[name].(bool); return b }
func (a args) obj(name string) map[string]any { m, _ := a[name].(map[string]any); return m }

func (a args) int(name string) int64 {
	n, _ := a[name].(json.Number)
	i, _ := n.Int64()
	return i
}

func (a args) rows(name string) []map[string]any {
	raw, _ := a[name].([]any)
	out := make([]map[string]any, len(raw))
	for i, r := range raw {
		out[i], _ = r.(map[string]any)
	}
	return out
}

func invalid(format string, v ...any) *fault.Error { return fault.New(fault.Invalid, format, v...) }

// decodeArgs decodes a tool's arguments (valid JSON text, as
// rawArguments gives them; empty means none) and checks them against its
// params: an unknown argument, a missing required one or one of the wrong
// shape is a fault.Invalid naming it.
func decodeArgs(tool string, params []param, raw []byte) (args, error) {
	a := args{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		m, ok := decodeValue(t).(map[string]any) // as encoding/json with UseNumber
		if !ok {
			return nil, invalid("arguments must be a JSON object")
		}
		a = m
	}
	for k := range a {
		if !hasParam(params, k) {
			return nil, unknownArgument(tool, params, a)
		}
	}
	// The arguments sent are checked before the ones missing: a wrong one
	// is the more telling refusal.
	for _, p := range params {
		if v, ok := a[p.name]; ok && v != nil {
			if err := p.check(v); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range params {
		if v, ok := a[p.name]; !ok || v == nil {
			if p.required {
				return nil, invalid("missing required argument %q", p.name)
			}
			delete(a, p.name)
		}
	}
	return a, nil
}

// unknownArgument is the refusal of arguments a, one of which params do
// not name: the first such name in sorted order.
func unknownArgument(tool string, params []param, a args) error {
	names := make([]string, 0, len(a))
	for k := range a {
		if !hasParam(params, k) {
			names = append(names, k)
		}
	}
	return invalid("unknown argument %q: %s takes %s", slices.Min(names), tool, paramList(params))
}

func hasParam(params []param, name string) bool {
	for _, p := range params {
		if p.name == name {
			return true
		}
	}
	return false
}

func paramList(params []param) string {
	if len(params) == 0 {
		return "no arguments"
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

func (p param) check(v any) error {
	switch p.kind {
	case kString:
		s, ok := v.(string)
		if !ok {
			return invalid("argument %q must be a string", p.name)
		}
		if s == "" {
			return invalid("argument %q is empty", p.name)
		}
	case kInteger:
		n, ok := v.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			return invalid("argument %q must be an integer", p.name)
		}
		if i < p.min {
			return invalid("argument %q must be at least %d", p.name, p.min)
		}
	case kBoolean:
		if _, ok := v.(bool); !ok {
			return invalid("argument %q must be true or false", p.name)
		}
	case kQuery:
		m, ok := v.(map[string]any)
		if !ok {
			return invalid("argument %q must be an object of REST parameters, e.g. {\"oy\":\"id.as\"}", p.name)
		}
		for k, x := range m {
			if _, err := paramValues(p.name, k, x); err != nil {
				return err
			}
		}
	case kObject:
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			return invalid("argument %q must be an object of column to value with at least one member", p.name)
		}
	case kRows:
		rows, ok := v.([]any)
		if !ok || len(rows) == 0 {
			return invalid("argument %q must be a non-empty array of row objects", p.name)
		}
		for i, r := range rows {
			if _, ok := r.(map[string]any); !ok {
				return invalid("row %d of argument %q is not an object", i, p.name)
			}
		}
	}
	return nil
}

// paramValues turns one member of a query object into the values of a REST
// parameter: a string as it is, a number as its literal, a boolean as
// true/false, an array as the parameter repeated.
func paramValues(arg, key string, v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case json.Number:
		return []string{x.String()}, nil
	case bool:
		if x {
			return []string{"true"}, nil
		}
		return []string{"false"}, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if _, nested := e.([]any); nested {
				return nil, invalid("%s[%q] holds a nested array", arg, key)
			}
			s, err := paramValues(arg, key, e)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	return nil, invalid("%s[%q] must be a string, a number, a boolean or an array of them", arg, key)
}

// queryValues turns a tool's query object into the url.Values that
// query.FromParams reads, exactly as a REST query string would give them.
// The REST parameters that have their own argument (ps, pg, all, set) or no
// meaning here (format; fc and oy outside reads) are refused, so there is
// one way to say each thing.
func queryValues(action query.Action, q map[string]any) (url.Values, error) {
	vals := url.Values{}
	for k, v := range q {
		switch k {
		case query.ParamSize, query.ParamPage:
			if action == query.Read {
				return nil, invalid("query key %q is not used here: send the page_size and page_number arguments", k)
			}
			return nil, invalid("query key %q is not used here: writes are not paged", k)
		case query.ParamFormat:
			return nil, invalid("query key %q is not used here: tool answers are JSON", k)
		case query.ParamAll:
			return nil, invalid("query key %q is not used here: send the all argument", k)
		case query.ParamSet:
			return nil, invalid("query key %q is not used here: send the values argument", k)
		case query.ParamColumns, query.ParamOrder:
			if action != query.Read {
				return nil, invalid("query key %q only applies to auto_read_rows", k)
			}
		}
		s, err := paramValues("query", k, v)
		if err != nil {
			return nil, err
		}
		vals[k] = s
	}
	return vals, nil
}
