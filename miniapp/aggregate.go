package miniapp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// maxSources is how many tables one aggregate may read (mini-app-mcp's
// ATTACH limit).
const maxSources = 10

func init() {
	insertTools("row_restore", &Tool{Name: "query_aggregate", Action: query.Read, ReadOnly: true, Idempotent: true,
		Description: "Aggregate rows of one or several tables: count, sum, avg, min, max or group_by (by_field, optional having filter and inner scalar aggregator). sources {kind: single|multi, value}, optional filter (ListFilter). At most 10 tables.",
		InputSchema: obj(sourcesProp+","+aggregatorProp+`,"filter":{"type":"object","description":"ListFilter applied to every source."}`, "sources", "aggregator"),
		run:         (*Service).queryAggregate})
}

// insertTools puts tools into the tool set before the named one (at the
// end when it is absent), keeping the contract's order.
func insertTools(before string, ts ...*Tool) {
	for i, t := range toolSet {
		if t.Name == before {
			toolSet = append(toolSet[:i], append(ts, toolSet[i:]...)...)
			return
		}
	}
	toolSet = append(toolSet, ts...)
}

const sourcesProp = `"sources":{"type":"object","description":"SourceSpec: {\"kind\":\"single\",\"value\":\"t\"} or {\"kind\":\"multi\",\"value\":[\"t1\",\"t2\"]} (aliases also take {\"kind\":\"pattern\",\"value\":\"glob*\"})."}`
const aggregatorProp = `"aggregator":{"type":"object","description":"{\"kind\":\"count\"} | {\"kind\":\"sum|avg|min|max\",\"field\"} | {\"kind\":\"group_by\",\"by_field\",\"having\"?:ListFilter,\"inner\"?:scalar aggregator}."}`

func aggregatorErr(msg string) *Error {
	return newErr(fault.Invalid, "AGGREGATOR_ERROR", nil, "aggregator error: %s", msg)
}

// sourceSpec is mini-app-mcp's SourceSpec, tagged by kind.
type sourceSpec struct {
	Kind  string          `json:"kind"`
	Value json.RawMessage `json:"value"`
}

// parseSources reads a SourceSpec: the kind and its table names (single,
// multi) or glob (pattern).
func parseSources(raw json.RawMessage) (sourceSpec, []string, string, error) {
	var sp sourceSpec
	if err := json.Unmarshal(raw, &sp); err != nil {
		return sp, nil, "", &ArgsError{Msg: "invalid params: sources: " + err.Error()}
	}
	switch sp.Kind {
	case "single":
		var v string
		if err := json.Unmarshal(sp.Value, &v); err != nil {
			return sp, nil, "", &ArgsError{Msg: "invalid params: sources.value must be a string for kind single"}
		}
		return sp, []string{v}, "", nil
	case "multi":
		var v []string
		if len(sp.Value) > 0 && string(sp.Value) != "null" {
			if err := json.Unmarshal(sp.Value, &v); err != nil {
				return sp, nil, "", &ArgsError{Msg: "invalid params: sources.value must be an array of strings for kind multi"}
			}
		}
		return sp, v, "", nil
	case "pattern":
		var v string
		if err := json.Unmarshal(sp.Value, &v); err != nil {
			return sp, nil, "", &ArgsError{Msg: "invalid params: sources.value must be a string for kind pattern"}
		}
		return sp, nil, v, nil
	}
	return sp, nil, "", &ArgsError{Msg: fmt.Sprintf("invalid params: unknown sources kind `%s`, expected single, multi or pattern", sp.Kind)}
}

// aggregator is mini-app-mcp's Aggregator, tagged by kind.
type aggregator struct {
	Kind    string          `json:"kind"`
	Field   string          `json:"field,omitempty"`
	ByField string          `json:"by_field,omitempty"`
	Having  json.RawMessage `json:"having,omitempty"`
	Inner   *aggregator     `json:"inner,omitempty"`
}

