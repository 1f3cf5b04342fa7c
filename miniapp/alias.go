package miniapp

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/flosch/pongo2/v6"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
)

func init() {
	nameProp := `"name":{"type":"string","description":"Alias name."}`
	insertTools("query_aggregate",
		&Tool{Name: "alias_create", Action: query.Update,
			Description: "Store a named query alias: table or sources (single, multi, pattern), filter or filter_template (Jinja, rendered with alias_run params; params_schema lists the names), optional aggregator, limit (default limit), description, fields, order_by, scope project|user. Returns {created}.",
			InputSchema: obj(nameProp+","+tableProp+","+sourcesProp+","+aggregatorProp+
				`,"filter":{"type":"object","description":"ListFilter."},"filter_template":{"type":"string","description":"Jinja template rendering to a ListFilter."},"params_schema":{"type":"array","items":{"type":"string"}},"limit":{"type":"integer","minimum":0},"description":{"type":"string"},"scope":{"type":"string","enum":["project","user"]},"order_by":{"type":"array","items":{"type":"object"}},`+fieldsProp, "name"),
			run: (*Service).aliasCreate},
		&Tool{Name: "alias_list", Action: query.Read, ReadOnly: true, Idempotent: true,
			Description: "List the stored aliases sorted by name (project scope wins over user); table keeps those whose sources include it.",
			InputSchema: obj(tableProp), run: (*Service).aliasList},
		&Tool{Name: "alias_run", Action: query.Read, ReadOnly: true, Idempotent: true,
			Description: "Run a stored alias: rows as list returns them, or the aggregate result when the alias has an aggregator. limit, offset, fields, order_by override the stored ones; params fill a templated filter.",
			InputSchema: obj(nameProp+","+tableProp+`,"limit":{"type":"integer","minimum":0},"offset":{"type":"integer","minimum":0},"params":{"type":["object","string"],"additionalProperties":true,"description":"Values of the template's params: an object, or the JSON text of one."},"order_by":{"type":"array","items":{"type":"object"}},`+fieldsProp, "name"),
			run:         (*Service).aliasRun},
		&Tool{Name: "alias_delete", Action: query.Update, Destructive: true, Idempotent: true,
			Description: "Delete a stored alias (project scope first, then user). Returns {deleted}.",
			InputSchema: obj(nameProp+","+tableProp, "name"), run: (*Service).aliasDelete},
	)
}

func aliasNotFound(name string) *Error {
	return newErr(fault.NotFound, "ALIAS_NOT_FOUND", map[string]any{"name": name}, textAliasNotFound, name)
}

func aliasExists(name string) *Error {
	return newErr(fault.Conflict, "ALIAS_ALREADY_EXISTS", map[string]any{"name": name}, textAliasExists, name)
}

func aliasParamsRequired(name string) *Error {
	return newErr(fault.Invalid, "ALIAS_PARAMS_REQUIRED", map[string]any{"name": name}, textAliasParamsRequired, name)
}

func aliasTemplateErr(msg string) *Error {
	return newErr(fault.Invalid, "ALIAS_TEMPLATE_ERROR", nil, textAliasTemplate, msg)
}

