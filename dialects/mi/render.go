package mi

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Markers stand in Render's insert arguments for the values Source.Write
// generates per row, so that rendering stays deterministic.
const (
	// IDMarker is the argument in place of a row's generated UUID v4.
	IDMarker = "{uuid-v4}"
	// NowMarker is the argument in place of created_at and updated_at, the
	// Unix seconds of the write.
	NowMarker = "{unix-now}"
)

const (
	selectRows      = "SELECT id, data, created_at, updated_at FROM rows"
	selectForWrite  = "SELECT id, data FROM rows"
	insertRow       = "INSERT INTO rows (id, data, created_at, updated_at) VALUES (?, ?, ?, ?)"
	rowPlaceholders = ", (?, ?, ?, ?)"
)

// Dialect renders plans over a mini-app table file. It holds no state: the
// table's schema is not needed to render, because every field is addressed
// through a bound JSON path.
type Dialect struct{}

// Name returns the type code, "mi".
func (Dialect) Name() string { return "mi" }

// Render turns a plan into SQLite SQL and arguments; see the package
// documentation for the shape of each action.
func (Dialect) Render(p *query.Plan) (dialects.Stmt, error) {
	if p == nil {
		return dialects.Stmt{}, fault.New(fault.Internal, "mi: nil plan")
	}
	if err := checkWriteOptions(p); err != nil {
		return dialects.Stmt{}, err
	}
	var r renderer
	switch p.Action {
	case query.Read:
		if p.IsAggregate() {
			if err := r.aggregate(p); err != nil {
				return dialects.Stmt{}, err
			}
			break
		}
		if p.Limit < 0 || p.Offset < 0 {
			return dialects.Stmt{}, fault.New(fault.Invalid, "page size and page number must not be negative")
		}
		r.sb.WriteString(selectRows)
		if err := r.where(p.Where); err != nil {
			return dialects.Stmt{}, err
		}
		if err := r.orderPage(p); err != nil {
			return dialects.Stmt{}, err
		}
	case query.Update:
		if err := checkSet(p.Set, fault.Unsupported); err != nil {
			return dialects.Stmt{}, err
		}
		if err := r.selection(p); err != nil {
			return dialects.Stmt{}, err
		}
	case query.Delete:
		if err := r.selection(p); err != nil {
			return dialects.Stmt{}, err
		}
	case query.Insert:
		var objs []map[string]any
		var err error
		if len(p.Docs) > 0 {
			objs, err = docObjects(p)
		} else {
			objs, err = insertObjects(p, fault.Unsupported)
		}
		if err != nil {
			return dialects.Stmt{}, err
		}
		r.sb.WriteString(insertRow)
		for i, obj := range objs {
			if i > 0 {
				r.sb.WriteString(rowPlaceholders)
			}
			data, err := encodeJSON(obj)
			if err != nil {
				return dialects.Stmt{}, fault.Wrap(fault.Invalid, err, "row cannot be stored as JSON")
			}
			id := any(IDMarker)
			if i < len(p.IDs) {
				id = p.IDs[i]
			}
			r.args = append(r.args, id, data, NowMarker, NowMarker)
		}
	default:
		return dialects.Stmt{}, fault.New(fault.Unsupported, "mi: unknown action %v", p.Action)
	}
	// Reads and the selections of updates and deletes run as rendered;
	// Source.Write inserts row by row, so the multi-row insert shown here
	// is never sent and is not bounded.
	if p.Action != query.Insert && len(r.args) > maxArgs {
		return dialects.Stmt{}, fault.New(fault.TooLarge, "statement has %d values, SQLite accepts at most %d", len(r.args), maxArgs)
	}
	return dialects.Stmt{SQL: r.sb.String(), Args: r.args}, nil
}

// maxArgs is SQLite's SQLITE_MAX_VARIABLE_NUMBER (32766 since 3.32, and in
// the build this package links): a statement binding more is refused as
// TooLarge before it reaches the file, as pg and ma refuse theirs.
const maxArgs = 32766

// filledByDatabase refuses a value for a column mini-app maintains. Render
// answers Unsupported (a plan it cannot express); Source.Write answers
// Invalid, since there it is the caller's mistake.
func filledByDatabase(kind fault.Kind, col string) *fault.Error {
	return fault.New(kind, "column %q is filled by the database", col)
}

// checkSet refuses an update of a database-filled or unnamed column.
func checkSet(set []query.Assign, filled fault.Kind) error {
	for _, a := range set {
		if isBuiltin(a.Column) {
			return filledByDatabase(filled, a.Column)
		}
		if a.Column == "" {
			return fault.New(fault.Invalid, "update names an empty column")
		}
	}
	return nil
}