func parseAggregator(raw json.RawMessage) (*aggregator, error) {
	var a aggregator
	d := json.NewDecoder(bytesReader(raw))
	d.UseNumber()
	if err := d.Decode(&a); err != nil {
		return nil, &ArgsError{Msg: "invalid params: aggregator: " + err.Error()}
	}
	return &a, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// check validates the aggregator against the first source's schema and
// returns the fields it reads. inner is set for the inner aggregator of a
// group_by.
func (a *aggregator) check(t *target, inner bool) ([]string, error) {
	known := func(field, what string) error {
		if field == "" {
			return validationErr(what, "field is required for aggregator '"+a.Kind+"'")
		}
		if !identRE.MatchString(field) {
			return validationErr(field, fmt.Sprintf("invalid identifier '%s'", field))
		}
		if _, ok := t.field(field); !ok {
			return validationErr(field, fmt.Sprintf("unknown field '%s' — only schema-registered fields are allowed in aggregator", field))
		}
		return nil
	}
	switch a.Kind {
	case "count":
		return nil, nil
	case "sum", "avg", "min", "max":
		if err := known(a.Field, "field"); err != nil {
			return nil, err
		}
		return []string{a.Field}, nil
	case "group_by":
		if inner {
			return nil, aggregatorErr("nested group_by is not supported")
		}
		if err := known(a.ByField, "by_field"); err != nil {
			return nil, err
		}
		fields := []string{a.ByField}
		if len(a.Having) > 0 && string(a.Having) != "null" {
			if _, err := t.toExpr(a.Having); err != nil {
				return nil, err
			}
			hf, err := filterFields(a.Having)
			if err != nil {
				return nil, err
			}
			fields = append(fields, hf...)
		}
		if a.Inner != nil {
			f, err := a.Inner.check(t, true)
			if err != nil {
				return nil, err
			}
			fields = append(fields, f...)
		}
		return fields, nil
	}
	return nil, aggregatorErr(fmt.Sprintf("unknown aggregator kind '%s'", a.Kind))
}

// filterFields lists the fields a (validated) ListFilter reads.
func filterFields(raw json.RawMessage) ([]string, error) {
	var f listFilter
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, validationErr("filter", "invalid filter: "+err.Error())
	}
	if f.Type == "and" || f.Type == "or" {
		var out []string
		for _, sub := range f.Filters {
			x, err := filterFields(sub)
			if err != nil {
				return nil, err
			}
			out = append(out, x...)
		}
		return out, nil
	}
	return []string{f.Field}, nil
}

func (s *Service) queryAggregate(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		Sources    json.RawMessage `json:"sources"`
		Filter     json.RawMessage `json:"filter"`
		Aggregator json.RawMessage `json:"aggregator"`
	}
	if err := decode(args, &a, "sources", "aggregator"); err != nil {
		return "", err
	}
	_, names, pattern, err := parseSources(a.Sources)
	if err != nil {
		return "", err
	}
	if pattern != "" || len(names) == 0 {
		return "", aggregatorErr("sources must contain at least one table")
	}
	agg, err := parseAggregator(a.Aggregator)
	if err != nil {
		return "", err
	}
	res, err := s.aggregate(ctx, p, names, a.Filter, agg)
	if err != nil {
		return "", err
	}
	return compact(res)
}

