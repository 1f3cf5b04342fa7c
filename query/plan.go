package query

import "encoding/json"

// Action is what a plan does to its table.
type Action uint8

// The four actions, in CRUD mask order.
const (
	Read Action = iota + 1
	Insert
	Update
	Delete
)

// String names the action as permissions spell it.
func (a Action) String() string {
	switch a {
	case Read:
		return "read"
	case Insert:
		return "create"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return "unknown"
}

// Op is a filter operator, normalized: aliases (neq, gte, lte) and the
// convenience forms (li, rli) are folded by the parser.
type Op string

// Operators of the filter grammar after normalization.
const (
	Eq        Op = "eq"
	Ne        Op = "ne"
	Gt        Op = "gt"
	Ge        Op = "ge"
	Lt        Op = "lt"
	Le        Op = "le"
	Like      Op = "like"  // Args[0] is a LIKE pattern escaped with '\'
	ILike     Op = "ilike" // case-insensitive Like
	In        Op = "in"
	NotIn     Op = "nin"
	Between   Op = "bw" // Args[0] <= col <= Args[1]
	IsNull    Op = "isnull"
	IsNotNull Op = "notnull"
	IsTrue    Op = "istrue"
	IsFalse   Op = "isfalse"
	// ArrayContains is true when the array column holds an element equal
	// to Args[0], one non-null scalar kept as the face typed it (string,
	// bool or a number); the engine does not coerce it. Not in the REST
	// grammar: mini-app's array_contains filter.
	ArrayContains Op = "acontains"
	// ArrayNotContains is the negation of ArrayContains, true too where the
	// column is absent or null.
	ArrayNotContains Op = "anotcontains"
)

// Expr is a boolean condition over one table's columns.
type Expr interface{ isExpr() }

// Cond compares one column. Args are the request values: strings as parsed,
// replaced by typed values once the engine has coerced them to the column's
// kind. They are only ever bound, never rendered into SQL text.
type Cond struct {
	Column string
	Op     Op
	Args   []any
}

// And is true when every item is; an empty And is true.
type And []Expr

// Or is true when any item is; an empty Or is false.
type Or []Expr

// Not negates X.
type Not struct{ X Expr }

func (*Cond) isExpr() {}
func (And) isExpr()   {}
func (Or) isExpr()    {}
func (Not) isExpr()   {}

// Order is one ORDER BY term.
type Order struct {
	Column string
	Desc   bool
}

// Default marks an insert cell the database fills itself (DEFAULT).
type Default struct{}

// Assign sets one column in an update.
type Assign struct {
	Column string
	Value  any
}

// Plan describes one operation on one table. The faces fill the request
// part; the engine validates it against the catalog, adds the grant, and
// hands it to the table's dialect.
type Plan struct {
	Action Action

	// Address, as given by the caller.
	Org, Project        string
	Type, Schema, Table string

	// Columns is the projection of a read (empty = every visible column) or
	// the column list of an insert. The engine may fill an empty projection
	// with a slice it shares with other plans: replace it, never write
	// into its elements.
	Columns []string
	// Where selects rows for read, update and delete; nil selects all.
	Where Expr
	// Order of a read; empty leaves the database's order.
	Order []Order
	// Limit and Offset page a read. Limit 0 means no limit (internal use only).
	Limit, Offset int64

	// Aggregates make a read an aggregate read (see IsAggregate): one row
	// per group of GroupBy (a single row without GroupBy), whose columns
	// are the GroupBy columns, then each aggregate under its Alias.
	// Columns stays empty; Where selects the rows aggregated; Order and
	// the page apply to the groups and name result columns.
	Aggregates []Aggregate
	// GroupBy lists the grouping columns of an aggregate read.
	GroupBy []string
	// Having keeps the groups of an aggregate read that satisfy it; its
	// conditions name GroupBy columns or aggregate aliases.
	Having Expr

	// Records are an insert's rows as a face received them (column → value,
	// JSON-decoded). The engine turns them into Columns and Rows.
	Records []map[string]any
	// Rows of an insert, each aligned with Columns. A cell may be Default{}.
	Rows [][]any
	// IDs, when set, are the ids an insert's rows take, aligned with its
	// rows, on a database that gives its rows their ids itself (mi, where
	// id is no writable column): row_restore re-inserts a deleted row
	// under its old id through the same plan and gates as any insert.
	IDs []string
	// Set holds an update's new values.
	Set []Assign

	// OnConflict, when set, makes an insert an upsert: a row whose values
	// of these columns (a unique key) equal an existing row's is resolved
	// by Resolution instead of failing.
	OnConflict []string
	// Resolution of an upsert: ResolveMerge (update the existing row with
	// the row's values, the default) or ResolveIgnore (keep it).
	Resolution string
	// Count is a read's count mode (CountExact, CountPlanned,
	// CountEstimated), "" for none: the face answers the total next to
	// the page.
	Count string

	// Docs carry whole JSON documents, kept as given, to a database that
	// stores each row as one document (dialects.DocumentStore; mi): keys
	// no column names, explicit nulls and the literal form of numbers (5
	// against 5.0) reach the stored text. An insert sends one object per
	// row and no Records or Rows: the engine derives them from the
	// documents' keys that name columns, so the gates and the row scope
	// judge those as any insert's; the dialect stores the documents and
	// returns each row with its stored document last, in DocColumn (which
	// the engine leaves out for a reader with a column limit). An
	// update sends exactly one object, applied to every selected row as a
	// shallow merge patch (a key set to null is removed), or, with
	// DocReplace, as the row's new document; the engine derives Set from
	// it (with DocReplace, a column it leaves out is set to null unless
	// the database fills it) for the gates, and the dialect applies the
	// document.
	Docs []json.RawMessage

	// The flags are kept together, so that the plan is smaller (one word
	// for the four).

	// All allows a delete or update without a filter.
	All bool
	// Return asks an update or delete for the rows it affected, answered
	// in WriteResult.Returned (an insert returns its rows anyway).
	Return bool
	// DocReplace makes an update's document replace each selected row's
	// document instead of being merged into it. Stored keys outside
	// DocKeys stay.
	DocReplace bool
	// Doc asks a read on a document database for each row's stored
	// document: the dialect answers one more column, DocColumn, after
	// Columns, whose cell is the document as a json.RawMessage, byte for
	// byte as stored (or, with DocKeys, holding only those keys).
	Doc bool
	// DocKeys, set by the engine (any value a face gives is replaced), are
	// the document keys the caller's grant reaches: nil when the grant has
	// no column limit (every key, those no column names too), else the
	// columns it may see. A Doc read answers only these keys; a replacing
	// update keeps the stored keys outside them.
	DocKeys []string
}

// DocColumn is the name of the column a Doc read adds after the plan's
// columns: no table column has an empty name.
const DocColumn = ""
