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

// aggregate runs the aggregator in the database: one aggregate read per
// source through the engine (its gates, row scope, column limits and
// audit), which the mi source has SQLite compute, so no row is held here.
// The first source's schema validates the filter and the aggregator's
// fields; a field another source lacks reads as null there, as
// json_extract reads it. The answers of several sources are combined as
// SQLite combines them over their UNION ALL: counts and sums added (a sum
// stays an integer until a real or an overflow), a mean from the sums and
// the counts of values, least and greatest in SQLite's order (null,
// numbers, text).
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
	if _, err := agg.check(targets[0], false); err != nil {
		return nil, err
	}
	scalarAgg := agg
	if agg.Kind == "group_by" {
		scalarAgg = agg.Inner
		if len(agg.Having) > 0 && string(agg.Having) != "null" {
			fields, err := filterFields(agg.Having)
			if err != nil {
				return nil, err
			}
			for _, f := range fields {
				if f != agg.ByField {
					return nil, aggregatorErr(fmt.Sprintf("having may test only the group key '%s', not '%s'", agg.ByField, f))
				}
			}
		}
	}
	var total partial
	groups := map[string]*partial{}
	var keys []string
	for _, t := range targets {
		plan, ok, err := aggregatePlan(p, t, filter, agg, scalarAgg)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // no row of this source can pass the having filter
		}
		err = s.eachGroup(ctx, p, plan, func(part partial) {
			if agg.Kind != "group_by" {
				total.merge(part, scalarAgg)
				return
			}
			id := keyID(part.key)
			g, seen := groups[id]
			if !seen {
				g = &partial{key: part.key}
				groups[id] = g
				keys = append(keys, id)
			}
			g.merge(part, scalarAgg)
		})
		if err != nil {
			return nil, err
		}
	}
	switch agg.Kind {
	case "count":
		return aggResult{"count", total.n}, nil
	case "group_by":
		sort.SliceStable(keys, func(i, j int) bool { return sqlLess(groups[keys[i]].key, groups[keys[j]].key) })
		out := make([]group, 0, len(keys))
		for _, id := range keys {
			g := groups[id]
			gr := group{Key: jsonValue(g.key), Count: g.n}
			if scalarAgg != nil {
				v := g.value(scalarAgg)
				gr.Value = &v
			}
			out = append(out, gr)
		}
		return aggResult{"groups", out}, nil
	}
	return aggResult{"value", total.value(agg)}, nil
}

// Result column names of the aggregate reads; aliasFor keeps them apart
// from the table's own fields.
const (
	aliasRows   = "rows"
	aliasValue  = "value"
	aliasValues = "values"
)

// aliasFor is base, or base behind as many underscores as it takes to
// name no column of the table.
func aliasFor(t *target, base string) string {
	for {
		if _, clash := t.info.Field(base); !clash && base != "id" && base != "created_at" && base != "updated_at" {
			return base
		}
		base = "_" + base
	}
}

// aggregatePlan is the aggregate read of one source: rows counted (by
// group with group_by), and what the scalar aggregator sc needs of its
// field when the source has it — sum, min or max, or for avg the sum and
// the count of values. ok is false when no group of this source can pass
// the having filter (its rows lack the group key, which is then null).
func aggregatePlan(p *auth.Principal, t *target, filter json.RawMessage, agg, sc *aggregator) (*query.Plan, bool, error) {
	plan := t.plan(p, query.Read)
	if len(filter) > 0 && string(filter) != "null" {
		w, err := t.toExpr(filter)
		if err != nil {
			return nil, false, err
		}
		plan.Where = w
	}
	plan.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: aliasFor(t, aliasRows)}}
	if agg.Kind == "group_by" {
		_, has := t.field(agg.ByField)
		having := len(agg.Having) > 0 && string(agg.Having) != "null"
		switch {
		case has:
			plan.GroupBy = []string{agg.ByField}
			if having {
				h, err := t.toExpr(agg.Having)
				if err != nil {
					return nil, false, err
				}
				plan.Having = h
			}
		case having:
			return nil, false, nil
		}
	}
	if sc == nil || sc.Kind == "count" {
		return plan, true, nil
	}
	if _, has := t.field(sc.Field); !has {
		return plan, true, nil
	}
	fn := query.AggFunc(sc.Kind)
	if sc.Kind == "avg" {
		fn = query.AggSum
	}
	plan.Aggregates = append(plan.Aggregates, query.Aggregate{Func: fn, Column: sc.Field, Alias: aliasFor(t, aliasValue)})
	if sc.Kind == "avg" {
		plan.Aggregates = append(plan.Aggregates, query.Aggregate{Func: query.AggCount, Column: sc.Field, Alias: aliasFor(t, aliasValues)})
	}
	return plan, true, nil
}

