package store

// Effect of a template rule.
const (
	EffectAllow = "allow"
	EffectDeny  = "deny"
)

// Rule is one line of a permission template: the actions it allows or
// denies on objects matching a `type/schema/table` glob pattern, and
// optionally the only columns it grants (nil grants every column).
type Rule struct {
	Object  string
	Actions []string // create, read, update, delete
	Columns []string // nil: every column
	Effect  string   // EffectAllow (default) or EffectDeny
}

// Template is a named set of rules of one project.
type Template struct {
	ID        string
	ProjectID string
	Name      string
	Rules     []Rule
}

// Binding gives a role the rules of templates, within one project.
type Binding struct {
	Role      string
	Templates []string // template names
}

// Scope restricts a role to the rows of objects matching a pattern that
// satisfy a filter in the REST grammar, with {identity}, {space} and
// {claims.NAME} variables.
type Scope struct {
	Role   string
	Object string
	Filter string
}

// Policy is the whole permission state of one project.
type Policy struct {
	Templates []Template
	Bindings  []Binding
	Scopes    []Scope
	Locks     []Lock
}
