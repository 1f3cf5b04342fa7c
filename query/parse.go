package query

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
)

// Reserved REST parameter names; every other parameter is a filter.
const (
	ParamColumns = "fc"
	ParamOrder   = "oy"
	ParamSize    = "ps"
	ParamPage    = "pg"
	ParamFormat  = "format"
	ParamAll     = "all"
	ParamSet     = "set"
)

var reserved = map[string]bool{
	ParamColumns: true, ParamOrder: true, ParamSize: true, ParamPage: true,
	ParamFormat: true, ParamAll: true, ParamSet: true,
	ParamOr: true, ParamAnd: true, ParamCount: true, ParamAgg: true, ParamGroup: true,
	ParamOnConflict: true, ParamResolution: true, ParamReturn: true,
}

// IsReserved reports whether a parameter name is not a filter.
func IsReserved(name string) bool { return reserved[name] }

// Limits bound what a request may ask for.
type Limits struct {
	// MaxPageSize caps ps; 0 means no cap.
	MaxPageSize int64
}

func invalid(format string, args ...any) *fault.Error {
	return fault.New(fault.Invalid, format, args...)
}

// FromParams builds the request part of a plan for one action from REST
// parameters (a URL query, or the `query` object of an MCP tool). Filters are
// AND-ed in a stable order (by parameter name, then as given). Reads require
// ps and pg; deletes ignore them; updates take set=col.value parameters.
func FromParams(action Action, params url.Values, lim Limits) (*Plan, error) {
	var nameBuf [8]string // a request's names, without an allocation when few
	names := nameBuf[:0]
	for k := range params {
		names = append(names, k)
	}
	slices.Sort(names)
	var valBuf [8][]string
	vals := valBuf[:0]
	for _, name := range names {
		vals = append(vals, params[name])
	}
	return fromParams(action, names, vals, lim)
}

// fromParams is FromParams over the parameters' names, sorted and each
// once, and their values, aligned with them. (Names and values apart: a
// parameter's name may be kept by the plan, its slice of values is not.)
func fromParams(action Action, names []string, values [][]string, lim Limits) (*Plan, error) {
	r := &planRoom{Plan: Plan{Action: action}}
	p, room := &r.Plan, &r.cond
	var whereBuf [4]Expr
	where := whereBuf[:0]
	for i, name := range names {
		vals := values[i]
		switch name {
		case ParamColumns:
			if action != Read {
				continue
			}
			cols, err := ParseColumns(last(vals))
			if err != nil {
				return nil, err
			}
			p.Columns = cols
		case ParamOrder:
			if action != Read {
				continue
			}
			ord, err := ParseOrder(last(vals))
			if err != nil {
				return nil, err
			}
			p.Order = ord
		case ParamSize, ParamPage, ParamFormat:
			// handled below / by the face
		case ParamOr, ParamAnd:
			for _, v := range vals {
				e, err := ParseLogic(name, v)
				if err != nil {
					return nil, err
				}
				where = append(where, e)
			}
		case ParamCount, ParamAgg, ParamGroup, ParamOnConflict, ParamResolution, ParamReturn:
			if err := p.setOption(action, name, last(vals)); err != nil {
				return nil, err
			}
		case ParamAll:
			all, err := parseBoolParam(name, last(vals))
			if err != nil {
				return nil, err
			}
			p.All = all
		case ParamSet:
			if action != Update {
				return nil, invalid("parameter %q is only valid on an update", ParamSet)
			}
			for _, v := range vals {
				a, err := ParseSet(v)
				if err != nil {
					return nil, err
				}
				p.Set = append(p.Set, a)
			}
		default:
			if name == "" {
				return nil, invalid("empty parameter name")
			}
			for _, v := range vals {
				e, err := parseFilter(name, v, room)
				if err != nil {
					return nil, postgrestHint(name, err)
				}
				room = nil // the first filter's
				where = append(where, e)
			}
		}
	}
	if p.Resolution != "" && len(p.OnConflict) == 0 {
		return nil, invalid("parameter %q needs %q: name the unique columns a duplicate is found by", ParamResolution, ParamOnConflict)
	}
	switch len(where) {
	case 0:
	case 1:
		p.Where = where[0]
	default:
		p.Where = append(And(nil), where...)
	}

	if action == Read {
		size, err := parseCount(names, values, ParamSize, 1)
		if err != nil {
			return nil, err
		}
		if lim.MaxPageSize > 0 && size > lim.MaxPageSize {
			return nil, invalid("parameter %q: page size %d is over the limit of %d", ParamSize, size, lim.MaxPageSize)
		}
		page, err := parseCount(names, values, ParamPage, 0)
		if err != nil {
			return nil, err
		}
		if page > 0 && size > 0 && page > (1<<62)/size {
			return nil, invalid("parameter %q: page number %d is too large", ParamPage, page)
		}
		p.Limit, p.Offset = size, page*size
	}
	return p, nil
}

