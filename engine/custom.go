package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/custom"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// CustomCall is one call of a custom API as both faces decode it.
type CustomCall struct {
	// Org and Project are the REST path's (MCP: the token's); they must be
	// the token's.
	Org, Project string
	// URI, Method and Version name the definition.
	URI     string
	Method  string
	Version int
	// Params are the caller's values: JSON-decoded (string, json.Number,
	// bool, …) or taken from a query string (string, or []any when a name
	// is repeated). custom.API.Bind checks them.
	Params map[string]any
}

// CustomResult is the answer of CallAPI: for a read, Rows streams the
// result and must be closed; for a write, RowsAffected.
type CustomResult struct {
	Write        bool
	Rows         dialects.Rows
	RowsAffected int64
}

// CallAPI runs one call of a custom API, the custom counterpart of Execute
// and the only place its steps run, in this order:
//
//  1. tenancy: the call's org and project must be the token's (400);
//  2. the definition (uri, method, version) of the caller's project (404);
//  3. gate 1, as for Auto API plans: the token's key_type must allow every
//     action the API performs, and the lock mask of every table it touches
//     the action on it (403, a lock names itself);
//  4. the roles: the caller must hold one the definition allows, or admin
//     (403 naming the caller's roles);
//  5. the parameters, checked against their types (400);
//  6. the statements, bound — never spliced — on the definition's
//     database: a read in a read-only transaction, a write's statements in
//     one transaction; then the audit.
//
// Templates and row scopes do not apply: the definition's roles and SQL
// are the operator's grant.
func (e *Engine) CallAPI(ctx context.Context, p *auth.Principal, call *CustomCall) (res *CustomResult, err error) {
	start := time.Now()
	key := fmt.Sprintf("%s %s v%d", call.Method, call.URI, call.Version)
	write := false
	defer func() {
		if err != nil {
			e.auditCustom(ctx, p, key, write, 0, err, start)
		}
	}()
	if p == nil {
		return nil, fault.New(fault.Unauthenticated, "missing access token")
	}
	if call.Org != p.Org || call.Project != p.Project {
		return nil, fault.New(fault.Invalid, "org/project %q/%q in the path do not match the token's %q/%q", call.Org, call.Project, p.Org, p.Project)
	}
	def, err := e.customDef(ctx, p.ProjectID, call)
	if err != nil {
		return nil, err
	}
	api, err := custom.Compile(def)
	if err != nil {
		// Checked when it was defined: the store holds something custom no
		// longer accepts.
		return nil, fault.Wrap(fault.Internal, err, "custom API %s does not compile", def.Key())
	}
	write = api.Write()
	if err := e.customGates(p, api); err != nil {
		return nil, err
	}
	vals, err := api.Bind(call.Params)
	if err != nil {
		return nil, err
	}
	runner, err := e.runner(ctx, p.ProjectID, def)
	if err != nil {
		return nil, err
	}
	stmts := api.Statements(runner.Placeholder, vals)
	if !write {
		rows, err := runner.RunRead(ctx, stmts[0])
		if err != nil {
			return nil, err
		}
		if err := distinctColumns(def, rows.Columns()); err != nil {
			_ = rows.Close()
			return nil, err
		}
		ar := &auditRows{done: func(n int64, err error) {
			e.auditCustom(ctx, p, key, false, n, err, start)
		}}
		if err := ar.prefetch(rows); err != nil {
			return nil, err
		}
		return &CustomResult{Rows: ar}, nil
	}
	wr, err := runner.RunWrite(ctx, stmts)
	if err != nil {
		return nil, err
	}
	e.auditCustom(ctx, p, key, true, wr.RowsAffected, nil, start)
	return &CustomResult{Write: true, RowsAffected: wr.RowsAffected}, nil
}