// insertObjects builds the data object of every insert row from its cells:
// id and the timestamps must be left to the database (else an error of kind
// filled), Default{} omits a field, nil stores an explicit null (as mini-app
// does on create).
func insertObjects(p *query.Plan, filled fault.Kind) ([]map[string]any, error) {
	if len(p.Rows) == 0 {
		return nil, fault.New(fault.Invalid, "no rows to insert")
	}
	seen := make(map[string]bool, len(p.Columns))
	for _, c := range p.Columns {
		if c == "" {
			return nil, fault.New(fault.Invalid, "insert names an empty column")
		}
		if seen[c] {
			return nil, fault.New(fault.Invalid, "column %q is given twice", c)
		}
		seen[c] = true
	}
	objs := make([]map[string]any, len(p.Rows))
	for i, row := range p.Rows {
		if len(row) != len(p.Columns) {
			return nil, fault.New(fault.Invalid, "%shas %d values for %d columns", rowPrefix(p, i), len(row), len(p.Columns))
		}
		obj := make(map[string]any, len(row))
		for j, c := range p.Columns {
			cell := row[j]
			if _, def := cell.(query.Default); def {
				continue
			}
			if isBuiltin(c) {
				if cell != nil {
					return nil, filledByDatabase(filled, c)
				}
				continue
			}
			v, err := toValue(cell)
			if err != nil {
				return nil, fault.Wrap(fault.Invalid, err, "%sfield %q: value cannot be stored as JSON", rowPrefix(p, i), c)
			}
			obj[c] = v
		}
		objs[i] = obj
	}
	return objs, nil
}

// docObjects decodes an insert's documents (query.Plan.Docs), one per row
// (the engine derived Rows from them, for the gates): each must be a JSON
// object. The objects keep every key, null and number as given; keys named
// id, created_at or updated_at are document keys like any other (the row's
// own columns are apart from its data, as in mini-app-mcp).
func docObjects(p *query.Plan) ([]map[string]any, error) {
	if len(p.Rows) > 0 && len(p.Rows) != len(p.Docs) {
		return nil, fault.New(fault.Internal, "mi: an insert of %d documents and %d rows", len(p.Docs), len(p.Rows))
	}
	objs := make([]map[string]any, len(p.Docs))
	for i, d := range p.Docs {
		obj, err := decodeObject(string(d))
		if err != nil {
			return nil, fault.Wrap(fault.Invalid, err, "%sthe document is not a JSON object", docPrefix(p, i))
		}
		objs[i] = obj
	}
	return objs, nil
}

func docPrefix(p *query.Plan, i int) string {
	if len(p.Docs) < 2 {
		return ""
	}
	return "rows[" + strconv.Itoa(i) + "]: "
}

// rowPrefix names the row in a message when an insert has several.
func rowPrefix(p *query.Plan, i int) string {
	if len(p.Rows) < 2 {
		return ""
	}
	return "rows[" + strconv.Itoa(i) + "]: "
}

type renderer struct {
	sb   strings.Builder
	args []any
	// result is set while the conditions and order of an aggregate read
	// name its result columns, not the table's.
	result bool
}

// orderPage writes a read's ORDER BY and its page (LIMIT -1 when only an
// offset is given).
func (r *renderer) orderPage(p *query.Plan) error {
	for i, o := range p.Order {
		if i == 0 {
			r.sb.WriteString(" ORDER BY ")
		} else {
			r.sb.WriteString(", ")
		}
		if err := r.ref(o.Column); err != nil {
			return err
		}
		if o.Desc {
			r.sb.WriteString(" DESC")
		} else {
			r.sb.WriteString(" ASC")
		}
	}
	if p.Limit > 0 || p.Offset > 0 {
		limit := p.Limit
		if limit == 0 {
			limit = -1
		}
		r.sb.WriteString(" LIMIT ? OFFSET ?")
		r.args = append(r.args, limit, p.Offset)
	}
	return nil
}

// selection renders the SELECT of the rows an update or delete acts on.
func (r *renderer) selection(p *query.Plan) error {
	if p.Where == nil && !p.All {
		return fault.New(fault.Invalid, "%s without a filter needs all=true", p.Action)
	}
	r.sb.WriteString(selectForWrite)
	return r.where(p.Where)
}

func (r *renderer) where(e query.Expr) error {
	if e == nil {
		return nil
	}
	r.sb.WriteString(" WHERE ")
	return r.expr(e)
}