// plainErr is one of the handlers' ad-hoc messages.
func plainErr(code, format string, args ...any) *Error {
	return newErr(fault.Invalid, code, nil, format, args...)
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// allowed checks through the permission gates (without running anything)
// that the caller's key_type and roles allow action on the table; a
// refusal is returned as the pipeline words it.
func (s *Service) allowed(_ context.Context, p *auth.Principal, t *target, a query.Action) error {
	return s.eng.Check(p, permissions.Object("mi", t.schema, t.table), a)
}

func (s *Service) aliasCreate(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		Name           string          `json:"name"`
		Sources        json.RawMessage `json:"sources"`
		Aggregator     json.RawMessage `json:"aggregator"`
		Filter         json.RawMessage `json:"filter"`
		FilterTemplate *string         `json:"filter_template"`
		ParamsSchema   *[]string       `json:"params_schema"`
		Limit          *uint32         `json:"limit"`
		Description    *string         `json:"description"`
		Scope          string          `json:"scope"`
		Fields         json.RawMessage `json:"fields"`
		OrderBy        json.RawMessage `json:"order_by"`
	}
	if err := decode(args, &a, "name"); err != nil {
		return "", err
	}
	// What does not deserialize is -32602 before anything else, as in
	// mini-app-mcp.
	if a.Scope != "" && a.Scope != "project" && a.Scope != "user" {
		return "", &ArgsError{Msg: "invalid params: " + fmt.Sprintf(argsScope, a.Scope)}
	}
	var names []string
	var err error
	if present(a.Sources) {
		if _, names, _, err = parseSources(a.Sources); err != nil {
			return "", err
		}
	}
	var agg *aggregator
	if present(a.Aggregator) {
		if agg, err = parseAggregator(a.Aggregator); err != nil {
			return "", err
		}
	}
	var terms []orderTerm
	if present(a.OrderBy) {
		if err := json.Unmarshal(a.OrderBy, &terms); err != nil {
			return "", argsProblem("order_by", err)
		}
		if s.cfg.Mounted {
			// Drop-in: each entry's shape only (no table involved).
			if _, err := (&target{}).toOrder(terms, true); err != nil {
				return "", err
			}
		}
	}
	// Drop-in: a table given as "" is a table named "", as mini-app-mcp
	// takes it (Some("")): with sources it is both, alone it is not found.
	// Gateway mode takes "" as omitted, as its other tools do.
	tableGiven := a.Table != "" || (s.cfg.Mounted && tableNamedEmpty(args))
	if present(a.Sources) && tableGiven {
		return "", plainErr("VALIDATION_ERROR", textSourcesAndTable)
	}
	sources := a.Sources
	if !present(sources) {
		table, schema := a.Table, a.Schema
		if table == "" && tableGiven {
			return "", tableNotFound("")
		}
		if table == "" {
			if s.cfg.DefaultTable == "" {
				return "", tableRequired()
			}
			table, schema = s.cfg.DefaultTable, s.cfg.DefaultSchema
		}
		if _, err := s.resolve(ctx, p, table, schema); err != nil {
			return "", err
		}
		names = []string{table}
		sources, _ = json.Marshal(map[string]any{"kind": "single", "value": table})
	}
	// mini-app-mcp resolves the first source only (its schema checks the
	// filter); the others are found when the alias runs. The caller must
	// be able to read what the alias will read.
	var first *target
	for i, n := range names {
		t, err := s.resolveSource(ctx, p, n, a.Schema)
		if err != nil {
			if i == 0 {
				return "", err
			}
			continue
		}
		if err := s.allowed(ctx, p, t, query.Read); err != nil {
			return "", err
		}
		if i == 0 {
			first = t
		}
	}
	switch {
	case present(a.Filter) && a.FilterTemplate != nil:
		return "", plainErr("VALIDATION_ERROR", textFilterAndTemplate)
	case !present(a.Filter) && a.FilterTemplate == nil:
		return "", plainErr("VALIDATION_ERROR", textFilterOrTemplate)
	}
	if first != nil && present(a.Filter) {
		if _, err := first.toExpr(a.Filter); err != nil {
			return "", err
		}
	}
	// On the gateway order_by, the projection and the aggregator are
	// checked against the first source now; mini-app-mcp checks them when
	// the alias runs.
	if first != nil && !s.cfg.Mounted {
		if _, err := first.toOrder(terms, false); err != nil {
			return "", err
		}
		if _, err := first.projection(a.Fields); err != nil {
			return "", err
		}
		if agg != nil {
			if _, err := agg.check(first, false); err != nil {
				return "", err
			}
		}
	}
	sc, err := s.createScope(ctx, p, a.Scope, first)
	if err != nil {
		return "", err
	}
	row := aliasRow{Alias: dialects.Alias{Name: a.Name, Sources: compactJSON(sources)}}
	if agg != nil {
		row.Aggregator = sql.NullString{String: agg.canonical(), Valid: true}
	}
	if a.FilterTemplate != nil {
		// A template is stored as given; params_schema only when given
		// (without it the stored text is read as a plain filter).
		row.Filter = *a.FilterTemplate
		if a.ParamsSchema != nil && *a.ParamsSchema != nil {
			b, _ := json.Marshal(*a.ParamsSchema)
			row.ParamsSchema = sql.NullString{String: string(b), Valid: true}
		}
	} else {
		// A plain filter takes no params: params_schema is not stored.
		row.Filter = compactJSON(a.Filter)
	}
	if a.Limit != nil {
		row.DefaultLimit = sql.NullInt64{Int64: int64(*a.Limit), Valid: true}
	}
	if a.Description != nil {
		row.Description = sql.NullString{String: *a.Description, Valid: true}
	}
	if present(a.Fields) {
		row.Fields = sql.NullString{String: compactJSON(a.Fields), Valid: true}
	}
	if present(a.OrderBy) {
		row.OrderBy = sql.NullString{String: compactJSON(a.OrderBy), Valid: true}
	}
	// Storing an alias is a write on its first source (or, naming none,
	// on some table): the engine's gates decide, and audit it.
	var on engine.TableRef
	if first != nil {
		on = first.ref()
	}
	ok, err := s.insertAlias(ctx, p, sc, on, row)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", aliasExists(a.Name)
	}
	return compact(map[string]string{"created": a.Name})
}