func last(vals []string) string {
	if len(vals) == 0 {
		return ""
	}
	return vals[len(vals)-1]
}

func parseCount(names []string, values [][]string, name string, min int64) (int64, error) {
	var vals []string
	if i := slices.Index(names, name); i >= 0 {
		vals = values[i]
	}
	if len(vals) == 0 || last(vals) == "" {
		return 0, invalid("parameter %q is required", name)
	}
	n, err := strconv.ParseInt(last(vals), 10, 64)
	if err != nil {
		return 0, invalid("parameter %q: %q is not a whole number", name, last(vals))
	}
	if n < min {
		return 0, invalid("parameter %q must be at least %d, got %d", name, min, n)
	}
	return n, nil
}

func parseBoolParam(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no", "":
		return false, nil
	}
	return false, invalid("parameter %q: %q is not true or false", name, v)
}

// ParseColumns parses fc=a,b,c.
func ParseColumns(raw string) ([]string, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, invalid("parameter %q is empty: name at least one column", ParamColumns)
	}
	parts := strings.Split(raw, ",")
	seen := make(map[string]bool, len(parts))
	out := make([]string, 0, len(parts))
	for _, c := range parts {
		c = strings.TrimSpace(c)
		if c == "" {
			return nil, invalid("parameter %q: empty column name in %q", ParamColumns, raw)
		}
		if seen[c] {
			return nil, invalid("parameter %q: column %q is listed twice", ParamColumns, c)
		}
		seen[c] = true
		out = append(out, c)
	}
	return out, nil
}

// ParseOrder parses oy=a.as,b.ds (as/asc/ds/desc; no direction is ascending).
func ParseOrder(raw string) ([]Order, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, invalid("parameter %q is empty", ParamOrder)
	}
	var out []Order
	for _, term := range strings.Split(raw, ",") {
		term = strings.TrimSpace(term)
		col, dir := term, ""
		if i := strings.LastIndexByte(term, '.'); i >= 0 {
			col, dir = term[:i], term[i+1:]
		}
		if col == "" {
			return nil, invalid("parameter %q: empty column in %q", ParamOrder, term)
		}
		o := Order{Column: col}
		switch strings.ToLower(dir) {
		case "", "as", "asc":
		case "ds", "desc":
			o.Desc = true
		default:
			return nil, invalid("parameter %q: unknown direction %q in %q (use as or ds)", ParamOrder, dir, term)
		}
		out = append(out, o)
	}
	return out, nil
}

// ParseSet parses one set=col.value parameter of an update. An unquoted
// value `null` sets NULL; `"null"` sets the text.
func ParseSet(raw string) (Assign, error) {
	i := strings.IndexByte(raw, '.')
	if i <= 0 {
		return Assign{}, invalid("parameter %q: %q is not column.value", ParamSet, raw)
	}
	col, v := raw[:i], raw[i+1:]
	if v == "null" {
		return Assign{Column: col, Value: nil}, nil
	}
	val, err := unquoteOne(ParamSet, v)
	if err != nil {
		return Assign{}, err
	}
	return Assign{Column: col, Value: val}, nil
}

var opAliases = map[string]Op{
	"eq": Eq, "ne": Ne, "neq": Ne, "gt": Gt, "ge": Ge, "gte": Ge, "lt": Lt, "le": Le, "lte": Le,
	"like": Like, "ilike": ILike, "li": Like, "rli": Like,
	"in": In, "nin": NotIn, "bw": Between, "is": "",
}

// planRoom is a plan with room for its first filter, so that a read by
// key is one allocation (and its value's).
type planRoom struct {
	Plan
	cond condValue
}

// ParseFilter parses one filter parameter column=op.value (optionally
// not.op.value). The column name is returned as given; the engine checks it
// against the catalog.
func ParseFilter(column, raw string) (Expr, error) {
	return parseFilter(column, raw, nil)
}

