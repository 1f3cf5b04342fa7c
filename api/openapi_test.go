package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/observe"
)

// wildcardParam is how the document names a route's trailing chi
// wildcard ("/*"): a path parameter that may hold '/'.
const wildcardParam = "{uri}"

// routerRoutes walks a fully configured router (metrics on, so that every
// optional route is mounted) and returns "METHOD path" in the document's
// spelling.
func routerRoutes(t *testing.T) map[string]bool {
	t.Helper()
	h := api.New(api.Deps{}, api.Config{Metrics: observe.NewMetrics("test")})
	routes, ok := h.(chi.Routes)
	if !ok {
		t.Fatalf("api.New returns %T, not a chi router", h)
	}
	out := map[string]bool{}
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.HasSuffix(route, "/*") {
			route = strings.TrimSuffix(route, "*") + wildcardParam
		}
		if len(route) > 1 {
			route = strings.TrimSuffix(route, "/")
		}
		out[method+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenAPIMatchesRouter keeps the document and the router from
// drifting: every route is documented and every documented operation is
// routed.
func TestOpenAPIMatchesRouter(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPIDocument(), &doc); err != nil {
		t.Fatalf("document is not JSON: %v", err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	routed := routerRoutes(t)
	var missing, stale []string
	for r := range routed {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !routed[d] {
			stale = append(stale, d)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("routes missing from the OpenAPI document (add them in api/openapi.go):\n  %s", strings.Join(missing, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("documented operations with no route:\n  %s", strings.Join(stale, "\n  "))
	}
	for _, must := range []string{
		"GET " + api.AutoPrefix + "/{org}/{project}/{type}/{schema}/{table}",
		"POST " + api.TokensPath, "GET /livez", "GET /readyz", "GET " + api.OpenAPIPath,
		"POST " + api.AdminPrefix + "/orgs", "DELETE " + api.AdminPrefix + "/orgs/{org}/projects/{project}/scopes/{role}/{object}",
	} {
		if !routed[must] || !documented[must] {
			t.Errorf("%s: routed %v, documented %v", must, routed[must], documented[must])
		}
	}
}

var pathParamRef = regexp.MustCompile(`\{([^}/]+)\}`)

// TestOpenAPIDocument checks the document itself: served without a token,
// OpenAPI 3.1, every $ref resolves, every operation has a unique id,
// responses, and exactly the path parameters its path names.
func TestOpenAPIDocument(t *testing.T) {
	g := newGateway(t, engine.Config{})
	r := g.send("GET", api.OpenAPIPath, nil, nil)
	expect(t, r, 200)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("content type %q", ct)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("served document is not JSON: %v", err)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Fatalf("openapi %q, want 3.1.x", v)
	}
	for _, k := range []string{"info", "paths", "components"} {
		if doc[k] == nil {
			t.Fatalf("no %s", k)
		}
	}

	// Every $ref points at something.
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				if _, ok := resolve(doc, ref); !ok {
					t.Errorf("%s: $ref %q does not resolve", path, ref)
				}
			}
			for k, sub := range x {
				walk(path+"/"+k, sub)
			}
		case []any:
			for _, sub := range x {
				walk(path+"[]", sub)
			}
		}
	}
	walk("#", doc)

	ids := map[string]string{}
	ops := 0
	for path, item := range doc["paths"].(map[string]any) {
		want := map[string]bool{}
		for _, m := range pathParamRef.FindAllStringSubmatch(path, -1) {
			want[m[1]] = true
		}
		for method, o := range item.(map[string]any) {
			ops++
			op := o.(map[string]any)
			where := strings.ToUpper(method) + " " + path
			id, _ := op["operationId"].(string)
			if id == "" {
				t.Errorf("%s: no operationId", where)
			} else if other, dup := ids[id]; dup {
				t.Errorf("%s: operationId %q also used by %s", where, id, other)
			}
			ids[id] = where
			if rs, _ := op["responses"].(map[string]any); len(rs) == 0 {
				t.Errorf("%s: no responses", where)
			}
			if _, ok := op["security"]; !ok {
				t.Errorf("%s: security not stated", where)
			}
			got := map[string]bool{}
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				pm := p.(map[string]any)
				if ref, ok := pm["$ref"].(string); ok {
					v, _ := resolve(doc, ref)
					pm, _ = v.(map[string]any)
				}
				if pm["in"] == "path" {
					if pm["required"] != true {
						t.Errorf("%s: path parameter %v not required", where, pm["name"])
					}
					got[pm["name"].(string)] = true
				}
			}
			for n := range want {
				if !got[n] {
					t.Errorf("%s: path parameter %q not declared", where, n)
				}
			}
			for n := range got {
				if !want[n] {
					t.Errorf("%s: declares path parameter %q its path does not name", where, n)
				}
			}
		}
	}
	if ops < 60 {
		t.Errorf("only %d operations documented", ops)
	}

	// Request bodies of the admin API are closed, as the decoder is strict.
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"OrgCreate", "IdentityCreate", "IdentityPatch", "DatabaseCreate", "TemplateCreate", "Rule", "LockCreate", "Scope"} {
		if s, _ := schemas[name].(map[string]any); s == nil || s["additionalProperties"] != false {
			t.Errorf("schema %s is not closed: %v", name, s)
		}
	}
	// The DSN is write-only and absent from the answer schema.
	if props := schemas["Database"].(map[string]any)["properties"].(map[string]any); props["dsn"] != nil {
		t.Error("Database answer schema has a dsn")
	}
	if dsn := schemas["DatabaseCreate"].(map[string]any)["properties"].(map[string]any)["dsn"].(map[string]any); dsn["writeOnly"] != true {
		t.Error("DatabaseCreate.dsn is not writeOnly")
	}
	sec := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)
	var names []string
	for k := range sec {
		names = append(names, k)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "accessToken,bearerToken,serverKey" {
		t.Errorf("security schemes %v", names)
	}
}

// resolve follows a local JSON pointer ("#/components/schemas/Org").
func resolve(doc map[string]any, ref string) (any, bool) {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	var cur any = doc
	for _, part := range strings.Split(rest, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}
