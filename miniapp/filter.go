package miniapp

import (
	"encoding/json"
	"fmt"

	"github.com/littlebitlabs/minimal/query"
)

// listFilter is mini-app-mcp's ListFilter, tagged by type.
type listFilter struct {
	Type    string            `json:"type"`
	Field   string            `json:"field"`
	Value   any               `json:"value"`
	Values  []any             `json:"values"`
	Pattern *string           `json:"pattern"`
	Filters []json.RawMessage `json:"filters"`
}

// toExpr validates a ListFilter against the table's schema (contract §4)
// and translates it into the pipeline's expression tree. Values become
// text, as the engine coerces them to the column's kind; an array_* element
// keeps its JSON type.
func (t *target) toExpr(raw json.RawMessage) (query.Expr, error) {
	var f listFilter
	d := json.NewDecoder(bytesReader(raw))
	d.UseNumber()
	if err := d.Decode(&f); err != nil {
		return nil, validationErr("filter", "invalid filter: "+jsonProblem("filter", err))
	}
	known := func() (string, error) {
		fi, ok := t.field(f.Field)
		if !ok {
			return "", validationErr(f.Field, fmt.Sprintf(reasonUnknownFilterField, f.Field))
		}
		return fi.Type, nil
	}
	scalar := func(typ string, v any) (string, error) {
		got := jsonType(v)
		if err := scalarValue(f.Field, got); err != nil {
			return "", err
		}
		if got != typ {
			return "", validationErr(f.Field, fmt.Sprintf(reasonFilterTypeMismatch, f.Field, typ, got))
		}
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			return x.String(), nil
		case bool:
			if x {
				return "true", nil
			}
			return "false", nil
		}
		return fmt.Sprint(v), nil
	}
	switch f.Type {
	case "eq":
		typ, err := known()
		if err != nil {
			return nil, err
		}
		s, err := scalar(typ, f.Value)
		if err != nil {
			return nil, err
		}
		return &query.Cond{Column: f.Field, Op: query.Eq, Args: []any{s}}, nil
	case "in":
		typ, err := known()
		if err != nil {
			return nil, err
		}
		if len(f.Values) == 0 {
			return nil, validationErr(f.Field, reasonInEmpty)
		}
		args := make([]any, len(f.Values))
		for i, v := range f.Values {
			if args[i], err = scalar(typ, v); err != nil {
				return nil, err
			}
		}
		return &query.Cond{Column: f.Field, Op: query.In, Args: args}, nil
	case "like":
		typ, err := known()
		if err != nil {
			return nil, err
		}
		if typ != "string" {
			return nil, validationErr(f.Field, fmt.Sprintf(reasonLikeNotString, f.Field, typ))
		}
		if f.Pattern == nil {
			return nil, validationErr(f.Field, "'like' filter requires a pattern")
		}
		// SQLite LIKE, ASCII case-insensitive: the gateway's ilike.
		return &query.Cond{Column: f.Field, Op: query.ILike, Args: []any{*f.Pattern}}, nil
	case "and", "or":
		if len(f.Filters) == 0 {
			if f.Type == "and" {
				return nil, validationErr("filters", reasonAndEmpty)
			}
			return nil, validationErr("filters", reasonOrEmpty)
		}
		items := make([]query.Expr, len(f.Filters))
		for i, sub := range f.Filters {
			x, err := t.toExpr(sub)
			if err != nil {
				return nil, err
			}
			items[i] = x
		}
		if f.Type == "and" {
			return query.And(items), nil
		}
		return query.Or(items), nil
	case "array_contains", "array_not_contains":
		typ, err := known()
		if err != nil {
			return nil, err
		}
		if typ != "array" {
			return nil, validationErr(f.Field, fmt.Sprintf("'%s' filter requires an array field", f.Type))
		}
		if err := scalarValue(f.Field, jsonType(f.Value)); err != nil {
			return nil, err
		}
		// The element keeps its JSON type (json.Number, string, bool): it is
		// compared with the array's elements as they are stored.
		op := query.ArrayContains
		if f.Type == "array_not_contains" {
			op = query.ArrayNotContains
		}
		return &query.Cond{Column: f.Field, Op: op, Args: []any{f.Value}}, nil
	}
	return nil, validationErr("filter", fmt.Sprintf("unknown filter type '%s'", f.Type))
}

