package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// explainJSON is the answer of GET …/explain: how a request by an identity
// would fare, gate by gate (engine.Explain), as `minimal policy explain`
// prints it.
type explainJSON struct {
	Identity string     `json:"identity"`
	Roles    []string   `json:"roles"`
	KeyType  string     `json:"key_type"`
	Method   string     `json:"method"`
	Path     string     `json:"path"`
	Action   string     `json:"action"`
	Object   string     `json:"object"`
	Gates    []gateJSON `json:"gates"`
	// Columns the identity may touch for the action; null: every column.
	Columns []string `json:"columns"`
	// SQL and Args are the statement the dialect would send, when every
	// gate passed.
	SQL     string      `json:"sql,omitempty"`
	Args    []string    `json:"args,omitempty"`
	Outcome outcomeJSON `json:"outcome"`
}

type gateJSON struct {
	Name     string `json:"name"`
	Decision string `json:"decision"`
	Detail   string `json:"detail"`
}

// outcomeJSON is what the request would be answered: allowed, or the error
// code and message the caller would get.
type outcomeJSON struct {
	Allowed bool   `json:"allowed"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// explain answers GET …/projects/{project}/explain?identity=&method=&path=&body=:
// each permission gate's decision, the columns and the SQL for a request
// of an identity of the project. Nothing runs on the database (a scoped
// write only has the database compare its values); nothing is written.
func (a *admin) explain(w http.ResponseWriter, r *http.Request) {
	x, err := a.explainOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, x)
}

func (a *admin) explainOf(r *http.Request) (*explainJSON, error) {
	_, proj, err := a.project(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	name, path, body := q.Get("identity"), q.Get("path"), q.Get("body")
	method := strings.ToUpper(q.Get("method"))
	if method == "" {
		method = http.MethodGet
	}
	switch {
	case name == "":
		return nil, fault.New(fault.Invalid, "parameter \"identity\" is required")
	case path == "":
		return nil, fault.New(fault.Invalid, "parameter \"path\" is required: a request path such as %s/demo/demo/pg/public/employees?ps=10&pg=0", AutoPrefix)
	case !slices.Contains([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete}, method):
		return nil, fault.New(fault.Invalid, "parameter \"method\" must be GET, POST, PUT or DELETE, not %q", method)
	}
	u, err := url.ParseRequestURI(path)
	if err != nil || !strings.HasPrefix(path, AutoPrefix+"/") || u.Host != "" {
		return nil, fault.New(fault.Invalid, "parameter \"path\" must be a request path under %s/, not %q", AutoPrefix, path)
	}
	id, err := a.s.st.Identity(r.Context(), proj.ID, name)
	if err != nil {
		return nil, err
	}
	principal, err := auth.PrincipalFor(r.Context(), a.s.st, id)
	if err != nil {
		return nil, err
	}
	plan, x, err := ExplainRequest(r.Context(), a.s.eng, principal, method, u, body, a.s.cfg)
	if err != nil {
		return nil, err
	}
	out := &explainJSON{
		Identity: principal.Identity, Roles: principal.Roles, KeyType: principal.KeyType.String(),
		Method: method, Path: path, Action: plan.Action.String(), Object: x.Object,
		Gates: make([]gateJSON, len(x.Gates)), Columns: x.Columns, Outcome: outcomeJSON{Allowed: x.Outcome == nil},
	}
	for i, g := range x.Gates {
		out.Gates[i] = gateJSON{Name: g.Name, Decision: g.Decision, Detail: g.Detail}
	}
	if x.Stmt != nil {
		out.SQL = x.Stmt.SQL
		for _, v := range x.Stmt.Args {
			out.Args = append(out.Args, fmt.Sprint(v))
		}
	}
	if x.Outcome != nil {
		fe := fault.As(x.Outcome)
		out.Outcome.Code, out.Outcome.Message = fe.WireCode(), fe.Message
	}
	return out, nil
}

// ExplainRequest plans an Auto API request of p — method, u (path and
// query string), JSON body — as the Auto API would, and explains it
// (engine.Explain) without running it: the one reading of a request that
// GET …/explain and `minimal policy explain` share.
func ExplainRequest(ctx context.Context, eng *engine.Engine, p *auth.Principal, method string, u *url.URL, body string, cfg Config) (*query.Plan, *engine.Explanation, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.String(), strings.NewReader(body))
	if err != nil {
		return nil, nil, fault.New(fault.Invalid, "request %s %s: %v", method, u, err)
	}
	req.RequestURI = u.RequestURI()
	plan, err := PlanFromRequest(nil, req, cfg)
	if err != nil {
		return nil, nil, err
	}
	return plan, eng.Explain(ctx, p, plan), nil
}

// explainOp documents GET …/explain in the OpenAPI document.
func explainOp(d *document) {
	d.op("GET", adminProject+"/explain", obj{"tags": []string{"admin: policy"}, "operationId": "explain", "summary": "Explain a request of an identity",
		"description": "Each permission gate's decision, the columns and the SQL of a request an identity of the project would make, as `minimal policy explain` prints them. Nothing runs.",
		"security":    adminSecurity,
		"parameters": []any{
			obj{"name": "identity", "in": "query", "required": true, "description": "An identity of the project.", "schema": obj{"type": "string"}},
			obj{"name": "method", "in": "query", "required": false, "description": "GET (default), POST, PUT or DELETE.", "schema": obj{"type": "string"}},
			obj{"name": "path", "in": "query", "required": true, "description": "An Auto API request path with its query string.", "schema": obj{"type": "string"}},
			obj{"name": "body", "in": "query", "required": false, "description": "The JSON body of a POST or PUT.", "schema": obj{"type": "string"}},
		},
		"responses": withErrors(obj{"200": reply("The explanation.", obj{"type": "object", "properties": obj{
			"identity": str("The identity."), "roles": obj{"type": "array", "items": obj{"type": "string"}}, "key_type": str("Its key_type."),
			"method": str("The method."), "path": str("The path."), "action": str("create, read, update or delete."), "object": str("type/schema/table."),
			"gates":   obj{"type": "array", "items": obj{"type": "object", "properties": obj{"name": str("The gate."), "decision": str("pass, refuse, …"), "detail": str("Why.")}}},
			"columns": obj{"type": []string{"array", "null"}, "items": obj{"type": "string"}, "description": "Columns it may touch; null: every column."},
			"sql":     str("The statement, when every gate passed."), "args": obj{"type": "array", "items": obj{"type": "string"}},
			"outcome": obj{"type": "object", "properties": obj{"allowed": obj{"type": "boolean"}, "code": str("The error code it would get."), "message": str("The error message it would get.")}},
		}})}, "400", "401", "403", "404")})
}