// createScope picks the store a new alias goes to: the user scope when
// asked; otherwise the first source's own database when it is a project
// scope (each gateway mi database is its own), else the first project
// scope, else (scope not asked) the user scope.
func (s *Service) createScope(ctx context.Context, p *auth.Principal, want string, first *target) (scope, error) {
	scopes, err := s.scopes(ctx, p)
	if err != nil {
		return scope{}, err
	}
	var user *scope
	var projects []scope
	for i := range scopes {
		if scopes[i].name == "user" {
			user = &scopes[i]
		} else {
			projects = append(projects, scopes[i])
		}
	}
	notMounted := func(label string) error {
		return plainErr("CONFIG_ERROR", textScopeNotMounted, label)
	}
	if want == "user" {
		if user == nil {
			return scope{}, notMounted("User")
		}
		return *user, nil
	}
	if first != nil {
		for _, sc := range projects {
			if sc.schema == first.schema {
				return sc, nil
			}
		}
	}
	if len(projects) > 0 {
		return projects[0], nil
	}
	if want == "project" {
		return scope{}, notMounted("Project")
	}
	if user != nil {
		return *user, nil
	}
	return scope{}, configErr("no alias scope is mounted")
}

// aliasDoc is an alias as alias_list shows it.
type aliasDoc struct {
	Name         string          `json:"name"`
	Sources      json.RawMessage `json:"sources"`
	Aggregator   json.RawMessage `json:"aggregator"`
	Filter       string          `json:"filter"`
	DefaultLimit *int64          `json:"default_limit"`
	Description  *string         `json:"description"`
	ParamsSchema *string         `json:"params_schema"`
	Fields       *string         `json:"fields"`
	OrderBy      *string         `json:"order_by"`
	Scope        string          `json:"scope"`
}

func nullStr(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}

func (s *Service) aliasList(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a tableArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	scopes, err := s.scopes(ctx, p)
	if err != nil {
		return "", err
	}
	rows, err := s.listAliases(ctx, p, scopes)
	if err != nil {
		return "", err
	}
	// On the gateway an alias naming a table the caller may not see is
	// not shown; drop-in lists every alias, as mini-app-mcp does (its
	// sources may name tables not mounted).
	ts, err := s.tables(ctx, p)
	if err != nil {
		return "", err
	}
	visible := map[string]bool{}
	for _, t := range ts {
		visible[t.table] = true
	}
	sees := func(n string) bool { return s.cfg.Mounted || visible[n] }
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	out := []aliasDoc{}
	for _, r := range rows {
		_, names, pattern, err := parseSources(json.RawMessage(r.Sources))
		if err != nil {
			continue
		}
		hidden := false
		for _, n := range names {
			if !sees(n) {
				hidden = true
				break
			}
		}
		if hidden {
			continue
		}
		// Drop-in: a table given as "" narrows to the aliases that
		// include a table named "" (mini-app-mcp's includes_table("")).
		if a.Table != "" || (s.cfg.Mounted && tableNamedEmpty(args)) {
			hit := false
			if pattern != "" {
				hit = globMatch(pattern, a.Table)
			}
			for _, n := range names {
				hit = hit || n == a.Table
			}
			if !hit {
				continue
			}
		}
		d := aliasDoc{Name: r.Name, Sources: json.RawMessage(r.Sources), Filter: r.Filter,
			Description: nullStr(r.Description), ParamsSchema: nullStr(r.ParamsSchema),
			Fields: nullStr(r.Fields), OrderBy: nullStr(r.OrderBy), Scope: r.scope.name}
		if r.Aggregator.Valid {
			d.Aggregator = json.RawMessage(r.Aggregator.String)
		}
		if r.DefaultLimit.Valid {
			d.DefaultLimit = &r.DefaultLimit.Int64
		}
		out = append(out, d)
	}
	return compact(out)
}

