package miniapp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/engine"
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
// multi) or glob (pattern). As mini-app-mcp deserializes it, every kind
// needs its value; a source that does not deserialize is -32602.
func parseSources(raw json.RawMessage) (sourceSpec, []string, string, error) {
	var sp sourceSpec
	if err := json.Unmarshal(raw, &sp); err != nil {
		return sp, nil, "", &ArgsError{Msg: "invalid params: sources: " + err.Error()}
	}
	switch sp.Kind {
	case "single", "multi", "pattern":
		if !present(sp.Value) {
			return sp, nil, "", &ArgsError{Msg: "invalid params: " + fmt.Sprintf(argsMissing, "sources", "value")}
		}
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
		if err := json.Unmarshal(sp.Value, &v); err != nil {
			return sp, nil, "", &ArgsError{Msg: "invalid params: sources.value must be an array of strings for kind multi"}
		}
		return sp, v, "", nil
	case "pattern":
		var v string
		if err := json.Unmarshal(sp.Value, &v); err != nil {
			return sp, nil, "", &ArgsError{Msg: "invalid params: sources.value must be a string for kind pattern"}
		}
		return sp, nil, v, nil
	}
	return sp, nil, "", &ArgsError{Msg: "invalid params: " + fmt.Sprintf(argsSourcesKind, sp.Kind)}
}

// aggregator is mini-app-mcp's Aggregator, tagged by kind. A member left
// out is nil.
type aggregator struct {
	Kind    string          `json:"kind"`
	Field   *string         `json:"field,omitempty"`
	ByField *string         `json:"by_field,omitempty"`
	Having  json.RawMessage `json:"having,omitempty"`
	Inner   *aggregator     `json:"inner,omitempty"`
}

// parseAggregator reads an Aggregator; one that does not deserialize as
// mini-app-mcp's (an unknown kind, a missing field or by_field) is -32602.
func parseAggregator(raw json.RawMessage) (*aggregator, error) {
	var a aggregator
	d := json.NewDecoder(bytesReader(raw))
	d.UseNumber()
	if err := d.Decode(&a); err != nil {
		return nil, &ArgsError{Msg: "invalid params: aggregator: " + err.Error()}
	}
	if err := a.shape(); err != nil {
		return nil, err
	}
	return &a, nil
}

// shape checks the kinds and the members each needs.
func (a *aggregator) shape() error {
	switch a.Kind {
	case "count":
	case "sum", "avg", "min", "max":
		if a.Field == nil {
			return &ArgsError{Msg: "invalid params: " + fmt.Sprintf(argsMissing, "aggregator", "field")}
		}
	case "group_by":
		if a.ByField == nil {
			return &ArgsError{Msg: "invalid params: " + fmt.Sprintf(argsMissing, "aggregator", "by_field")}
		}
		if a.Inner != nil {
			return a.Inner.shape()
		}
	default:
		return &ArgsError{Msg: "invalid params: " + fmt.Sprintf(argsAggregatorKind, a.Kind)}
	}
	return nil
}