// matchPattern resolves a pattern source against the tables the caller
// may see, sorted.
func (s *Service) matchPattern(ctx context.Context, p *auth.Principal, pattern string) ([]string, error) {
	ts, err := s.tables(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range ts {
		if ok, _ := path.Match(pattern, t.table); ok {
			out = append(out, t.table)
		}
	}
	if len(out) == 0 {
		return nil, aggregatorErr(fmt.Sprintf("pattern '%s' matched zero tables", pattern))
	}
	return out, nil
}

// aggregate reads the rows of every source through the pipeline (row
// scopes and column limits apply) and aggregates them. The first source's
// schema validates the filter and the aggregator's fields.
func (s *Service) aggregate(ctx context.Context, p *auth.Principal, names []string, filter json.RawMessage, agg *aggregator) (any, error) {
	if len(names) == 0 {
		return nil, aggregatorErr("sources must contain at least one table")
	}
	if len(names) > maxSources {
		return nil, aggregatorErr(fmt.Sprintf("too many sources: %d (at most %d tables may be aggregated at once)", len(names), maxSources))
	}
	for _, n := range names {
		if !identRE.MatchString(n) {
			return nil, validationErr("sources", fmt.Sprintf("invalid table name '%s': must match [A-Za-z_][A-Za-z0-9_]*", n))
		}
	}
	targets := make([]*target, len(names))
	for i, n := range names {
		t, err := s.resolve(ctx, p, n, "")
		if err != nil {
			return nil, err
		}
		targets[i] = t
	}
	hasFilter := len(filter) > 0 && string(filter) != "null"
	if hasFilter {
		if _, err := targets[0].toExpr(filter); err != nil {
			return nil, err
		}
	}
	fields, err := agg.check(targets[0], false)
	if err != nil {
		return nil, err
	}
	var rows []map[string]any
	for _, t := range targets {
		plan := t.plan(p, query.Read)
		plan.Columns = []string{"id"}
		seen := map[string]bool{}
		for _, f := range fields {
			if _, ok := t.field(f); ok && !seen[f] {
				seen[f] = true
				plan.Columns = append(plan.Columns, f)
			}
		}
		if hasFilter {
			if plan.Where, err = t.toExpr(filter); err != nil {
				return nil, err
			}
		}
		recs, err := s.read(ctx, p, plan)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			rows = append(rows, r.Data)
		}
	}
	return runAggregate(agg, rows), nil
}

type aggResult struct {
	Kind  string `json:"kind"`
	Value any    `json:"value"`
}

type group struct {
	Key   any   `json:"key"`
	Count int64 `json:"count"`
	Value *any  `json:"value,omitempty"`
}

func runAggregate(a *aggregator, rows []map[string]any) aggResult {
	switch a.Kind {
	case "count":
		return aggResult{"count", int64(len(rows))}
	case "group_by":
		idx := map[string]int{}
		var keys []any
		var members [][]map[string]any
		for _, r := range rows {
			k := sqlValue(r[a.ByField])
			id := fmt.Sprintf("%T:%v", k, k)
			if n, ok := k.(json.Number); ok {
				if f, err := n.Float64(); err == nil {
					id = "n:" + strconv.FormatFloat(f, 'g', -1, 64)
				}
			}
			i, ok := idx[id]
			if !ok {
				i = len(keys)
				idx[id] = i
				keys = append(keys, k)
				members = append(members, nil)
			}
			members[i] = append(members[i], r)
		}
		out := []group{}
		for i, k := range keys {
			if len(a.Having) > 0 && string(a.Having) != "null" && !matches(a.Having, members[i][0]) {
				continue
			}
			g := group{Key: k, Count: int64(len(members[i]))}
			if a.Inner != nil {
				v := runAggregate(a.Inner, members[i]).Value
				g.Value = &v
			}
			out = append(out, g)
		}
		sort.SliceStable(out, func(i, j int) bool { return sqlLess(out[i].Key, out[j].Key) })
		return aggResult{"groups", out}
	}
	return aggResult{"value", scalar(a.Kind, a.Field, rows)}
}

// sqlValue is a data value as SQLite's json_extract sees it: booleans are
// 1 and 0, arrays and objects their JSON text.
func sqlValue(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return json.Number("1")
		}
		return json.Number("0")
	case []any, map[string]any, json.RawMessage:
		b, _ := json.Marshal(x)
		return string(b)
	case float64:
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	}
	return v
}

// sqlLess orders values as SQLite does: null, numbers, text.
func sqlLess(a, b any) bool {
	rank := func(v any) int {
		switch v.(type) {
		case nil:
			return 0
		case json.Number:
			return 1
		}
		return 2
	}
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra < rb
	}
	switch x := a.(type) {
	case json.Number:
		fa, _ := x.Float64()
		fb, _ := b.(json.Number).Float64()
		return fa < fb
	case string:
		return x < b.(string)
	}
	return false
}

