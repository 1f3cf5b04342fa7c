package query

import (
	"strings"
)

// The REST parameters of logic trees, counts, aggregates and write options.
const (
	// ParamOr and ParamAnd hold a logic tree: or=(a.eq.1,and(b.gt.2,c.lt.3)).
	ParamOr  = "or"
	ParamAnd = "and"
	// ParamCount asks a read for its total: exact, planned or estimated.
	ParamCount = "count"
	// ParamAgg makes a read an aggregate read: agg=count(),sum(col).
	ParamAgg = "agg"
	// ParamGroup groups an aggregate read: group=col,col.
	ParamGroup = "group"
	// ParamOnConflict makes an insert an upsert on the named columns.
	ParamOnConflict = "on_conflict"
	// ParamResolution is merge (update the existing row, the default) or
	// ignore (keep it) for an upsert.
	ParamResolution = "resolution"
	// ParamReturn is rows to answer a write's affected rows.
	ParamReturn = "return"
)

// Count modes of a read's total (ParamCount).
const (
	CountExact     = "exact"
	CountPlanned   = "planned"
	CountEstimated = "estimated"
)

// Resolutions of an upsert (Plan.Resolution).
const (
	ResolveMerge  = "merge"
	ResolveIgnore = "ignore"
)

// maxLogicDepth bounds the nesting of a logic tree.
const maxLogicDepth = 32

// ParseLogic parses the value of an or= or and= parameter (name is "or" or
// "and"): a parenthesized, comma-separated list of items, each a condition
// col.op.value (any filter operator, optionally not.op.value) or a nested
// or(…), and(…), not.or(…) or not.and(…). Inside a tree the value list of
// in, nin and bw is parenthesized (id.in.(1,2,3)); a value may be
// double-quoted to hold commas or parentheses. As with every filter, each
// value lands in a Cond's Args, never anywhere else.
func ParseLogic(name, raw string) (Expr, error) {
	return parseLogic(name, name, raw, 0)
}