// field and byField are the members shape made sure of.
func (a *aggregator) field() string   { return deref(a.Field) }
func (a *aggregator) byField() string { return deref(a.ByField) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// canonical is the aggregator as mini-app-mcp stores and lists it: kind
// first, then the members of its kind in their order, group_by's having
// and inner null when left out.
func (a *aggregator) canonical() string {
	var b strings.Builder
	str := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	b.WriteString(`{"kind":` + str(a.Kind))
	switch a.Kind {
	case "sum", "avg", "min", "max":
		b.WriteString(`,"field":` + str(a.field()))
	case "group_by":
		b.WriteString(`,"by_field":` + str(a.byField()) + `,"having":`)
		if present(a.Having) {
			b.WriteString(compactJSON(a.Having))
		} else {
			b.WriteString("null")
		}
		b.WriteString(`,"inner":`)
		if a.Inner != nil {
			b.WriteString(a.Inner.canonical())
		} else {
			b.WriteString("null")
		}
	}
	b.WriteString("}")
	return b.String()
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkIdent is mini-app-mcp's identifier rule ([A-Za-z_][A-Za-z0-9_]*)
// for a name of the role label (source_table, aggregator_field,
// group_by_field), a validation error on the field named by the label.
func checkIdent(label, name string) error {
	switch {
	case name == "":
		return validationErr(label, fmt.Sprintf(reasonIdentEmpty, label))
	case !(name[0] == '_' || name[0] >= 'A' && name[0] <= 'Z' || name[0] >= 'a' && name[0] <= 'z'):
		return validationErr(label, fmt.Sprintf(reasonIdentStart, label, name))
	case !identRE.MatchString(name):
		return validationErr(label, fmt.Sprintf(reasonIdentChars, label, name))
	}
	return nil
}

// check validates the aggregator against the first source's schema, in
// mini-app-mcp's order, and returns the fields it reads. inner is set for
// the inner aggregator of a group_by.
func (a *aggregator) check(t *target, inner bool) ([]string, error) {
	declared := func(label, role, field string) error {
		if err := checkIdent(label, field); err != nil {
			return err
		}
		if _, ok := t.field(field); !ok {
			return validationErr(field, fmt.Sprintf(reasonNotDeclared, role, field))
		}
		return nil
	}
	switch a.Kind {
	case "count":
		return nil, nil
	case "sum", "avg", "min", "max":
		if err := declared("aggregator_field", "aggregator field", a.field()); err != nil {
			return nil, err
		}
		return []string{a.field()}, nil
	case "group_by":
		if inner {
			return nil, aggregatorErr(aggNestedGroupBy)
		}
		if err := declared("group_by_field", "group_by field", a.byField()); err != nil {
			return nil, err
		}
		fields := []string{a.byField()}
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
	return nil, a.shape()
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
	_, names, _, err := parseSources(a.Sources)
	if err != nil {
		return "", err
	}
	agg, err := parseAggregator(a.Aggregator)
	if err != nil {
		return "", err
	}
	// A pattern names no table here: it is resolved by alias_run only.
	res, err := s.aggregate(ctx, p, names, a.Filter, agg)
	if err != nil {
		return "", err
	}
	return compact(res)
}

// matchPattern resolves a pattern source against the tables the caller
// may see, sorted, as mini-app-mcp resolves it against its mounted
// tables.
func (s *Service) matchPattern(ctx context.Context, p *auth.Principal, pattern string) ([]string, error) {
	if err := globCheck(pattern); err != nil {
		return nil, err
	}
	ts, err := s.tables(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range ts {
		if globMatch(pattern, t.table) {
			out = append(out, t.table)
		}
	}
	if len(out) == 0 {
		return nil, aggregatorErr(fmt.Sprintf(aggPatternZero, pattern))
	}
	sort.Strings(out)
	return out, nil
}

// globCheck refuses the patterns mini-app-mcp refuses: an empty one, and
// one using ?, [ or ] (only * is a wildcard).
func globCheck(pattern string) error {
	if pattern == "" {
		return aggregatorErr(aggPatternEmpty)
	}
	for _, c := range pattern {
		if c == '?' || c == '[' || c == ']' {
			return aggregatorErr(fmt.Sprintf(aggPatternMeta, pattern, c))
		}
	}
	return nil
}

// globMatch is mini-app-mcp's *-only glob: the pattern's literal pieces
// between stars must appear in order, the first at the start unless the
// pattern starts with *, the last at the end unless it ends with * (and a
// pattern without a star matches the names it starts, as there). A
// pattern globCheck refuses matches nothing.
func globMatch(pattern, name string) bool {
	if globCheck(pattern) != nil {
		return false
	}
	segs := strings.Split(pattern, "*")
	lead, trail := strings.HasPrefix(pattern, "*"), strings.HasSuffix(pattern, "*")
	rest := name
	last := len(segs) - 1
	for i, seg := range segs {
		switch {
		case seg == "":
		case i == 0 && !lead:
			if !strings.HasPrefix(rest, seg) {
				return false
			}
			rest = rest[len(seg):]
		case i == last && !trail:
			if !strings.HasSuffix(rest, seg) {
				return false
			}
			rest = rest[:len(rest)-len(seg)]
		default:
			k := strings.Index(rest, seg)
			if k < 0 {
				return false
			}
			rest = rest[k+len(seg):]
		}
	}
	return true
}

// resolveSource finds a source table by its name; "" names no table (it
// is not the default table, as an omitted table argument would be).
func (s *Service) resolveSource(ctx context.Context, p *auth.Principal, name, schema string) (*target, error) {
	if name == "" {
		return nil, tableNotFound(name)
	}
	return s.resolve(ctx, p, name, schema)
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
// numbers, text). The checks come in mini-app-mcp's order: sources
// present, the first source found, their number, their names, the
// aggregator, the filter, then every source found.
func (s *Service) aggregate(ctx context.Context, p *auth.Principal, names []string, filter json.RawMessage, agg *aggregator) (any, error) {
	if len(names) == 0 {
		return nil, aggregatorErr(aggSourcesEmpty)
	}
	first, err := s.resolveSource(ctx, p, names[0], "")
	if err != nil {
		return nil, err
	}
	if len(names) > maxSources {
		return nil, aggregatorErr(fmt.Sprintf(aggTooManySources, len(names), maxSources))
	}
	for _, n := range names {
		if err := checkIdent("source_table", n); err != nil {
			return nil, err
		}
	}
	if _, err := agg.check(first, false); err != nil {
		return nil, err
	}
	hasFilter := len(filter) > 0 && string(filter) != "null"
	if hasFilter {
		if _, err := first.toExpr(filter); err != nil {
			return nil, err
		}
	}
	targets := make([]*target, len(names))
	for i, n := range names {
		t, err := s.resolveSource(ctx, p, n, "")
		if err != nil {
			return nil, err
		}
		targets[i] = t
	}
	if s.cfg.Mounted {
		return s.fileAggregate(ctx, p, targets, filter, agg)
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
				if f != agg.byField() {
					return nil, aggregatorErr(fmt.Sprintf("having may test only the group key '%s', not '%s'", agg.byField(), f))
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

// fileAggregate is the drop-in mode's aggregate: mini-app-mcp's own
// statement over the tables' stored rows (engine.AggregateTables, which
// the mi source runs over its table files), so every answer is
// upstream's: having tests any field on the row SQLite keeps for the
// group (its first in scan order, or the one holding the least or
// greatest value under min or max), array_contains and
// array_not_contains work there, and sum, avg, min and max take any field
// as SQLite takes it (text sums as 0, min and max order null < numbers <
// text). The filter and having were validated against the first source's
// schema; their values are bound as mini-app-mcp binds them. The engine's
// gates decide whether the caller may read each source whole, and audit
// the call.
func (s *Service) fileAggregate(ctx context.Context, p *auth.Principal, targets []*target, filter json.RawMessage, agg *aggregator) (any, error) {
	var fa dialects.TableAggregate
	refs := make([]engine.TableRef, len(targets))
	for i, t := range targets {
		refs[i] = engine.TableRef{Type: "mi", Schema: t.schema, Table: t.table}
	}
	first := targets[0]
	var err error
	if fa.Where, err = upstreamExpr(first, filter); err != nil {
		return nil, err
	}
	sc := agg
	if agg.Kind == "group_by" {
		fa.GroupBy = agg.byField()
		if fa.Having, err = upstreamExpr(first, agg.Having); err != nil {
			return nil, err
		}
		sc = agg.Inner
	}
	if sc != nil {
		fa.Func, fa.Field = query.AggFunc(sc.Kind), sc.field()
	}
	rows, err := s.eng.AggregateTables(ctx, p, refs, fa)
	if err != nil {
		return nil, err
	}
	switch agg.Kind {
	case "count":
		var n any = int64(0)
		if len(rows) == 1 {
			n = jsonValue(rows[0][0])
		}
		return aggResult{"count", n}, nil
	case "group_by":
		out := make([]group, 0, len(rows))
		for _, r := range rows {
			n, _ := r[1].(int64)
			g := group{Key: jsonValue(r[0]), Count: n}
			if sc != nil {
				v := jsonValue(r[2])
				g.Value = &v
			}
			out = append(out, g)
		}
		return aggResult{"groups", out}, nil
	}
	var v any
	if len(rows) == 1 {
		v = jsonValue(rows[0][0])
	}
	return aggResult{"value", v}, nil
}

// upstreamExpr is a (validated) ListFilter as mini-app-mcp binds it: eq
// and in values of a number field as reals, of a boolean field as
// booleans; nil when raw is absent or null.
func upstreamExpr(t *target, raw json.RawMessage) (query.Expr, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	e, err := t.toExpr(raw)
	if err != nil {
		return nil, err
	}
	err = query.Walk(e, func(c *query.Cond) error {
		if c.Op != query.Eq && c.Op != query.In {
			return nil
		}
		fi, _ := t.info.Field(c.Column)
		for i, a := range c.Args {
			text, _ := a.(string)
			switch fi.Type {
			case "number":
				f, err := strconv.ParseFloat(text, 64)
				if err != nil {
					return validationErr(c.Column, fmt.Sprintf("filter number value for field '%s' is out of f64 range", c.Column))
				}
				c.Args[i] = f
			case "boolean":
				c.Args[i] = text == "true"
			}
		}
		return nil
	})
	return e, err
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
		_, has := t.field(agg.byField())
		having := len(agg.Having) > 0 && string(agg.Having) != "null"
		switch {
		case has:
			plan.GroupBy = []string{agg.byField()}
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
	if _, has := t.field(sc.field()); !has {
		return plan, true, nil
	}
	fn := query.AggFunc(sc.Kind)
	if sc.Kind == "avg" {
		fn = query.AggSum
	}
	plan.Aggregates = append(plan.Aggregates, query.Aggregate{Func: fn, Column: sc.field(), Alias: aliasFor(t, aliasValue)})
	if sc.Kind == "avg" {
		plan.Aggregates = append(plan.Aggregates, query.Aggregate{Func: query.AggCount, Column: sc.field(), Alias: aliasFor(t, aliasValues)})
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