func (s *Service) aliasRun(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		Name    string          `json:"name"`
		Limit   *uint32         `json:"limit"`
		Offset  *uint32         `json:"offset"`
		Params  json.RawMessage `json:"params"`
		Fields  json.RawMessage `json:"fields"`
		OrderBy json.RawMessage `json:"order_by"`
	}
	if err := decode(args, &a, "name"); err != nil {
		return "", err
	}
	scopes, err := s.scopes(ctx, p)
	if err != nil {
		return "", err
	}
	r, err := s.getAlias(ctx, p, scopes, a.Name)
	if err != nil {
		return "", err
	}
	filter := json.RawMessage(r.Filter)
	if r.ParamsSchema.Valid {
		// A templated alias (params_schema stored, even empty) needs
		// params; they render the template, whose text must then be a
		// ListFilter.
		if !present(a.Params) {
			return "", aliasParamsRequired(a.Name)
		}
		params, err := paramsObject(a.Params)
		if err != nil {
			return "", err
		}
		text, err := renderTemplate(r.Filter, params)
		if err != nil {
			return "", err
		}
		var f listFilter
		if err := json.Unmarshal([]byte(text), &f); err != nil {
			return "", schemaErr(fmt.Sprintf(reasonRenderedFilter, jsonProblem("", err)))
		}
		filter = json.RawMessage(text)
	} else {
		var f listFilter
		if err := json.Unmarshal(filter, &f); err != nil {
			return "", schemaErr(fmt.Sprintf(reasonFilterParse, jsonProblem("", err)))
		}
	}
	sp, names, pattern, err := parseSources(json.RawMessage(r.Sources))
	if err != nil {
		return "", err
	}
	if r.Aggregator.Valid {
		agg, err := parseAggregator(json.RawMessage(r.Aggregator.String))
		if err != nil {
			return "", err
		}
		if sp.Kind == "pattern" {
			if names, err = s.matchPattern(ctx, p, pattern); err != nil {
				return "", err
			}
		}
		// As mini-app-mcp: the first source is found and checks the
		// filter before the aggregate runs (and checks the rest).
		if len(names) == 0 {
			return "", aggregatorErr(aggResolvedZero)
		}
		first, err := s.resolveSource(ctx, p, names[0], "")
		if err != nil {
			return "", err
		}
		if present(filter) {
			if _, err := first.toExpr(filter); err != nil {
				return "", err
			}
		}
		res, err := s.aggregate(ctx, p, names, filter, agg)
		if err != nil {
			return "", err
		}
		return compact(res)
	}
	if sp.Kind != "single" {
		return "", aggregatorErr(aggRowsNeedAggregator)
	}
	t, err := s.resolve(ctx, p, names[0], "")
	if err != nil {
		return "", err
	}
	fields := a.Fields
	if !present(fields) && r.Fields.Valid {
		fields = json.RawMessage(r.Fields.String)
	}
	var terms []orderTerm
	order := a.OrderBy
	if !present(order) && r.OrderBy.Valid {
		order = json.RawMessage(r.OrderBy.String)
	}
	if present(order) {
		if err := json.Unmarshal(order, &terms); err != nil {
			return "", argsProblem("order_by", err)
		}
	}
	limit := int64(100)
	switch {
	case a.Limit != nil:
		limit = int64(*a.Limit)
	case r.DefaultLimit.Valid:
		limit = r.DefaultLimit.Int64
	}
	var offset int64
	if a.Offset != nil {
		offset = int64(*a.Offset)
	}
	rows, err := s.listRows(ctx, p, t, filter, fields, terms, min(limit, 1000), offset)
	if err != nil {
		return "", err
	}
	return compact(rows)
}

