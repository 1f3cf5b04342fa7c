package policy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/littlebitlabs/minimal/fault"
)

// MaxFileSize bounds a policy file; anything larger is refused before it is
// parsed.
const MaxFileSize = 8 << 20

// Defaults of an identity's optional fields.
const (
	DefaultKind    = "user"
	DefaultKeyType = "crud"
)

// File is a policy file: the declared state of one project. A nil policy
// section (Templates, Bindings, Locks, Scopes) is absent and leaves the
// store's section alone; a non-nil one, even empty, replaces it.
type File struct {
	// Org and Project name the project by the abbreviations of the org and
	// the project (as URLs do); apply creates them, with that abbreviation
	// as name too, when missing.
	Org     string `yaml:"org"`
	Project string `yaml:"project"`
	// Spaces to create, and whose MCP switch to set.
	Spaces []Space `yaml:"spaces,omitempty"`
	// Identities to create or update by name.
	Identities []Identity `yaml:"identities,omitempty"`
	// Templates, Bindings, Locks and Scopes are the policy sections.
	Templates []Template `yaml:"templates"`
	Bindings  []Binding  `yaml:"bindings"`
	Locks     []Lock     `yaml:"locks"`
	Scopes    []Scope    `yaml:"scopes"`
	// CustomAPIs, when present (even empty), replaces the project's custom
	// APIs as a whole.
	CustomAPIs []CustomAPI `yaml:"custom_apis"`

	source               string // "policy file" or the path, for messages
	orgLine, projectLine int
}

// Space declares a space of the project.
type Space struct {
	Name string `yaml:"name"`
	// MCP switches the MCP face of the space's identities on or off; nil
	// leaves an existing space as it is and creates a new one with it off.
	MCP *bool `yaml:"mcp,omitempty"`

	line int
}

// Identity declares an identity of the project. Empty Kind means
// DefaultKind, empty KeyType DefaultKeyType, nil Enabled true.
type Identity struct {
	Name    string         `yaml:"name"`
	Kind    string         `yaml:"kind,omitempty"`
	Space   string         `yaml:"space"`
	Roles   []string       `yaml:"roles,flow"`
	Claims  map[string]any `yaml:"claims,omitempty,flow"`
	KeyType string         `yaml:"key_type,omitempty"`
	Enabled *bool          `yaml:"enabled,omitempty"`

	line int
}

// Template is a named, ordered set of rules.
type Template struct {
	Name  string `yaml:"name"`
	Rules []Rule `yaml:"rules"`

	line int
}

// Rule allows or denies actions on the objects matching a pattern,
// optionally only on some columns. Empty Effect means allow; nil Columns
// means every column.
type Rule struct {
	Object  string   `yaml:"object"`
	Actions []string `yaml:"actions,flow"`
	Columns []string `yaml:"columns,omitempty,flow"`
	Effect  string   `yaml:"effect,omitempty"`

	line int
}

// Binding gives a role the rules of templates.
type Binding struct {
	Role      string   `yaml:"role"`
	Templates []string `yaml:"templates,flow"`

	line int
}

// Lock caps what may be done to the objects matching a pattern with a
// CRUD mask ("-r--" freezes writes).
type Lock struct {
	Object string `yaml:"object"`
	Mask   string `yaml:"mask"`

	line int
}

// Scope restricts a role on the objects matching a pattern to the rows
// satisfying a filter.
type Scope struct {
	Role   string `yaml:"role"`
	Object string `yaml:"object"`
	Filter string `yaml:"filter"`

	line int
}

// LoadFile reads and strictly decodes a policy file (see Load); messages
// name the path instead of "policy file".
func LoadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		kind := fault.Invalid
		if errors.Is(err, os.ErrNotExist) {
			kind = fault.NotFound
		}
		return nil, fault.Wrap(kind, err, "%s cannot be read", path)
	}
	defer fh.Close()
	return load(fh, path)
}

// Load strictly decodes one policy file from r: an unknown key, a key
// given twice, a value of the wrong type, an empty input or a second YAML
// document is fault.Invalid naming the line (fault.TooLarge above
// MaxFileSize). It does not Validate.
func Load(r io.Reader) (*File, error) { return load(r, "policy file") }