// eachGroup runs an aggregate plan built by aggregatePlan and hands each
// result row to fn as a partial.
func (s *Service) eachGroup(ctx context.Context, p *auth.Principal, plan *query.Plan, fn func(partial)) error {
	res, err := s.eng.Execute(ctx, p, plan)
	if err != nil {
		return err
	}
	defer res.Rows.Close()
	grouped := len(plan.GroupBy)
	for res.Rows.Next() {
		vals, err := res.Rows.Values()
		if err != nil {
			return err
		}
		var part partial
		if grouped > 0 {
			part.key = vals[0]
		}
		part.n, _ = vals[grouped].(int64)
		if len(vals) > grouped+1 {
			part.v = vals[grouped+1]
		}
		if len(vals) > grouped+2 {
			part.c, _ = vals[grouped+2].(int64)
		}
		fn(part)
	}
	return res.Rows.Err()
}

// partial is what one source answered for one group (or for all its
// rows): the rows counted, the sum, least or greatest value so far, and
// for avg the count of values. Values are SQLite's: int64, float64,
// string or nil.
type partial struct {
	key any
	n   int64
	v   any
	c   int64
}

// merge adds another source's answer for the same group.
func (g *partial) merge(o partial, sc *aggregator) {
	g.n += o.n
	g.c += o.c
	if o.v == nil || sc == nil {
		return
	}
	switch {
	case g.v == nil:
		g.v = o.v
	case sc.Kind == "min":
		if sqlLess(o.v, g.v) {
			g.v = o.v
		}
	case sc.Kind == "max":
		if sqlLess(g.v, o.v) {
			g.v = o.v
		}
	default:
		g.v = addNumbers(g.v, o.v)
	}
}

// value is the scalar aggregator's answer for the group.
func (g *partial) value(sc *aggregator) any {
	switch sc.Kind {
	case "count":
		return g.n
	case "avg":
		if g.c == 0 || g.v == nil {
			return nil
		}
		return floatNumber(toFloat(g.v) / float64(g.c))
	}
	return jsonValue(g.v)
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

// addNumbers adds two sums as SQLite does: integers stay integers until
// a real or an overflow.
func addNumbers(a, b any) any {
	x, xi := a.(int64)
	y, yi := b.(int64)
	if xi && yi {
		if s := x + y; (s > x) == (y > 0) {
			return s
		}
	}
	return toFloat(a) + toFloat(b)
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// keyID identifies a group key across sources: numbers by value (5 and
// 5.0 are one group, as in SQLite), text by its bytes.
func keyID(k any) string {
	switch x := k.(type) {
	case nil:
		return "null"
	case int64, float64:
		return "n:" + strconv.FormatFloat(toFloat(x), 'g', -1, 64)
	case string:
		return "s:" + x
	}
	return fmt.Sprintf("%T:%v", k, k)
}

// jsonValue writes a SQLite value as mini-app-mcp writes it: integers as
// integers, reals always with a fraction or exponent.
func jsonValue(v any) any {
	switch x := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case float64:
		return floatNumber(x)
	}
	return v
}

// sqlLess orders values as SQLite does: null, numbers, text.
func sqlLess(a, b any) bool {
	rank := func(v any) int {
		switch v.(type) {
		case nil:
			return 0
		case int64, float64:
			return 1
		}
		return 2
	}
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra < rb
	}
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return x < y
		}
		return toFloat(x) < toFloat(b)
	case float64:
		return x < toFloat(b)
	case string:
		y, _ := b.(string)
		return x < y
	}
	return false
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