// parseFilter is ParseFilter with the condition made in cv, when not nil.
func parseFilter(column, raw string, cv *condValue) (Expr, error) {
	negate := false
	if strings.HasPrefix(raw, "not.") {
		negate, raw = true, raw[len("not."):]
	}
	opName, value, found := strings.Cut(raw, ".")
	if !found {
		if _, known := opAliases[opName]; known {
			return nil, invalid("filter %q: operator %q has no value (write %s=%s.VALUE)", column, opName, column, opName)
		}
		return nil, invalid("filter %q: %q is not operator.value", column, raw)
	}
	op, known := opAliases[opName]
	if !known {
		return nil, invalid("filter %q: unknown operator %q", column, opName)
	}
	if cv == nil {
		cv = new(condValue)
	}
	*cv = condValue{Cond: Cond{Column: column, Op: op}}
	c := &cv.Cond
	switch opName {
	case "is":
		switch strings.ToLower(value) {
		case "null":
			c.Op = IsNull
		case "notnull", "not_null", "not.null":
			c.Op = IsNotNull
		case "true":
			c.Op = IsTrue
		case "false":
			c.Op = IsFalse
		default:
			return nil, invalid("filter %q: is.%s is not one of is.null, is.notnull, is.true, is.false", column, value)
		}
	case "in", "nin":
		vals, err := SplitValues(column, value)
		if err != nil {
			return nil, err
		}
		c.Args = make([]any, len(vals))
		for i, v := range vals {
			c.Args[i] = v
		}
	case "bw":
		vals, err := SplitValues(column, value)
		if err != nil {
			return nil, err
		}
		if len(vals) != 2 {
			return nil, invalid("filter %q: bw needs two values (bw.LOW,HIGH), got %d", column, len(vals))
		}
		c.Args = []any{vals[0], vals[1]}
	case "like", "ilike", "li", "rli":
		v, err := unquoteOne(column, value)
		if err != nil {
			return nil, err
		}
		pat := LikePattern(v)
		switch opName {
		case "li":
			pat = "%" + pat + "%"
		case "rli":
			pat = pat + "%"
		}
		c.Args = cv.one(pat)
	default:
		v, err := unquoteOne(column, value)
		if err != nil {
			return nil, err
		}
		c.Args = cv.one(v)
	}
	if negate {
		return Not{X: c}, nil
	}
	return c, nil
}

// condValue is a condition with room for one value, so that a filter of
// one value is one allocation (and its value's).
type condValue struct {
	Cond
	arg [1]any
}

// one makes v the condition's only value and returns its Args.
func (cv *condValue) one(v any) []any {
	cv.arg[0] = v
	return cv.arg[:1:1]
}

// LikePattern turns a filter pattern, where * is the wildcard and \* a
// literal star, into a SQL LIKE pattern escaped with backslash.
func LikePattern(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 4)
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch ch {
		case '\\':
			if i+1 < len(v) && v[i+1] == '*' {
				b.WriteByte('*')
				i++
				continue
			}
			b.WriteString(`\\`)
		case '*':
			b.WriteByte('%')
		case '%', '_':
			b.WriteByte('\\')
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// unquoteOne returns a single value: verbatim, or the content of a
// double-quoted value.
func unquoteOne(param, v string) (string, error) {
	if len(v) == 0 || v[0] != '"' {
		return v, nil
	}
	s, rest, err := readQuoted(param, v)
	if err != nil {
		return "", err
	}
	if rest != "" {
		return "", invalid("filter %q: text after the closing quote in %q", param, v)
	}
	return s, nil
}

// SplitValues splits a comma-separated list; an item may be double-quoted
// (with \" and \\ escapes) to hold commas.
func SplitValues(param, v string) ([]string, error) {
	if v == "" {
		return nil, invalid("filter %q: empty value list", param)
	}
	var out []string
	for {
		if len(v) > 0 && v[0] == '"' {
			s, rest, err := readQuoted(param, v)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
			if rest == "" {
				return out, nil
			}
			if rest[0] != ',' {
				return nil, invalid("filter %q: expected a comma after a quoted value", param)
			}
			v = rest[1:]
			continue
		}
		item, rest, more := strings.Cut(v, ",")
		out = append(out, item)
		if !more {
			return out, nil
		}
		v = rest
	}
}

func readQuoted(param, v string) (val, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			if i+1 >= len(v) {
				return "", "", invalid("filter %q: dangling backslash in %q", param, v)
			}
			i++
			b.WriteByte(v[i])
		case '"':
			return b.String(), v[i+1:], nil
		default:
			b.WriteByte(v[i])
		}
	}
	return "", "", invalid("filter %q: unterminated quote in %q", param, v)
}

// Columns lists every column an expression references, in order of
// appearance (with repeats).
func Columns(e Expr, dst []string) []string {
	switch x := e.(type) {
	case *Cond:
		dst = append(dst, x.Column)
	case And:
		for _, it := range x {
			dst = Columns(it, dst)
		}
	case Or:
		for _, it := range x {
			dst = Columns(it, dst)
		}
	case Not:
		dst = Columns(x.X, dst)
	}
	return dst
}

// Walk calls fn for every Cond in e.
func Walk(e Expr, fn func(*Cond) error) error {
	switch x := e.(type) {
	case *Cond:
		return fn(x)
	case And:
		for _, it := range x {
			if err := Walk(it, fn); err != nil {
				return err
			}
		}
	case Or:
		for _, it := range x {
			if err := Walk(it, fn); err != nil {
				return err
			}
		}
	case Not:
		return Walk(x.X, fn)
	}
	return nil
}