// ref writes a column reference: row columns directly, fields as
// json_extract with the path bound.
func (r *renderer) ref(col string) error {
	if col == "" {
		return fault.New(fault.Invalid, "empty column name")
	}
	if r.result {
		return r.ident(col)
	}
	if isBuiltin(col) {
		r.sb.WriteString(col)
		return nil
	}
	r.sb.WriteString("json_extract(data, ?)")
	r.args = append(r.args, jsonPath(col))
	return nil
}

// jsonPath is the SQLite JSON path of a top-level key. The label is a
// quoted JSON string, so dots, brackets, quotes and backslashes in a name
// are taken literally.
func jsonPath(name string) string { return "$." + string(appendString(nil, name)) }

func (r *renderer) expr(e query.Expr) error {
	switch x := e.(type) {
	case *query.Cond:
		if x == nil {
			return fault.New(fault.Invalid, "empty condition")
		}
		return r.cond(x)
	case query.And:
		return r.list(x, " AND ", "1")
	case *query.And:
		if x == nil {
			return fault.New(fault.Invalid, "empty condition")
		}
		return r.list(*x, " AND ", "1")
	case query.Or:
		return r.list(x, " OR ", "0")
	case *query.Or:
		if x == nil {
			return fault.New(fault.Invalid, "empty condition")
		}
		return r.list(*x, " OR ", "0")
	case query.Not:
		return r.not(x.X)
	case *query.Not:
		if x == nil {
			return fault.New(fault.Invalid, "empty condition")
		}
		return r.not(x.X)
	case nil:
		return fault.New(fault.Invalid, "empty condition")
	}
	return fault.New(fault.Unsupported, "mi: unknown filter expression %T", e)
}

func (r *renderer) list(items []query.Expr, sep, empty string) error {
	if len(items) == 0 {
		r.sb.WriteString(empty)
		return nil
	}
	r.sb.WriteByte('(')
	for i, it := range items {
		if i > 0 {
			r.sb.WriteString(sep)
		}
		if err := r.expr(it); err != nil {
			return err
		}
	}
	r.sb.WriteByte(')')
	return nil
}

func (r *renderer) not(x query.Expr) error {
	r.sb.WriteString("NOT (")
	if err := r.expr(x); err != nil {
		return err
	}
	r.sb.WriteByte(')')
	return nil
}

func (r *renderer) cond(c *query.Cond) error {
	want := func(n int) error {
		if len(c.Args) != n {
			return fault.New(fault.Invalid, "operator %s on column %q takes %d value(s), got %d", c.Op, c.Column, n, len(c.Args))
		}
		return nil
	}
	switch c.Op {
	case query.Eq, query.Ne, query.Gt, query.Ge, query.Lt, query.Le:
		if err := want(1); err != nil {
			return err
		}
		v, err := bindValue(c, c.Args[0])
		if err != nil {
			return err
		}
		if err := r.ref(c.Column); err != nil {
			return err
		}
		sym, _ := sqlgen.Comparison(c.Op)
		r.sb.WriteString(sym)
		r.sb.WriteByte('?')
		r.args = append(r.args, v)
	case query.Like, query.ILike:
		if err := want(1); err != nil {
			return err
		}
		pat, ok := c.Args[0].(string)
		if !ok {
			return fault.New(fault.Invalid, "operator %s on column %q needs a text pattern", c.Op, c.Column)
		}
		if err := r.ref(c.Column); err != nil {
			return err
		}
		if c.Op == query.Like {
			// SQLite's LIKE ignores ASCII case; GLOB is the case-sensitive
			// matcher, so like runs as the equivalent GLOB pattern.
			r.sb.WriteString(" GLOB ?")
			r.args = append(r.args, likeToGlob(pat))
		} else {
			r.sb.WriteString(` LIKE ? ESCAPE '\'`)
			r.args = append(r.args, pat)
		}
	case query.In, query.NotIn:
		if len(c.Args) == 0 {
			if c.Op == query.In {
				r.sb.WriteString("0")
			} else {
				r.sb.WriteString("1")
			}
			return nil
		}
		vals := make([]any, len(c.Args))
		for i, a := range c.Args {
			v, err := bindValue(c, a)
			if err != nil {
				return err
			}
			vals[i] = v
		}
		if err := r.ref(c.Column); err != nil {
			return err
		}
		if c.Op == query.In {
			r.sb.WriteString(" IN (")
		} else {
			r.sb.WriteString(" NOT IN (")
		}
		for i := range vals {
			if i > 0 {
				r.sb.WriteString(", ")
			}
			r.sb.WriteByte('?')
		}
		r.sb.WriteByte(')')
		r.args = append(r.args, vals...)
	case query.Between:
		if err := want(2); err != nil {
			return err
		}
		lo, err := bindValue(c, c.Args[0])
		if err != nil {
			return err
		}
		hi, err := bindValue(c, c.Args[1])
		if err != nil {
			return err
		}
		if err := r.ref(c.Column); err != nil {
			return err
		}
		r.sb.WriteString(" BETWEEN ? AND ?")
		r.args = append(r.args, lo, hi)
	case query.IsNull, query.IsNotNull:
		if err := want(0); err != nil {
			return err
		}
		if err := r.ref(c.Column); err != nil {
			return err
		}
		if c.Op == query.IsNull {
			r.sb.WriteString(" IS NULL")
		} else {
			r.sb.WriteString(" IS NOT NULL")
		}
	case query.IsTrue, query.IsFalse:
		if err := want(0); err != nil {
			return err
		}
		word := "true"
		if c.Op == query.IsFalse {
			word = "false"
		}
		if isBuiltin(c.Column) && !r.result {
			r.sb.WriteString(c.Column + " IS " + strings.ToUpper(word))
			return nil
		}
		if r.result {
			// A grouped boolean is json_extract's 1 or 0.
			if err := r.ref(c.Column); err != nil {
				return err
			}
			if word == "true" {
				r.sb.WriteString(" = 1")
			} else {
				r.sb.WriteString(" = 0")
			}
			return nil
		}
		r.sb.WriteString("json_type(data, ?) = '" + word + "'")
		r.args = append(r.args, jsonPath(c.Column))
	case query.ArrayContains, query.ArrayNotContains:
		// json_each over a missing or null field yields no row, so
		// NOT EXISTS holds there too.
		if err := want(1); err != nil {
			return err
		}
		if isBuiltin(c.Column) || r.result {
			return fault.New(fault.Invalid, "operator %s needs an array field, %q is a row column", c.Op, c.Column)
		}
		switch c.Args[0].(type) {
		case []any, map[string]any, json.RawMessage:
			return fault.New(fault.Invalid, "operator %s on column %q needs a scalar value", c.Op, c.Column)
		}
		v, err := bindValue(c, c.Args[0])
		if err != nil {
			return err
		}
		if c.Op == query.ArrayNotContains {
			r.sb.WriteString("NOT ")
		}
		r.sb.WriteString("EXISTS (SELECT 1 FROM json_each(data, ?) WHERE value = ?)")
		r.args = append(r.args, jsonPath(c.Column), v)
	default:
		return fault.New(fault.Unsupported, "operator %q is not supported on mi tables", c.Op)
	}
	return nil
}