// scalarValue refuses a filter value of JSON type got that is not a
// scalar.
func scalarValue(field, got string) error {
	switch got {
	case "null":
		return validationErr(field, fmt.Sprintf(reasonFilterNull, field))
	case "array", "object":
		return validationErr(field, fmt.Sprintf(reasonFilterNotScalar, field))
	}
	return nil
}

// orderTerm is one order_by entry; a member left out is nil.
type orderTerm struct {
	Field     *string `json:"field"`
	Direction *string `json:"direction"`
}

// toOrder reads order_by. In drop-in mode (dropIn) it is mini-app-mcp's:
// each entry needs field and direction, exactly asc or desc, else the
// arguments are invalid (-32602, as its deserializer answers), and the
// field is any key of the stored documents, not checked against the
// schema. On the gateway each field must be a schema field the caller may
// see (the contract's recommendation) and direction defaults to asc.
func (t *target) toOrder(terms []orderTerm, dropIn bool) ([]query.Order, error) {
	var out []query.Order
	for i, o := range terms {
		if dropIn {
			switch {
			case o.Field == nil:
				return nil, &ArgsError{Msg: fmt.Sprintf("invalid params: order_by[%d]: missing field `field`", i)}
			case o.Direction == nil:
				return nil, &ArgsError{Msg: fmt.Sprintf("invalid params: order_by[%d]: missing field `direction`", i)}
			case *o.Direction == "asc":
				out = append(out, query.Order{Column: *o.Field})
			case *o.Direction == "desc":
				out = append(out, query.Order{Column: *o.Field, Desc: true})
			default:
				return nil, &ArgsError{Msg: fmt.Sprintf("invalid params: order_by[%d]: unknown variant `%s`, expected `asc` or `desc`", i, *o.Direction)}
			}
			continue
		}
		field, dir := "", ""
		if o.Field != nil {
			field = *o.Field
		}
		if o.Direction != nil {
			dir = *o.Direction
		}
		if field != "created_at" && field != "updated_at" && field != "id" {
			if _, ok := t.field(field); !ok {
				return nil, validationErr(field, fmt.Sprintf("unknown field '%s' — only schema-registered fields are allowed in order_by", field))
			}
		}
		switch dir {
		case "", "asc", "ASC":
			out = append(out, query.Order{Column: field})
		case "desc", "DESC":
			out = append(out, query.Order{Column: field, Desc: true})
		default:
			return nil, validationErr(field, fmt.Sprintf("order_by direction must be 'asc' or 'desc', got '%s'", dir))
		}
	}
	return out, nil
}

// fieldSelector is {"mode":"all"} | {"mode":"list","fields":[…]}
// ({"type":"All"} accepted too).
type fieldSelector struct {
	Mode   string   `json:"mode"`
	Type   string   `json:"type"`
	Fields []string `json:"fields"`
}

// projection returns the listed fields (nil = all), validated.
func (t *target) projection(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var fs fieldSelector
	if err := json.Unmarshal(raw, &fs); err != nil {
		return nil, validationErr("fields", "invalid field selector: "+jsonProblem("fields", err))
	}
	switch {
	case fs.Mode == "all" || fs.Type == "All" || fs.Type == "all":
		return nil, nil
	case fs.Mode == "list":
		for _, f := range fs.Fields {
			if _, ok := t.field(f); !ok {
				return nil, validationErr(f, fmt.Sprintf("unknown field '%s' — only schema-registered fields are allowed in field projection", f))
			}
		}
		if fs.Fields == nil {
			return []string{}, nil
		}
		return fs.Fields, nil
	}
	return nil, validationErr("fields", "field selector mode must be 'all' or 'list'")
}

// project keeps the listed fields of a record; listed-but-missing keys
// become null.
func project(r record, fields []string) record {
	if fields == nil {
		return r
	}
	_ = r.decode() // a document that does not decode answers its fields as null
	d := make(map[string]any, len(fields))
	for _, f := range fields {
		d[f] = r.Data[f]
	}
	r.Data, r.raw = d, nil
	return r
}
