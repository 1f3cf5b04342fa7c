package engine

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func unknownColumn(name string) *fault.Error {
	return fault.New(fault.Invalid, "unknown column %q", name)
}

// validate checks every identifier of a plan against the table and coerces
// every request value to its column's kind. Values stay values: they are
// only ever bound by the dialect.
func validate(p *query.Plan, t *dialects.Table) error {
	return validateNames(p, t, nil)
}

// validateNames is validate where names, when not nil, are the names of
// t's columns in order, kept by the catalog (grant.names): a read of every
// column gets them as its projection (shared, never written into) instead
// of a copy of its own.
func validateNames(p *query.Plan, t *dialects.Table, names []string) error {
	if p.Where != nil {
		if err := query.Walk(p.Where, func(c *query.Cond) error { return coerceCond(c, t) }); err != nil {
			return err
		}
	}
	if p.IsAggregate() {
		return validateAggregate(p, t)
	}
	switch p.Action {
	case query.Read:
		switch {
		case len(p.Columns) == 0 && names != nil:
			p.Columns = names[:len(names):len(names)] // every one a column of t
		case len(p.Columns) == 0:
			p.Columns = make([]string, len(t.Columns))
			for i, c := range t.Columns {
				p.Columns[i] = c.Name
			}
		default:
			for _, c := range p.Columns {
				if _, ok := t.Column(c); !ok {
					return unknownColumn(c)
				}
			}
		}
		for _, o := range p.Order {
			// A Doc read without a column limit (DocKeys nil) may order by
			// any key of the stored documents (prepareDocs).
			if _, ok := t.Column(o.Column); !ok && (!p.Doc || p.DocKeys != nil) {
				return unknownColumn(o.Column)
			}
		}
	case query.Insert:
		return prepareInsert(p, t)
	case query.Update:
		if len(p.Set) == 0 && len(p.Docs) == 0 {
			return fault.New(fault.Invalid, "an update needs at least one new value")
		}
		seen := map[string]bool{}
		for i := range p.Set {
			a := &p.Set[i]
			col, ok := t.Column(a.Column)
			if !ok {
				return unknownColumn(a.Column)
			}
			if seen[a.Column] {
				return fault.New(fault.Invalid, "column %q is set twice", a.Column)
			}
			seen[a.Column] = true
			v, err := coerceValue(col, a.Value)
			if err != nil {
				return err
			}
			a.Value = v
		}
		if p.Where == nil && !p.All {
			return fault.New(fault.Invalid, "an update needs at least one filter; send all=true to update every row")
		}
	case query.Delete:
		if p.Where == nil && !p.All {
			return fault.New(fault.Invalid, "a delete needs at least one filter; send all=true to delete every row")
		}
	default:
		return fault.New(fault.Invalid, "unknown action")
	}
	return nil
}

// prepareInsert turns Records into Columns and Rows. A key missing from a
// row, or null for a NOT NULL column the database fills itself, becomes
// DEFAULT.
func prepareInsert(p *query.Plan, t *dialects.Table) error {
	if len(p.Records) == 0 && len(p.Rows) == 0 {
		return fault.New(fault.Invalid, "nothing to insert: send at least one row")
	}
	if len(p.Records) == 0 {
		return nil // already in column form (internal callers)
	}
	keys := map[string]bool{}
	for _, r := range p.Records {
		for k := range r {
			keys[k] = true
		}
	}
	cols := make([]string, 0, len(keys))
	for k := range keys {
		cols = append(cols, k)
	}
	sort.Strings(cols)
	meta := make([]*dialects.Column, len(cols))
	for i, k := range cols {
		c, ok := t.Column(k)
		if !ok {
			return unknownColumn(k)
		}
		meta[i] = c
	}
	rows := make([][]any, len(p.Records))
	for i, r := range p.Records {
		row := make([]any, len(cols))
		for j, k := range cols {
			v, present := r[k]
			switch {
			case !present:
				row[j] = query.Default{}
			case v == nil && meta[j].HasDefault && !meta[j].Nullable:
				row[j] = query.Default{}
			default:
				cv, err := coerceValue(meta[j], v)
				if err != nil {
					if len(p.Records) > 1 {
						fe := fault.As(err)
						return fault.New(fe.Kind, "row %d: %s", i, fe.Message)
					}
					return err
				}
				row[j] = cv
			}
		}
		rows[i] = row
	}
	p.Columns, p.Rows, p.Records = cols, rows, nil
	return nil
}

func textual(k dialects.Kind) bool {
	return k == dialects.KindString || k == dialects.KindOther
}