func parseLogic(param, kind, raw string, depth int) (Expr, error) {
	if depth > maxLogicDepth {
		return nil, invalid("parameter %q: logic nested deeper than %d", param, maxLogicDepth)
	}
	if len(raw) < 2 || raw[0] != '(' || raw[len(raw)-1] != ')' {
		return nil, invalid("parameter %q: %s needs a parenthesized list, e.g. %s=(a.eq.1,b.eq.2)", param, kind, kind)
	}
	items, err := splitItems(param, raw[1:len(raw)-1])
	if err != nil {
		return nil, err
	}
	out := make([]Expr, 0, len(items))
	for _, it := range items {
		e, err := parseItem(param, it, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if kind == ParamOr {
		return Or(out), nil
	}
	return And(out), nil
}

func parseItem(param, it string, depth int) (Expr, error) {
	negate := false
	body := it
	if b, ok := strings.CutPrefix(body, "not."); ok && (strings.HasPrefix(b, "or(") || strings.HasPrefix(b, "and(")) {
		negate, body = true, b
	}
	for _, kind := range []string{ParamOr, ParamAnd} {
		if rest, ok := strings.CutPrefix(body, kind); ok && strings.HasPrefix(rest, "(") {
			e, err := parseLogic(param, kind, rest, depth+1)
			if err != nil {
				return nil, err
			}
			if negate {
				return Not{X: e}, nil
			}
			return e, nil
		}
	}
	col, cond, ok := strings.Cut(it, ".")
	if !ok || col == "" {
		return nil, invalid("parameter %q: %q is not column.operator.value", param, it)
	}
	// A parenthesized value list (in, nin, bw) loses its parentheses.
	op := cond
	if strings.HasPrefix(op, "not.") {
		op = op[len("not."):]
	}
	if name, v, ok := strings.Cut(op, "."); ok && (name == "in" || name == "nin" || name == "bw") {
		if len(v) < 2 || v[0] != '(' || v[len(v)-1] != ')' {
			return nil, invalid("parameter %q: in a logic tree the values of %s are parenthesized: %s.%s.(a,b)", param, name, col, name)
		}
		cond = cond[:len(cond)-len(v)] + v[1:len(v)-1]
	}
	return ParseFilter(col, cond)
}

// splitItems splits a list at the commas outside parentheses and quotes.
func splitItems(param, s string) ([]string, error) {
	if s == "" {
		return nil, invalid("parameter %q: empty list", param)
	}
	var out []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case quoted && ch == '\\':
			i++
		case ch == '"':
			quoted = !quoted
		case quoted:
		case ch == '(':
			depth++
		case ch == ')':
			if depth == 0 {
				return nil, invalid("parameter %q: unbalanced parenthesis", param)
			}
			depth--
		case ch == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if quoted {
		return nil, invalid("parameter %q: unterminated quote", param)
	}
	if depth != 0 {
		return nil, invalid("parameter %q: unbalanced parenthesis", param)
	}
	out = append(out, s[start:])
	for _, it := range out {
		if it == "" {
			return nil, invalid("parameter %q: empty item in the list", param)
		}
	}
	return out, nil
}

var aggFuncs = map[string]AggFunc{"count": AggCount, "sum": AggSum, "avg": AggAvg, "min": AggMin, "max": AggMax}

// ParseAggregates parses agg=count(),sum(col),avg(col),min(col),max(col).
// Each aggregate is named by its function (count(), sum, …) and, for a
// column, func_column (sum_salary); name:func(col) names it otherwise.
func ParseAggregates(raw string) ([]Aggregate, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, invalid("parameter %q is empty: name at least one aggregate, e.g. agg=count()", ParamAgg)
	}
	items, err := splitItems(ParamAgg, raw)
	if err != nil {
		return nil, err
	}
	out := make([]Aggregate, 0, len(items))
	for _, it := range items {
		it = strings.TrimSpace(it)
		alias, call, named := strings.Cut(it, ":")
		if !named {
			call, alias = it, ""
		}
		fn, arg, ok := strings.Cut(call, "(")
		if !ok || !strings.HasSuffix(arg, ")") {
			return nil, invalid("parameter %q: %q is not function(column)", ParamAgg, it)
		}
		f, known := aggFuncs[strings.ToLower(fn)]
		if !known {
			return nil, invalid("parameter %q: unknown aggregate %q (use count, sum, avg, min or max)", ParamAgg, fn)
		}
		a := Aggregate{Func: f, Column: strings.TrimSpace(strings.TrimSuffix(arg, ")")), Alias: alias}
		if a.Column == "" && f != AggCount {
			return nil, invalid("parameter %q: %s needs a column: %s(column)", ParamAgg, f, f)
		}
		if a.Alias == "" {
			a.Alias = string(f)
			if a.Column != "" {
				a.Alias += "_" + a.Column
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// ParseCountMode checks the value of count=.
func ParseCountMode(raw string) (string, error) {
	switch raw {
	case CountExact, CountPlanned, CountEstimated:
		return raw, nil
	}
	return "", invalid("parameter %q: %q is not exact, planned or estimated", ParamCount, raw)
}

// setOption reads one of the parameters of counts, aggregates and write
// options into the plan, refusing it on an action it does not apply to.
func (p *Plan) setOption(action Action, name, v string) error {
	only := func(ok bool, what string) error {
		if !ok {
			return invalid("parameter %q is only valid on %s", name, what)
		}
		return nil
	}
	switch name {
	case ParamCount:
		if err := only(action == Read, "a read"); err != nil {
			return err
		}
		m, err := ParseCountMode(v)
		p.Count = m
		return err
	case ParamAgg:
		if err := only(action == Read, "a read"); err != nil {
			return err
		}
		a, err := ParseAggregates(v)
		p.Aggregates = a
		return err
	case ParamGroup:
		if err := only(action == Read, "a read"); err != nil {
			return err
		}
		cols, err := parseList(name, v)
		p.GroupBy = cols
		return err
	case ParamOnConflict:
		if err := only(action == Insert, "an insert (POST)"); err != nil {
			return err
		}
		cols, err := parseList(name, v)
		p.OnConflict = cols
		return err
	case ParamResolution:
		if err := only(action == Insert, "an insert (POST)"); err != nil {
			return err
		}
		switch v {
		case ResolveMerge, ResolveIgnore:
			p.Resolution = v
			return nil
		}
		return invalid("parameter %q: %q is not merge or ignore", name, v)
	case ParamReturn:
		switch v {
		case "rows":
			p.Return = action != Read
			return only(action != Read, "a write")
		case "minimal", "":
			return nil
		}
		return invalid("parameter %q: %q is not rows or minimal", name, v)
	}
	return nil
}

// parseList parses a comma-separated list of distinct column names.
func parseList(name, raw string) ([]string, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, invalid("parameter %q is empty: name at least one column", name)
	}
	parts := strings.Split(raw, ",")
	out := make([]string, 0, len(parts))
	for _, c := range parts {
		c = strings.TrimSpace(c)
		if c == "" {
			return nil, invalid("parameter %q: empty column name in %q", name, raw)
		}
		for _, o := range out {
			if o == c {
				return nil, invalid("parameter %q: column %q is listed twice", name, c)
			}
		}
		out = append(out, c)
	}
	return out, nil
}