// load decodes a file; source names it in messages and in those of
// Validate.
func load(r io.Reader, source string) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "%s cannot be read", source)
	}
	if len(data) > MaxFileSize {
		return nil, fault.New(fault.TooLarge, "%s is larger than %d bytes", source, MaxFileSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fault.New(fault.Invalid, "%s is empty", source)
		}
		return nil, yamlErr(source, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlErr(source, err)
		}
		return nil, fault.New(fault.Invalid, "%s: line %d: a second YAML document; give one project per file", source, extra.Line)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlErr(source, err)
	}
	f.source = source
	f.setLines(&doc)
	return &f, nil
}

// yamlErr turns a decoding error into fault.Invalid. yaml.v3 already puts
// the line and the offending key in its text ("line 5: field colour not
// found in type policy.Identity"), which is what the user needs; the
// message carries it whole, so the cause is not kept to be printed twice.
func yamlErr(source string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return fault.New(fault.Invalid, "%s: %s", source, strings.Join(te.Errors, "; "))
	}
	return fault.New(fault.Invalid, "%s is not valid YAML: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
}

// setLines records the line of every list item, for validation messages.
func (f *File) setLines(doc *yaml.Node) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return
	}
	top := doc.Content[0]
	items := func(key string) []*yaml.Node {
		if v := lookup(top, key); v != nil && v.Kind == yaml.SequenceNode {
			return v.Content
		}
		return nil
	}
	if v := lookup(top, "org"); v != nil {
		f.orgLine = v.Line
	}
	if v := lookup(top, "project"); v != nil {
		f.projectLine = v.Line
	}
	for i, n := range items("spaces") {
		if i < len(f.Spaces) {
			f.Spaces[i].line = n.Line
		}
	}
	for i, n := range items("identities") {
		if i < len(f.Identities) {
			f.Identities[i].line = n.Line
		}
	}
	for i, n := range items("templates") {
		if i >= len(f.Templates) {
			break
		}
		f.Templates[i].line = n.Line
		if rules := lookup(n, "rules"); rules != nil && rules.Kind == yaml.SequenceNode {
			for j, r := range rules.Content {
				if j < len(f.Templates[i].Rules) {
					f.Templates[i].Rules[j].line = r.Line
				}
			}
		}
	}
	for i, n := range items("bindings") {
		if i < len(f.Bindings) {
			f.Bindings[i].line = n.Line
		}
	}
	for i, n := range items("locks") {
		if i < len(f.Locks) {
			f.Locks[i].line = n.Line
		}
	}
	for i, n := range items("scopes") {
		if i < len(f.Scopes) {
			f.Scopes[i].line = n.Line
		}
	}
	f.customAPILines(top)
}

// lookup returns the value of key in a mapping node, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Marshal renders f as YAML in the layout of the documentation: rules,
// spaces, bindings, locks and scopes one flow mapping per line, identities
// as block mappings. The policy sections are always written, empty ones as
// [], so applying the output replaces them.
func (f *File) Marshal() ([]byte, error) {
	out := *f
	if out.Templates == nil {
		out.Templates = []Template{}
	}
	if out.Bindings == nil {
		out.Bindings = []Binding{}
	}
	if out.Locks == nil {
		out.Locks = []Lock{}
	}
	if out.Scopes == nil {
		out.Scopes = []Scope{}
	}
	if out.CustomAPIs == nil {
		out.CustomAPIs = []CustomAPI{}
	}
	var n yaml.Node
	if err := n.Encode(&out); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "policy: encode file")
	}
	flowItems := func(seq *yaml.Node) {
		if seq != nil && seq.Kind == yaml.SequenceNode {
			for _, it := range seq.Content {
				it.Style = yaml.FlowStyle
			}
		}
	}
	for _, key := range []string{"spaces", "bindings", "locks", "scopes"} {
		flowItems(lookup(&n, key))
	}
	// Masks such as -r-- are valid plain scalars but read better quoted.
	quote := func(seq *yaml.Node, key string) {
		if seq != nil && seq.Kind == yaml.SequenceNode {
			for _, it := range seq.Content {
				if v := lookup(it, key); v != nil {
					v.Style = yaml.DoubleQuotedStyle
				}
			}
		}
	}
	flowParams(&n)
	quote(lookup(&n, "locks"), "mask")
	quote(lookup(&n, "identities"), "key_type")
	if ts := lookup(&n, "templates"); ts != nil {
		for _, t := range ts.Content {
			flowItems(lookup(t, "rules"))
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "policy: encode file")
	}
	if err := enc.Close(); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "policy: encode file")
	}
	return buf.Bytes(), nil
}