// customDef finds the definition a call names. Each miss is the same 404
// kind with a message saying what exists at the URI, so a caller can fix
// the method or the version.
func (e *Engine) customDef(ctx context.Context, projectID string, call *CustomCall) (store.CustomAPI, error) {
	switch call.Method {
	case "GET", "POST", "PUT", "DELETE":
	default:
		return store.CustomAPI{}, fault.New(fault.Invalid, "method %q must be GET, POST, PUT or DELETE", call.Method)
	}
	if call.Version < 1 {
		return store.CustomAPI{}, fault.New(fault.Invalid, "version is required and must be 1 or more (REST: ?version=N)")
	}
	if store.CheckURI(call.URI) != nil {
		return store.CustomAPI{}, fault.New(fault.NotFound, "custom API %q not found", call.URI)
	}
	defs, err := e.cat.st.CustomAPIsAt(ctx, projectID, call.URI)
	if err != nil {
		return store.CustomAPI{}, err
	}
	if len(defs) == 0 {
		return store.CustomAPI{}, fault.New(fault.NotFound, "custom API %q not found", call.URI)
	}
	var methods []string
	var versions []string
	for _, d := range defs {
		if d.Method != call.Method {
			if !slices.Contains(methods, d.Method) {
				methods = append(methods, d.Method)
			}
			continue
		}
		if d.Version == call.Version {
			return d, nil
		}
		versions = append(versions, fmt.Sprint(d.Version))
	}
	if len(versions) == 0 {
		return store.CustomAPI{}, fault.New(fault.NotFound, "custom API %q is not served with %s (methods: %s)", call.URI, call.Method, strings.Join(methods, ", "))
	}
	return store.CustomAPI{}, fault.New(fault.NotFound, "custom API %s %q has no version %d (versions: %s)", call.Method, call.URI, call.Version, strings.Join(versions, ", "))
}

// customGates is gate 1 and the role check of a custom API: the same
// key_type and lock functions as Auto API plans, the same refusals.
func (e *Engine) customGates(p *auth.Principal, api *custom.API) error {
	if err := permissions.CheckKeyType(p.KeyType, api.Actions(), p.Roles); err != nil {
		return err
	}
	locks := e.authz.Locks(p.ProjectID)
	for _, x := range api.Access() {
		object := permissions.Object(api.Def.Type, api.Def.Schema, x.Table)
		if _, err := permissions.CheckMask(p.KeyType, locks, object, x.Action, p.Roles); err != nil {
			return err
		}
	}
	if !permissions.MayCall(p.Roles, api.Def.Roles) {
		return permissions.Refusal(p.Roles)
	}
	return nil
}

// runner returns the definition's database as a dialects.Runner.
func (e *Engine) runner(ctx context.Context, projectID string, def store.CustomAPI) (dialects.Runner, error) {
	s := e.cat.get(projectID, def.Type, def.Schema)
	if s == nil {
		return nil, fault.New(fault.NotFound, "database %s/%s of custom API %s is not registered", def.Type, def.Schema, def.Key())
	}
	src, err := s.open(ctx, e.cfg.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	r, ok := src.(dialects.Runner)
	if !ok {
		return nil, fault.New(fault.Unsupported, "custom APIs do not run on databases of type %s", def.Type)
	}
	return r, nil
}

// distinctColumns refuses a result with two columns of one name, which a
// JSON object cannot hold.
func distinctColumns(def store.CustomAPI, cols []dialects.Column) error {
	seen := make(map[string]bool, len(cols))
	for _, c := range cols {
		if seen[c.Name] {
			return fault.New(fault.Internal, "custom API %s returns two columns named %q: give them distinct names (AS …)", def.Key(), c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// CustomAPIs lists the definitions of the principal's project that it may
// call — its roles, key_type and the locks allow them — ordered by URI,
// method and version. org and project (the REST path's; MCP passes the
// token's) must be the token's. Every call still goes through CallAPI.
func (e *Engine) CustomAPIs(ctx context.Context, p *auth.Principal, org, project string) ([]store.CustomAPI, error) {
	if p == nil {
		return nil, fault.New(fault.Unauthenticated, "missing access token")
	}
	if org != p.Org || project != p.Project {
		return nil, fault.New(fault.Invalid, "org/project %q/%q in the path do not match the token's %q/%q", org, project, p.Org, p.Project)
	}
	defs, err := e.cat.st.CustomAPIs(ctx, p.ProjectID)
	if err != nil {
		return nil, err
	}
	out := make([]store.CustomAPI, 0, len(defs))
	for _, d := range defs {
		api, err := custom.Compile(d)
		if err != nil {
			e.log.Warn("custom API does not compile; not listed", "api", d.Key(), "project", p.Project, "err", err)
			continue
		}
		if e.customGates(p, api) == nil {
			out = append(out, d)
		}
	}
	return out, nil
}

// auditCustom records a custom API call like every data operation, on the
// object "custom:<key>" with action read or write.
func (e *Engine) auditCustom(ctx context.Context, p *auth.Principal, key string, write bool, n int64, err error, start time.Time) {
	action := query.Read.String()
	if write {
		action = "write"
	}
	e.auditOp(ctx, p, action, "custom:"+key, n, err, start)
}