// listRows is list's read: filter, projection, order (created_at DESC by
// default), limit and offset, through the pipeline.
func (s *Service) listRows(ctx context.Context, p *auth.Principal, t *target, filter, fields json.RawMessage, terms []orderTerm, limit, offset int64) ([]record, error) {
	plan := t.plan(p, query.Read)
	var err error
	if present(filter) {
		if plan.Where, err = t.toExpr(filter); err != nil {
			return nil, err
		}
	}
	proj, err := t.projection(fields)
	if err != nil {
		return nil, err
	}
	if plan.Order, err = t.toOrder(terms, s.cfg.Mounted); err != nil {
		return nil, err
	}
	t.docRead(plan)
	if len(plan.Order) == 0 {
		plan.Order = []query.Order{{Column: "created_at", Desc: true}}
	}
	if limit <= 0 {
		// Nothing to read; the caller must still be allowed to read.
		if err := s.allowed(ctx, p, t, query.Read); err != nil {
			return nil, err
		}
		return []record{}, nil
	}
	plan.Limit, plan.Offset = limit, offset
	rows, err := s.read(ctx, p, plan)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i] = project(rows[i], proj)
	}
	return rows, nil
}

// paramsObject reads alias_run's params as the template's values: an
// object, or a string holding the JSON of one (a string that is not JSON
// is ALIAS_TEMPLATE_ERROR); any other JSON value gives the template no
// values, as a MiniJinja context that is not a map has none.
func paramsObject(raw json.RawMessage) (map[string]any, error) {
	if !present(raw) {
		return nil, nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, &ArgsError{Msg: "invalid params: params: " + err.Error()}
	}
	if s, ok := v.(string); ok {
		d := json.NewDecoder(bytes.NewReader([]byte(s)))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, aliasTemplateErr(fmt.Sprintf(reasonParamsString, jsonProblem("", err)))
		}
	}
	m, _ := v.(map[string]any)
	return m, nil
}

func (s *Service) aliasDelete(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		Name string `json:"name"`
	}
	if err := decode(args, &a, "name"); err != nil {
		return "", err
	}
	scopes, err := s.scopes(ctx, p)
	if err != nil {
		return "", err
	}
	r, err := s.getAlias(ctx, p, scopes, a.Name)
	if err != nil {
		return "", err
	}
	_, names, _, _ := parseSources(json.RawMessage(r.Sources))
	// Removing an alias is a write on the table it reads first (when it
	// is still there), else on some table: the engine's gates decide.
	var on engine.TableRef
	if len(names) > 0 {
		if t, err := s.resolve(ctx, p, names[0], ""); err == nil {
			on = t.ref()
		}
	}
	ok, err := s.deleteAlias(ctx, p, r.scope, on, a.Name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", aliasNotFound(a.Name)
	}
	return compact(map[string]string{"deleted": a.Name})
}

// The filter templates: Jinja syntax (pongo2), no file access, no HTML
// escaping, undefined variables render empty; tojson as in Jinja.
var tplSet = pongo2.NewSet("miniapp-alias", noLoader{})

func init() {
	for _, tag := range []string{"include", "extends", "import", "ssi"} {
		_ = tplSet.BanTag(tag)
	}
	if !pongo2.FilterExists("tojson") {
		_ = pongo2.RegisterFilter("tojson", func(in, _ *pongo2.Value) (*pongo2.Value, *pongo2.Error) {
			b, err := json.Marshal(in.Interface())
			if err != nil {
				return nil, &pongo2.Error{Sender: "filter:tojson", OrigError: err}
			}
			return pongo2.AsSafeValue(string(b)), nil
		})
	}
}

// noLoader refuses every template file.
type noLoader struct{}

func (noLoader) Abs(_, name string) string { return name }

func (noLoader) Get(string) (io.Reader, error) {
	return nil, errors.New("templates may not load files")
}

// renderTemplate renders a filter template with params.
func renderTemplate(text string, params map[string]any) (string, error) {
	tpl, err := tplSet.FromString("{% autoescape off %}" + text + "{% endautoescape %}")
	if err != nil {
		return "", aliasTemplateErr(err.Error())
	}
	ctx := pongo2.Context{}
	for k, v := range params {
		ctx[k] = templateValue(v)
	}
	out, err := tpl.Execute(ctx)
	if err != nil {
		return "", aliasTemplateErr(err.Error())
	}
	return out, nil
}

// templateValue turns JSON numbers into Go numbers for the template.
func templateValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = templateValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = templateValue(e)
		}
		return out
	}
	return v
}