func coerceCond(c *query.Cond, t *dialects.Table) error {
	col, ok := t.Column(c.Column)
	if !ok {
		return unknownColumn(c.Column)
	}
	switch c.Op {
	case query.IsNull, query.IsNotNull:
		return nil
	case query.IsTrue, query.IsFalse:
		if col.Kind != dialects.KindBool {
			return fault.New(fault.Invalid, "filter %q: is.true/is.false need a boolean column, %q is %s", c.Column, c.Column, col.Kind)
		}
		return nil
	case query.Like, query.ILike:
		if !textual(col.Kind) {
			return fault.New(fault.Invalid, "filter %q: like/ilike/li/rli need a text column, %q is %s", c.Column, c.Column, col.Kind)
		}
		return nil
	case query.ArrayContains, query.ArrayNotContains:
		// The value stays as the face typed it: an element of any kind.
		if col.Kind != dialects.KindArray {
			return fault.New(fault.Invalid, "filter %q: %s needs an array column, %q is %s", c.Column, c.Op, c.Column, col.Kind)
		}
		if len(c.Args) != 1 {
			return fault.New(fault.Invalid, "filter %q: %s takes one value, got %d", c.Column, c.Op, len(c.Args))
		}
		switch c.Args[0].(type) {
		case nil, []any, map[string]any:
			return fault.New(fault.Invalid, "filter %q: %s needs a non-null scalar value", c.Column, c.Op)
		}
		return nil
	}
	switch col.Kind {
	case dialects.KindJSON, dialects.KindArray, dialects.KindBytes:
		return fault.New(fault.Invalid, "filter %q: column %q is %s; only is.null and is.notnull apply", c.Column, c.Column, col.Kind)
	}
	for i, a := range c.Args {
		s, _ := a.(string)
		v, err := coerceText(col, s)
		if err != nil {
			return fault.New(fault.Invalid, "filter %q: %s", c.Column, err.Message)
		}
		c.Args[i] = v
	}
	return nil
}

// coerceText turns a filter or set= value into the column's kind.
func coerceText(col *dialects.Column, s string) (any, *fault.Error) {
	switch col.Kind {
	case dialects.KindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fault.New(fault.Invalid, "%q is not an integer", s)
		}
		return n, nil
	case dialects.KindFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fault.New(fault.Invalid, "%q is not a number", s)
		}
		return f, nil
	case dialects.KindDecimal:
		if !isDecimal(s) {
			return nil, fault.New(fault.Invalid, "%q is not a decimal number", s)
		}
		return s, nil
	case dialects.KindBool:
		switch strings.ToLower(s) {
		case "true", "t", "1":
			return true, nil
		case "false", "f", "0":
			return false, nil
		}
		return nil, fault.New(fault.Invalid, "%q is not true or false", s)
	}
	return s, nil
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		// ParseFloat accepts huge values (Inf) but rejects only syntax.
		var ne *strconv.NumError
		if e, ok := err.(*strconv.NumError); ok {
			ne = e
		}
		return ne != nil && ne.Err == strconv.ErrRange
	}
	l := strings.ToLower(s)
	return !strings.Contains(l, "inf") && !strings.Contains(l, "nan") && !strings.HasPrefix(l, "0x")
}

func kindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64, int64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "value"
}

func wrongType(col *dialects.Column, v any) *fault.Error {
	return fault.New(fault.Invalid, "column %q: expected %s, got %s", col.Name, col.Kind, kindName(v))
}

// coerceValue turns a JSON-decoded body value (numbers as json.Number) or a
// set= text into the column's kind.
func coerceValue(col *dialects.Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if s, ok := v.(string); ok {
		switch col.Kind {
		case dialects.KindInt, dialects.KindFloat, dialects.KindDecimal, dialects.KindBool:
			// Numbers sent as strings keep their precision (e.g. bigint ids).
			out, err := coerceText(col, s)
			if err != nil {
				return nil, fault.New(fault.Invalid, "column %q: %s", col.Name, err.Message)
			}
			return out, nil
		case dialects.KindBytes:
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fault.New(fault.Invalid, "column %q: bytes must be base64", col.Name)
			}
			return b, nil
		case dialects.KindJSON:
			return jsonText(col, v)
		case dialects.KindArray:
			return nil, wrongType(col, v)
		}
		return s, nil
	}
	switch col.Kind {
	case dialects.KindInt:
		n, ok := v.(json.Number)
		if !ok {
			return nil, wrongType(col, v)
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return nil, fault.New(fault.Invalid, "column %q: %s is not a 64-bit integer", col.Name, n)
		}
		return i, nil
	case dialects.KindFloat:
		n, ok := v.(json.Number)
		if !ok {
			return nil, wrongType(col, v)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fault.New(fault.Invalid, "column %q: %s is out of range", col.Name, n)
		}
		return f, nil
	case dialects.KindDecimal:
		n, ok := v.(json.Number)
		if !ok {
			return nil, wrongType(col, v)
		}
		return string(n), nil
	case dialects.KindBool:
		b, ok := v.(bool)
		if !ok {
			return nil, wrongType(col, v)
		}
		return b, nil
	case dialects.KindJSON:
		return jsonText(col, v)
	case dialects.KindArray:
		a, ok := v.([]any)
		if !ok {
			return nil, wrongType(col, v)
		}
		return plainArray(a), nil
	}
	return nil, wrongType(col, v)
}

// jsonText hands a JSON column its value as raw JSON.
func jsonText(col *dialects.Column, v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fault.New(fault.Invalid, "column %q: value is not JSON", col.Name)
	}
	return json.RawMessage(b), nil
}

// plainArray replaces json.Number elements by int64 or float64 so drivers
// can bind them.
func plainArray(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				out[i] = n
			} else if f, err := x.Float64(); err == nil {
				out[i] = f
			} else {
				out[i] = string(x)
			}
		case []any:
			out[i] = plainArray(x)
		default:
			out[i] = v
		}
	}
	return out
}