// bindValue turns a filter value into what SQLite compares with the result
// of json_extract: 1/0 for booleans, int64 or float64 for numbers, text for
// strings, compact sorted-key JSON text for arrays and objects.
func bindValue(c *query.Cond, v any) (any, error) {
	bad := func(err error) error {
		return fault.Wrap(fault.Invalid, err, "column %q: value cannot be compared", c.Column)
	}
	switch x := v.(type) {
	case nil:
		return nil, fault.New(fault.Invalid, "column %q: operator %s needs a value (use is.null)", c.Column, c.Op)
	case query.Default:
		return nil, fault.New(fault.Invalid, "column %q: default is not a value", c.Column)
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case string:
		return x, nil
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n, nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || !validNumber(string(x)) {
			return nil, bad(err)
		}
		return f, nil
	}
	jv, err := toValue(v)
	if err != nil {
		return nil, bad(err)
	}
	switch jv.(type) {
	case []any, map[string]any:
		s, err := encodeJSON(jv)
		if err != nil {
			return nil, bad(err)
		}
		return s, nil
	case nil:
		return nil, fault.New(fault.Invalid, "column %q: operator %s needs a value (use is.null)", c.Column, c.Op)
	}
	// A scalar reached through a RawMessage or an unusual Go type.
	return bindValue(c, jv)
}

// likeToGlob rewrites a LIKE pattern escaped with '\' into the GLOB pattern
// that matches the same strings, case-sensitively.
func likeToGlob(p string) string {
	var b strings.Builder
	esc := false
	for _, r := range p {
		if esc {
			esc = false
			globLiteral(&b, r)
			continue
		}
		switch r {
		case '\\':
			esc = true
		case '%':
			b.WriteByte('*')
		case '_':
			b.WriteByte('?')
		default:
			globLiteral(&b, r)
		}
	}
	if esc {
		b.WriteByte('\\')
	}
	return b.String()
}

func globLiteral(b *strings.Builder, r rune) {
	switch r {
	case '*':
		b.WriteString("[*]")
	case '?':
		b.WriteString("[?]")
	case '[':
		b.WriteString("[[]")
	default:
		b.WriteRune(r)
	}
}

var _ dialects.Dialect = Dialect{}