// scalar computes sum, avg, min or max of a field over rows; null when no
// row has a value. Sums of integers stay integers; avg is always a float.
func scalar(kind, field string, rows []map[string]any) any {
	var vals []any
	for _, r := range rows {
		if v := sqlValue(r[field]); v != nil {
			vals = append(vals, v)
		}
	}
	if kind == "count" {
		return int64(len(rows))
	}
	if len(vals) == 0 {
		return nil
	}
	switch kind {
	case "min", "max":
		best := vals[0]
		for _, v := range vals[1:] {
			if (kind == "min" && sqlLess(v, best)) || (kind == "max" && sqlLess(best, v)) {
				best = v
			}
		}
		return best
	}
	var isum int64
	var fsum float64
	ints, overflow, n := true, false, 0
	for _, v := range vals {
		num, ok := v.(json.Number)
		if !ok {
			continue // text is not summed
		}
		n++
		f, _ := num.Float64()
		fsum += f
		if i, err := num.Int64(); err == nil && ints {
			if (i > 0 && isum > math.MaxInt64-i) || (i < 0 && isum < math.MinInt64-i) {
				overflow = true
			}
			isum += i
		} else {
			ints = false
		}
	}
	if n == 0 {
		if kind == "avg" {
			return nil
		}
		return json.Number("0")
	}
	if kind == "avg" {
		return floatNumber(fsum / float64(n))
	}
	if ints && !overflow {
		return json.Number(strconv.FormatInt(isum, 10))
	}
	return floatNumber(fsum)
}

// floatNumber writes a float as serde_json does: always with a fraction
// or exponent, so 5.0 stays distinct from 5.
func floatNumber(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return json.Number(s)
}

// matches evaluates a validated ListFilter on one row's data, with the
// SQL semantics of the tables: equality on json_extract values, LIKE ASCII
// case-insensitive.
func matches(raw json.RawMessage, data map[string]any) bool {
	var f listFilter
	d := json.NewDecoder(bytesReader(raw))
	d.UseNumber()
	if d.Decode(&f) != nil {
		return false
	}
	eq := func(a, b any) bool {
		a, b = sqlValue(a), sqlValue(b)
		if a == nil || b == nil {
			return false
		}
		return !sqlLess(a, b) && !sqlLess(b, a) && fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b)
	}
	switch f.Type {
	case "eq":
		return eq(data[f.Field], f.Value)
	case "in":
		for _, v := range f.Values {
			if eq(data[f.Field], v) {
				return true
			}
		}
		return false
	case "like":
		s, ok := data[f.Field].(string)
		return ok && f.Pattern != nil && likeMatch(strings.ToLower(*f.Pattern), strings.ToLower(s))
	case "and":
		for _, sub := range f.Filters {
			if !matches(sub, data) {
				return false
			}
		}
		return true
	case "or":
		for _, sub := range f.Filters {
			if matches(sub, data) {
				return true
			}
		}
		return false
	case "array_contains", "array_not_contains":
		arr, _ := data[f.Field].([]any)
		found := false
		for _, v := range arr {
			if eq(v, f.Value) {
				found = true
			}
		}
		return found == (f.Type == "array_contains")
	}
	return false
}

// likeMatch is SQL LIKE without escapes: % any run, _ one character.
func likeMatch(pat, s string) bool {
	p, r := []rune(pat), []rune(s)
	var m func(i, j int) bool
	m = func(i, j int) bool {
		for i < len(p) {
			switch p[i] {
			case '%':
				for k := j; k <= len(r); k++ {
					if m(i+1, k) {
						return true
					}
				}
				return false
			case '_':
				if j >= len(r) {
					return false
				}
			default:
				if j >= len(r) || r[j] != p[i] {
					return false
				}
			}
			i++
			j++
		}
		return j == len(r)
	}
	return m(0, 0)
}
