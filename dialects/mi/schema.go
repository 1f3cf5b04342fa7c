package mi

import (
	"errors"
	"fmt"
	"log/slog"

	"gopkg.in/yaml.v3"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// The three columns every mini-app row has outside its data object.
const (
	colID        = "id"
	colCreatedAt = "created_at"
	colUpdatedAt = "updated_at"
)

func isBuiltin(name string) bool {
	return name == colID || name == colCreatedAt || name == colUpdatedAt
}

// The field types schema.yaml allows.
var fieldKinds = map[string]dialects.Kind{
	"string":  dialects.KindString,
	"number":  dialects.KindFloat,
	"boolean": dialects.KindBool,
	"array":   dialects.KindArray,
	"object":  dialects.KindJSON,
}

// field is one schema.yaml field.
type field struct {
	Name     string
	Type     string
	Required bool
}

// schema is a parsed schema.yaml. Only what the gateway needs is kept;
// title, description and dump are mini-app's business.
type schema struct {
	Table   string // the yaml `table`, used as _row_history.table_name
	Fields  []field
	History bool // false when the yaml says history: off
	byName  map[string]int
	columns []dialects.Column
}

// yamlSchema mirrors schema.yaml. Unknown keys are ignored, as mini-app-mcp
// ignores them: strict decoding would refuse directories it accepts.
type yamlSchema struct {
	Table   *string      `yaml:"table"`
	Fields  *[]yamlField `yaml:"fields"`
	History *string      `yaml:"history"`
	Dump    *struct {
		Sync *string `yaml:"sync"`
	} `yaml:"dump"`
}

type yamlField struct {
	Name     *string `yaml:"name"`
	Type     *string `yaml:"type"`
	Required bool    `yaml:"required"`
}

// parseSchema parses and checks schema.yaml the way mini-app-mcp does: table
// and fields are required, every field needs a name and a known type.
func parseSchema(b []byte) (*schema, error) {
	var y yamlSchema
	if err := yaml.Unmarshal(b, &y); err != nil {
		return nil, err
	}
	if y.Table == nil {
		return nil, errors.New("missing key `table`")
	}
	if y.Fields == nil {
		return nil, errors.New("missing key `fields`")
	}
	s := &schema{Table: *y.Table, History: true, byName: map[string]int{}}
	if y.History != nil {
		switch *y.History {
		case "full":
		case "off":
			s.History = false
		default:
			return nil, fmt.Errorf("history: unknown value %q, expected full or off", *y.History)
		}
	}
	// dump.sync is write-only or bidirectional; any other value fails
	// the schema, so the table is not mounted, as in mini-app-mcp.
	if y.Dump != nil && y.Dump.Sync != nil && *y.Dump.Sync != "write-only" && *y.Dump.Sync != "bidirectional" {
		return nil, fmt.Errorf("dump.sync: unknown value %q, expected write-only or bidirectional", *y.Dump.Sync)
	}
	for i, f := range *y.Fields {
		if f.Name == nil {
			return nil, fmt.Errorf("fields[%d]: missing key `name`", i)
		}
		if f.Type == nil {
			return nil, fmt.Errorf("fields[%d]: missing key `type`", i)
		}
		if _, ok := fieldKinds[*f.Type]; !ok {
			return nil, fmt.Errorf("fields[%s].type: unknown type %q", *f.Name, *f.Type)
		}
		s.Fields = append(s.Fields, field{Name: *f.Name, Type: *f.Type, Required: f.Required})
	}
	s.columns = []dialects.Column{
		{Name: colID, DBType: "TEXT", Kind: dialects.KindString, PrimaryKey: true, HasDefault: true, Default: "uuid v4"},
		{Name: colCreatedAt, DBType: "INTEGER", Kind: dialects.KindInt, HasDefault: true, Default: "unix seconds now"},
		{Name: colUpdatedAt, DBType: "INTEGER", Kind: dialects.KindInt, HasDefault: true, Default: "unix seconds now"},
	}
	for i, f := range s.Fields {
		if _, dup := s.byName[f.Name]; dup {
			continue // validation checks every entry; the column shows the first
		}
		s.byName[f.Name] = i
		if !exposable(f.Name) {
			slog.Warn("mi: field cannot be served as a column", "table", s.Table, "field", f.Name)
			continue
		}
		s.columns = append(s.columns, dialects.Column{
			Name:     f.Name,
			DBType:   f.Type,
			Kind:     fieldKinds[f.Type],
			Nullable: !f.Required,
		})
	}
	return s, nil
}

// exposable reports whether a field can be a column: it needs a name, and
// one that does not shadow a row column.
func exposable(name string) bool {
	return name != "" && !isBuiltin(name)
}

// column returns the named column of the table.
func (s *schema) column(name string) (dialects.Column, bool) {
	for _, c := range s.columns {
		if c.Name == name {
			return c, true
		}
	}
	return dialects.Column{}, false
}

// validate checks a row's data object as mini-app-mcp does: in field order,
// a required field must be present and non-null, a present non-null value
// must have the field's JSON type. Unknown keys are accepted. The document
// holds fields a caller's template may hide, so a refusal is a
// dialects.Violation: the engine tells its field's name (Named) only to a
// caller who may see the field.
func (s *schema) validate(obj map[string]any) *fault.Error {
	for _, f := range s.Fields {
		v, ok := obj[f.Name]
		if !ok || v == nil {
			if f.Required {
				return violation(dialects.NotNullViolation, f.Name, fmt.Sprintf("field %q: required field missing", f.Name))
			}
			continue
		}
		if got := jsonType(v); got != f.Type {
			return violation(dialects.CheckViolation, f.Name, fmt.Sprintf("field %q: expected type '%s', got '%s'", f.Name, f.Type, got))
		}
	}
	return nil
}

// required reports whether the named field is required.
func (s *schema) required(name string) bool {
	for _, f := range s.Fields {
		if f.Name == name && f.Required {
			return true
		}
	}
	return false
}

// violation is the Invalid fault of a document the schema refuses over
// field: named is mini-app-mcp's message, which names the field.
func violation(kind dialects.ViolationKind, field, named string) *fault.Error {
	v := &dialects.Violation{Kind: kind, Column: field, Named: named, Err: errors.New(named)}
	return fault.Wrap(fault.Invalid, v, "%s", v.Message())
}

// prefixed puts prefix (which row of several) before both of ferr's
// messages: the one any caller reads and the one naming the field.
func prefixed(ferr *fault.Error, prefix string) *fault.Error {
	ferr.Message = prefix + ferr.Message
	var v *dialects.Violation
	if errors.As(ferr, &v) && v.Named != "" {
		v.Named = prefix + v.Named
	}
	return ferr
}
