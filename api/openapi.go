package api

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// OpenAPIPath serves the OpenAPI 3.1 document of the whole REST surface,
// without authentication. A test walks the router and this document both
// ways, so a route cannot be added without being documented.
const OpenAPIPath = "/minimal/api/openapi.json"

// OpenAPIVersion is the OpenAPI version the document follows.
const OpenAPIVersion = "3.1.0"

// OpenAPIDocument returns the OpenAPI document as indented JSON. It is
// built once, from Go, so that the paths share their constants with the
// router.
var OpenAPIDocument = sync.OnceValue(func() []byte {
	b, err := json.MarshalIndent(openAPI(), "", "  ")
	if err != nil {
		panic("api: OpenAPI document does not encode: " + err.Error())
	}
	return append(b, '\n')
})

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(OpenAPIDocument())
}

// obj is a JSON object of the document.
type obj = map[string]any

func ref(kind, name string) obj { return obj{"$ref": "#/components/" + kind + "/" + name} }

func schemaRef(name string) obj { return ref("schemas", name) }

func jsonContent(schema any) obj {
	return obj{"content": obj{"application/json": obj{"schema": schema}}}
}

// reply is a response with a JSON body.
func reply(desc string, schema any) obj {
	r := jsonContent(schema)
	r["description"] = desc
	return r
}

// listOfSchema is the {"data":[…]} answer of every admin listing.
func listOfSchema(item string) obj {
	return obj{"type": "object", "required": []string{"data"}, "additionalProperties": false,
		"properties": obj{"data": obj{"type": "array", "items": schemaRef(item)}}}
}

// withErrors adds the shared error responses named by their status.
func withErrors(rs obj, statuses ...string) obj {
	for _, s := range statuses {
		rs[s] = ref("responses", s)
	}
	return rs
}

// body is a required JSON request body.
func body(schema any, desc string) obj {
	b := jsonContent(schema)
	b["required"] = true
	b["description"] = desc
	return b
}

// Security requirements.
var (
	tokenSecurity = []obj{{"accessToken": []string{}}, {"bearerToken": []string{}}}
	adminSecurity = []obj{{"accessToken": []string{}}, {"bearerToken": []string{}}, {"serverKey": []string{}}}
	keySecurity   = []obj{{"serverKey": []string{}}}
	noSecurity    = []obj{}
)

// pathParams describes every path parameter by name.
var pathParams = map[string]obj{
	"org":      {"description": "Org abbreviation. An org admin sees only the org of its token; another org answers 404.", "schema": obj{"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,31}$"}},
	"project":  {"description": "Project abbreviation, unique in the org.", "schema": obj{"type": "string"}},
	"type":     {"description": "Database type code: pg (PostgreSQL), ma (MariaDB/MySQL), ch (ClickHouse), ms (SQL Server), mi (mini-app tables).", "schema": obj{"type": "string"}},
	"schema":   {"description": "Schema exposed by the database.", "schema": obj{"type": "string"}},
	"table":    {"description": "Table or view name.", "schema": obj{"type": "string"}},
	"uri":      {"description": "The custom API's uri; it may hold '/'.", "schema": obj{"type": "string"}},
	"method":   {"description": "HTTP method of the custom API.", "schema": obj{"type": "string", "enum": []string{"GET", "POST", "PUT", "DELETE"}}},
	"version":  {"description": "Version of the custom API, 1 or more.", "schema": obj{"type": "integer", "minimum": 1}},
	"space":    {"description": "Space name.", "schema": obj{"type": "string"}},
	"identity": {"description": "Identity name.", "schema": obj{"type": "string"}},
	"role":     {"description": "Role name.", "schema": obj{"type": "string"}},
	"template": {"description": "Template name.", "schema": obj{"type": "string"}},
	"object":   {"description": "Object pattern type[/schema[/table]] with each '/' percent-encoded as %2F, e.g. pg%2Fpublic%2Femployees.", "schema": obj{"type": "string"}},
	"id":       {"description": "AI session id (X-Session-Id).", "schema": obj{"type": "string", "format": "uuid"}},
}

var paramName = regexp.MustCompile(`\{([^}/]+)\}`)

// document collects operations by path.
type document struct{ paths obj }

// op adds an operation, declaring the path parameters its path names.
func (d *document) op(method, path string, o obj) {
	var params []any
	for _, m := range paramName.FindAllStringSubmatch(path, -1) {
		p := obj{"name": m[1], "in": "path", "required": true}
		for k, v := range pathParams[m[1]] {
			p[k] = v
		}
		params = append(params, p)
	}
	if extra, ok := o["parameters"].([]any); ok {
		params = append(params, extra...)
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	// Token-authenticated calls pass the per-identity rate limit.
	if sec, _ := o["security"].([]obj); len(sec) > 0 && sec[0]["accessToken"] != nil {
		if rs, ok := o["responses"].(obj); ok {
			rs["429"] = ref("responses", "429")
		}
	}
	item, _ := d.paths[path].(obj)
	if item == nil {
		item = obj{}
		d.paths[path] = item
	}
	item[strings.ToLower(method)] = o
}

// resource describes one admin resource for crud.
type resource struct {
	tag        string
	coll, item string
	noun       string // singular, for summaries
	id         string // operationId stem, e.g. "Space"
	schema     string // answer schema
	create     string // create body schema; "" for none
	update     string // update body schema; "" for none
	updateVerb string // PATCH or PUT
	deleteNote string
	extra      string // appended to every description
}

// crud adds the list, create, get, update and delete operations of r.
func (d *document) crud(r resource) {
	d.op("GET", r.coll, obj{"tags": []string{r.tag}, "operationId": "list" + r.id + "s", "summary": "List " + r.noun + "s",
		"description": r.extra, "security": adminSecurity,
		"responses": withErrors(obj{"200": reply("Every "+r.noun+", in a stable order.", listOfSchema(r.schema))}, "401", "403", "404")})
	if r.create != "" {
		d.op("POST", r.coll, obj{"tags": []string{r.tag}, "operationId": "create" + r.id, "summary": "Create a " + r.noun,
			"description": r.extra, "security": adminSecurity,
			"requestBody": body(schemaRef(r.create), "Unknown fields are refused (400 naming them)."),
			"responses":   withErrors(obj{"201": reply("The "+r.noun+" as stored.", schemaRef(r.schema))}, "400", "401", "403", "404", "409", "413")})
	}
	d.op("GET", r.item, obj{"tags": []string{r.tag}, "operationId": "get" + r.id, "summary": "Get a " + r.noun,
		"description": r.extra, "security": adminSecurity,
		"responses": withErrors(obj{"200": reply("The "+r.noun+".", schemaRef(r.schema))}, "401", "403", "404")})
	if r.update != "" {
		verb := "Change"
		if r.updateVerb == "PUT" {
			verb = "Replace"
		}
		d.op(r.updateVerb, r.item, obj{"tags": []string{r.tag}, "operationId": "update" + r.id, "summary": verb + " a " + r.noun,
			"description": r.extra, "security": adminSecurity,
			"requestBody": body(schemaRef(r.update), "Unknown fields are refused (400 naming them)."),
			"responses":   withErrors(obj{"200": reply("The "+r.noun+" as stored.", schemaRef(r.schema))}, "400", "401", "403", "404", "409", "413")})
	}
	d.op("DELETE", r.item, obj{"tags": []string{r.tag}, "operationId": "delete" + r.id, "summary": "Delete a " + r.noun,
		"description": strings.TrimSpace(r.deleteNote + " " + r.extra), "security": adminSecurity,
		"responses": withErrors(obj{"204": obj{"description": "Deleted."}}, "401", "403", "404", "409")})
}

const policyNote = "The project's policy is read, changed and written back whole, with the checks of `minimal apply`; servers apply it within about two seconds. " +
	"Answers carry the policy's version (field `version`, header `ETag`); a write naming the version it read (header `If-Match`, or field `version`) answers 409 once the policy has moved past it. A write naming none is applied to the current policy, never over another server's edit."

// openAPI builds the document.
func openAPI() obj {
	d := &document{paths: obj{}}

	d.op("GET", "/livez", obj{"tags": []string{"health"}, "operationId": "livez", "summary": "Liveness",
		"description": "200 while the process serves HTTP.", "security": noSecurity,
		"responses": obj{"200": reply("Alive.", schemaRef("Status"))}})
	d.op("GET", "/readyz", obj{"tags": []string{"health"}, "operationId": "readyz", "summary": "Readiness",
		"description": "200 once the catalog is loaded; 503 with Retry-After before.", "security": noSecurity,
		"responses": obj{"200": reply("Ready.", schemaRef("Status")), "503": reply("Starting.", schemaRef("Status"))}})
	d.op("GET", OpenAPIPath, obj{"tags": []string{"meta"}, "operationId": "openapi", "summary": "This document",
		"security": noSecurity, "responses": obj{"200": reply("The OpenAPI 3.1 document.", obj{"type": "object"})}})

	autoPath := AutoPrefix + "/{org}/{project}/{type}/{schema}/{table}"
	autoErrors := []string{"400", "401", "403", "404", "503", "504"}
	qp := func(name, desc string, schema obj) obj {
		return obj{"name": name, "in": "query", "description": desc, "schema": schema}
	}
	text := obj{"type": "string"}
	countParam := qp("count", "Adds the total of the rows over every page: page.total and a Content-Range header (0-9/1234). exact counts; planned is the planner's estimate; estimated is planned, counted when under 100 000.", obj{"type": "string", "enum": []string{"exact", "planned", "estimated"}})
	orParam := qp("or", "A logic tree ORed, ANDed with the other filters: (a.eq.1,and(b.gt.2,c.in.(1,2))). and=(…) too.", text)
	aggParams := []any{
		qp("agg", "Makes the read an aggregate read: count(),sum(col),avg(col),min(col),max(col), each named func or func_column (name:func(col) to name it).", text),
		qp("group", "Grouping columns of an aggregate read.", text),
	}
	returnParam := qp("return", "rows answers the affected rows (only readable columns) in data.", obj{"type": "string", "enum": []string{"rows", "minimal"}})
	d.op("GET", autoPath, obj{"tags": []string{"auto"}, "operationId": "readRows", "summary": "Read rows",
		"description": "Reads a page of rows. `org` and `project` must be the token's (400 otherwise); a table the caller may not see answers the same 404 as a missing one. Rows stream as they are read. There is no default order.",
		"security":    tokenSecurity,
		"parameters":  append([]any{ref("parameters", "ps"), ref("parameters", "pg"), ref("parameters", "fc"), ref("parameters", "oy"), ref("parameters", "format"), ref("parameters", "filters"), countParam, orParam}, aggParams...),
		"responses": withErrors(obj{"200": obj{"description": "A page of rows in the requested format.", "content": obj{
			"application/json":     obj{"schema": schemaRef("ReadAnswer")},
			"application/x-ndjson": obj{"schema": obj{"type": "string", "description": "One JSON object per line, no envelope."}},
			"text/csv":             obj{"schema": obj{"type": "string"}},
			"application/xml":      obj{"schema": obj{"type": "string"}},
			"application/yaml":     obj{"schema": obj{"type": "string"}},
			"application/bson":     obj{"schema": obj{"type": "string", "contentEncoding": "binary", "description": "A sequence of BSON documents, one per row."}},
		}}}, autoErrors...)})
	d.op("POST", autoPath, obj{"tags": []string{"auto"}, "operationId": "insertRows", "summary": "Insert rows",
		"description": "Inserts one row or an array of rows in one transaction: if one fails none is written. Absent keys, and null for a column the database fills itself, let the database fill them.",
		"security":    tokenSecurity,
		"parameters": []any{
			qp("on_conflict", "Makes the insert an upsert: the unique columns a duplicate is found by.", text),
			qp("resolution", "merge (default) updates the duplicate within the caller's update scope; ignore keeps it.", obj{"type": "string", "enum": []string{"merge", "ignore"}}),
		},
		"requestBody": body(obj{"oneOf": []any{schemaRef("Row"), obj{"type": "array", "minItems": 1, "items": schemaRef("Row")}}}, "A row object or an array of row objects."),
		"responses":   withErrors(obj{"201": reply("Rows inserted, with the inserted rows (generated keys included) where the database can return them.", schemaRef("WriteAnswer"))}, append(autoErrors, "409", "413")...)})
	for _, m := range []string{"PUT", "PATCH"} {
		id := "updateRows"
		if m == "PATCH" {
			id = "patchRows"
		}
		d.op(m, autoPath, obj{"tags": []string{"auto"}, "operationId": id, "summary": "Update rows",
			"description": "Filters select the rows (at least one, or all=true). New values come in the body, or as set=column.value parameters. PUT and PATCH are the same.",
			"security":    tokenSecurity,
			"parameters":  []any{ref("parameters", "filters"), ref("parameters", "set"), ref("parameters", "all"), orParam, returnParam},
			"requestBody": obj{"required": false, "description": "New values by column.", "content": obj{"application/json": obj{"schema": schemaRef("Row")}}},
			"responses":   withErrors(obj{"200": reply("Rows updated.", schemaRef("WriteAnswer"))}, append(autoErrors, "409", "413")...)})
	}
	d.op("DELETE", autoPath, obj{"tags": []string{"auto"}, "operationId": "deleteRows", "summary": "Delete rows",
		"description": "Filters select the rows; a DELETE without a filter is refused unless all=true. ps and pg are ignored.",
		"security":    tokenSecurity,
		"parameters":  []any{ref("parameters", "filters"), ref("parameters", "all"), orParam, returnParam},
		"responses":   withErrors(obj{"200": reply("Rows deleted.", schemaRef("WriteAnswer"))}, autoErrors...)})
	discoveryOps(d)

	d.op("GET", MetricsPath, obj{"tags": []string{"health"}, "operationId": "metrics", "summary": "Prometheus metrics",
		"description": "Requests by face, route and status, latency histograms, pool stats per database, live AI sessions, refusals by gate. Served when the server runs with metrics (serve does).",
		"security":    noSecurity,
		"responses": obj{"200": obj{"description": "Prometheus text exposition (or OpenMetrics when asked).", "content": obj{
			"text/plain": obj{"schema": obj{"type": "string"}}, "application/openmetrics-text": obj{"schema": obj{"type": "string"}}}}}})

	customList := CustomPrefix + "/{org}/{project}"
	customCall := customList + "/{uri}"
	d.op("GET", customList, obj{"tags": []string{"custom"}, "operationId": "listCustomAPIs", "summary": "List custom APIs",
		"description": "The custom APIs of the project the caller may call, with their parameters.",
		"security":    tokenSecurity,
		"responses":   withErrors(obj{"200": reply("Callable custom APIs.", listOfSchema("CustomAPI"))}, "400", "401", "403", "404")})
	customRows := obj{"description": "A read's rows in the requested format (JSON: {\"data\":[…]}), or a write's {\"rows_affected\":n}.", "content": obj{
		"application/json":     obj{"schema": obj{"oneOf": []any{schemaRef("WriteAnswer"), obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": schemaRef("Row")}}}}}},
		"application/x-ndjson": obj{"schema": obj{"type": "string"}},
		"text/csv":             obj{"schema": obj{"type": "string"}},
		"application/xml":      obj{"schema": obj{"type": "string"}},
		"application/yaml":     obj{"schema": obj{"type": "string"}},
		"application/bson":     obj{"schema": obj{"type": "string", "contentEncoding": "binary"}},
	}}
	customParams := []any{
		obj{"name": "version", "in": "query", "description": "Version of the definition to call.", "schema": obj{"type": "integer", "minimum": 1}},
		ref("parameters", "format"),
	}
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		o := obj{"tags": []string{"custom"}, "operationId": "callCustomAPI" + m, "summary": "Call a custom API (" + m + ")",
			"description": "Runs the operator's parameterized SQL defined for this uri, method and version. Parameters are bound, checked against their types, never spliced; the caller must hold a role the definition allows; a write obeys locks and key_type.",
			"security":    tokenSecurity,
			"responses":   withErrors(obj{"200": customRows}, "400", "401", "403", "404", "409", "413", "503", "504")}
		params := append([]any{}, customParams...)
		if m == "GET" || m == "DELETE" {
			params = append(params, obj{"name": "params", "in": "query", "style": "form", "explode": true,
				"description": "The API's parameters, name=value.", "schema": obj{"type": "object", "additionalProperties": obj{"type": "string"}}})
		} else {
			o["requestBody"] = obj{"required": false, "description": "The API's parameters by name.", "content": obj{"application/json": obj{"schema": schemaRef("Row")}}}
		}
		o["parameters"] = params
		d.op(m, customCall, o)
	}

	d.op("POST", TokensPath, obj{"tags": []string{"auth"}, "operationId": "mintToken", "summary": "Mint a narrower token",
		"description": "Mints a token for the caller's own identity holding no more than the calling token: roles ⊆, key_type ⊆, expiry ≤.",
		"security":    tokenSecurity,
		"requestBody": obj{"required": false, "content": obj{"application/json": obj{"schema": schemaRef("TokenRequest")}}},
		"responses":   withErrors(obj{"201": reply("The token, shown once.", schemaRef("Token"))}, "400", "401", "403", "413")})

	d.op("GET", AdminSessionsPath, obj{"tags": []string{"admin: sessions"}, "operationId": "listSessions", "summary": "List AI sessions",
		"description": "The AI sessions of the caller's project, newest first. Needs the admin role (a token; the server key is not accepted here).",
		"security":    tokenSecurity,
		"parameters":  []any{obj{"name": "limit", "in": "query", "required": false, "description": "1 to 1000 (default 100).", "schema": obj{"type": "string"}}},
		"responses": withErrors(obj{"200": reply("Sessions, newest first.", obj{"type": "object", "properties": obj{
			"data": obj{"type": "array", "items": obj{"$ref": "#/components/schemas/Journal/properties/session"}}}})}, "400", "401", "403")})
	d.op("GET", AdminSessionsPath+"/{id}/journal", obj{"tags": []string{"admin: sessions"}, "operationId": "sessionJournal", "summary": "AI session journal",
		"description": "A session of the caller's project and every tool call journaled in it. Needs the admin role (a token; the server key is not accepted here).",
		"security":    tokenSecurity,
		"responses":   withErrors(obj{"200": reply("The session and its calls.", schemaRef("Journal"))}, "401", "403", "404")})

	// Admin API.
	d.op("POST", adminOrgs, obj{"tags": []string{"admin: tenancy"}, "operationId": "createOrg", "summary": "Create an org",
		"description": "Needs the server key. When the server has none (MINIMAL_SERVER_KEY unset), org creation through the API is disabled: 403 whatever the credentials.",
		"security":    keySecurity,
		"requestBody": body(schemaRef("OrgCreate"), "Unknown fields are refused (400 naming them)."),
		"responses":   withErrors(obj{"201": reply("The org as stored.", schemaRef("Org"))}, "400", "401", "403", "409", "413")})
	d.crud(resource{tag: "admin: tenancy", coll: adminOrgs, item: adminOrg, noun: "org", id: "Org", schema: "Org",
		update: "Rename", updateVerb: "PATCH", deleteNote: "Needs the server key; the org must have no project left (409).",
		extra: "An org admin sees only its own org."})
	d.crud(resource{tag: "admin: tenancy", coll: adminProjects, item: adminProject, noun: "project", id: "Project", schema: "Project",
		create: "ProjectCreate", update: "Rename", updateVerb: "PATCH",
		deleteNote: "Deletes the project's spaces and policy with it; refused (409) while identities or databases remain."})
	d.crud(resource{tag: "admin: tenancy", coll: adminProject + "/spaces", item: adminProject + "/spaces/{space}", noun: "space", id: "Space", schema: "Space",
		create: "SpaceCreate", update: "SpacePatch", updateVerb: "PATCH", deleteNote: "Refused (409) while identities belong to it.",
		extra: "mcp is the switch of the MCP face for the space's identities."})
	d.crud(resource{tag: "admin: identities", coll: adminProject + "/identities", item: adminProject + "/identities/{identity}", noun: "identity", id: "Identity", schema: "Identity",
		create: "IdentityCreate", update: "IdentityPatch", updateVerb: "PATCH",
		deleteNote: "Refused (409) for an identity with AI sessions in the journal: disable it instead.",
		extra:      "Disabling an identity or taking a role away reaches its live tokens within about two seconds."})
	// "List identitys" reads badly; fix the one summary.
	d.paths[adminProject+"/identities"].(obj)["get"].(obj)["summary"] = "List identities"
	d.paths[adminProject+"/identities"].(obj)["get"].(obj)["operationId"] = "listIdentities"
	d.op("POST", adminProject+"/identities/{identity}/tokens", obj{"tags": []string{"admin: identities"}, "operationId": "mintTokenFor", "summary": "Mint a token for an identity",
		"description": "Within what the identity holds (roles, key_type, at most 366 days). The token is shown once and not stored.",
		"security":    adminSecurity,
		"requestBody": obj{"required": false, "content": obj{"application/json": obj{"schema": schemaRef("TokenRequest")}}},
		"responses":   withErrors(obj{"201": reply("The token.", schemaRef("Token"))}, "400", "401", "403", "404", "413")})
	d.op("GET", adminProject+"/roles", obj{"tags": []string{"admin: identities"}, "operationId": "listRoles", "summary": "List roles",
		"description": "Roles are derived: those held by identities, bound to templates or scoped, plus the built-in admin.",
		"security":    adminSecurity,
		"responses":   withErrors(obj{"200": reply("Every role of the project.", listOfSchema("Role"))}, "401", "403", "404")})
	d.op("GET", adminProject+"/roles/{role}", obj{"tags": []string{"admin: identities"}, "operationId": "getRole", "summary": "Get a role",
		"security":  adminSecurity,
		"responses": withErrors(obj{"200": reply("The role.", schemaRef("Role"))}, "401", "403", "404")})
	d.op("GET", adminProject+"/audit", obj{"tags": []string{"admin: identities"}, "operationId": "listAudit", "summary": "Read the audit log",
		"description": "Every data operation of the project (both faces, custom APIs included), newest first: identity, roles, face, object, action, rows, outcome, request id, duration.",
		"security":    adminSecurity,
		"parameters": []any{
			obj{"name": "identity", "in": "query", "required": false, "description": "An identity name.", "schema": obj{"type": "string"}},
			obj{"name": "object", "in": "query", "required": false, "description": "An exact type/schema/table, or custom:<key>.", "schema": obj{"type": "string"}},
			obj{"name": "action", "in": "query", "required": false, "description": "create, read, update, delete or write.", "schema": obj{"type": "string"}},
			obj{"name": "outcome", "in": "query", "required": false, "description": "ok, error, or an error code.", "schema": obj{"type": "string"}},
			obj{"name": "since", "in": "query", "required": false, "description": "RFC 3339 time, inclusive.", "schema": obj{"type": "string"}},
			obj{"name": "until", "in": "query", "required": false, "description": "RFC 3339 time, exclusive.", "schema": obj{"type": "string"}},
			obj{"name": "before", "in": "query", "required": false, "description": "An entry id: page backwards from it.", "schema": obj{"type": "string"}},
			obj{"name": "limit", "in": "query", "required": false, "description": "1 to 1000 (default 100).", "schema": obj{"type": "string"}},
		},
		"responses": withErrors(obj{"200": reply("Audit entries, newest first.", listOfSchema("AuditEntry"))}, "400", "401", "403", "404")})

	explainOp(d)

	dbNote := "The DSN is write-only: it is sealed at rest and no answer contains it. Registering or changing a DSN runs a connection test first (400 CONNECTION_TEST_FAILED). A mini-app (mi) directory needs the server key."
	d.crud(resource{tag: "admin: databases", coll: adminProject + "/databases", item: adminProject + "/databases/{type}/{schema}", noun: "database", id: "Database", schema: "Database",
		create: "DatabaseCreate", update: "DatabasePatch", updateVerb: "PATCH", extra: dbNote})
	d.op("POST", adminProject+"/databases/{type}/{schema}/test", obj{"tags": []string{"admin: databases"}, "operationId": "testDatabase", "summary": "Test a database's connection",
		"description": "Connects with the stored DSN, pings and lists tables, like `minimal db test`.",
		"security":    adminSecurity,
		"responses":   withErrors(obj{"200": reply("The database answers.", schemaRef("ConnectionTest"))}, "400", "401", "403", "404")})
	d.op("POST", adminProject+"/databases/{type}/{schema}/reload", obj{"tags": []string{"admin: databases"}, "operationId": "reloadDatabase", "summary": "Read a database's tables again",
		"description": "Reads the database's tables and columns again now, on every server, like `minimal db reload` (after a migration).",
		"security":    adminSecurity,
		"responses":   withErrors(obj{"200": reply("The tables were read.", schemaRef("ConnectionTest"))}, "400", "401", "403", "404", "503")})

	d.crud(resource{tag: "admin: policy", coll: adminProject + "/templates", item: adminProject + "/templates/{template}", noun: "template", id: "Template", schema: "Template",
		create: "TemplateCreate", update: "TemplatePut", updateVerb: "PUT", deleteNote: "Refused (409) while a binding names it.", extra: policyNote})
	d.crud(resource{tag: "admin: policy", coll: adminProject + "/bindings", item: adminProject + "/bindings/{role}", noun: "binding", id: "Binding", schema: "Binding",
		create: "BindingCreate", update: "BindingPut", updateVerb: "PUT", extra: policyNote})
	d.crud(resource{tag: "admin: policy", coll: adminProject + "/locks", item: adminProject + "/locks/{object}", noun: "lock", id: "Lock", schema: "Lock",
		create: "LockCreate", update: "LockPut", updateVerb: "PUT", extra: policyNote})
	d.crud(resource{tag: "admin: policy", coll: adminProject + "/scopes", item: adminProject + "/scopes/{role}/{object}", noun: "scope", id: "Scope", schema: "Scope",
		create: "ScopeCreate", update: "ScopePut", updateVerb: "PUT", extra: policyNote + " Filters are checked like `minimal apply` checks them."})

	customItem := adminProject + "/apis/{method}/{version}/{uri}"
	customNote := "Checked like the custom_apis section of a policy file (custom.Check) before it is stored; servers serve it within about two seconds."
	d.op("GET", adminProject+"/apis", obj{"tags": []string{"admin: custom APIs"}, "operationId": "listCustomAPIDefinitions", "summary": "List custom API definitions",
		"description": "Every definition of the project, SQL included.", "security": adminSecurity,
		"responses": withErrors(obj{"200": reply("Every definition.", listOfSchema("CustomAPIDefinition"))}, "401", "403", "404")})
	d.op("POST", adminProject+"/apis", obj{"tags": []string{"admin: custom APIs"}, "operationId": "createCustomAPIDefinition", "summary": "Create a custom API definition",
		"description": customNote, "security": adminSecurity,
		"requestBody": body(schemaRef("CustomAPIDefinitionBody"), "Unknown fields are refused (400 naming them)."),
		"responses":   withErrors(obj{"201": reply("The definition as stored.", schemaRef("CustomAPIDefinition"))}, "400", "401", "403", "404", "409", "413")})
	d.op("GET", customItem, obj{"tags": []string{"admin: custom APIs"}, "operationId": "getCustomAPIDefinition", "summary": "Get a custom API definition",
		"security": adminSecurity, "parameters": []any{}, "responses": withErrors(obj{"200": reply("The definition.", schemaRef("CustomAPIDefinition"))}, "400", "401", "403", "404")})
	d.op("PUT", customItem, obj{"tags": []string{"admin: custom APIs"}, "operationId": "replaceCustomAPIDefinition", "summary": "Replace a custom API definition",
		"description": customNote + " uri, method and version, when given, must be the path's.", "security": adminSecurity,
		"requestBody": body(schemaRef("CustomAPIDefinitionBody"), "Unknown fields are refused (400 naming them)."),
		"responses":   withErrors(obj{"200": reply("The definition as stored.", schemaRef("CustomAPIDefinition"))}, "400", "401", "403", "404", "413")})
	d.op("DELETE", customItem, obj{"tags": []string{"admin: custom APIs"}, "operationId": "deleteCustomAPIDefinition", "summary": "Delete a custom API definition",
		"security": adminSecurity, "responses": withErrors(obj{"204": obj{"description": "Deleted."}}, "400", "401", "403", "404")})

	return obj{
		"openapi": OpenAPIVersion,
		"info": obj{
			"title":       "Minimal gateway REST API",
			"version":     "1",
			"description": "The REST face of the Minimal data-access gateway: the Auto API over every registered table, custom APIs, the tokens endpoint, the admin API, health and metrics endpoints. Errors share one envelope. See docs/rest.md and docs/admin-api.md.",
			"license":     obj{"name": "Proprietary"},
		},
		// Relative: the gateway that served this document, whatever its
		// address; every path is absolute under it.
		"servers": []obj{{"url": "/", "description": "This gateway (the host and port this document was fetched from)."}},
		"tags": []obj{
			{"name": "auto", "description": "The Auto API: every table of a registered database."},
			{"name": "custom", "description": "Custom APIs: operator-defined parameterized SQL."},
			{"name": "auth", "description": "Tokens."},
			{"name": "admin: tenancy", "description": "Orgs, projects, spaces."},
			{"name": "admin: identities", "description": "Identities, their tokens, roles."},
			{"name": "admin: databases", "description": "Registered databases (secrets write-only)."},
			{"name": "admin: policy", "description": "Templates, bindings, locks, scopes."},
			{"name": "admin: custom APIs", "description": "Custom API definitions."},
			{"name": "admin: sessions", "description": "AI session journals."},
			{"name": "health", "description": "Liveness and readiness."},
			{"name": "meta", "description": "This document."},
		},
		"security":   tokenSecurity,
		"paths":      d.paths,
		"components": components(),
	}
}

func str(desc string) obj { return obj{"type": "string", "description": desc} }
func strs(desc string) obj {
	return obj{"type": "array", "items": obj{"type": "string"}, "description": desc}
}

// object is a closed object schema (additionalProperties false): request
// bodies are decoded strictly.
func object(required []string, props obj) obj {
	o := obj{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func components() obj {
	stamp := obj{"type": "string", "format": "date-time"}
	mask := obj{"type": "string", "pattern": "^[c-][r-][u-][d-]$", "description": "CRUD mask in create-read-update-delete order: crud, -r--, cr--, …"}
	policyVersion := obj{"type": "integer", "description": "The version of the project's policy this was read at; also sent as the ETag."}
	writeVersion := obj{"type": "integer", "description": "The policy version this edit was read at, as If-Match does: 409 once the policy has moved past it."}
	rule := object([]string{"object", "actions"}, obj{
		"object":  str("Object pattern type[/schema[/table]], a glob per segment."),
		"actions": obj{"type": "array", "minItems": 1, "items": obj{"type": "string", "enum": []string{"create", "read", "update", "delete", "schema"}}},
		"columns": strs("The only columns granted; absent grants every column."),
		"effect":  obj{"type": "string", "enum": []string{"allow", "deny"}, "default": "allow"},
	})
	errStatus := func(desc string) obj { return reply(desc, schemaRef("Error")) }
	return obj{
		"securitySchemes": obj{
			"accessToken": obj{"type": "apiKey", "in": "header", "name": "LB-Access-Token", "description": "A token signed by the gateway. Admin routes need the admin role."},
			"bearerToken": obj{"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "The same token as Authorization: Bearer."},
			"serverKey":   obj{"type": "apiKey", "in": "header", "name": ServerKeyHeader, "description": "The operator's server key (MINIMAL_SERVER_KEY on serve): org creation and deletion, mini-app directories, any org."},
		},
		"parameters": obj{
			"ps":     obj{"name": "ps", "in": "query", "required": true, "description": "Page size, 1 … --max-page-size.", "schema": obj{"type": "integer", "minimum": 1}},
			"pg":     obj{"name": "pg", "in": "query", "required": true, "description": "Page number, 0-based.", "schema": obj{"type": "integer", "minimum": 0}},
			"fc":     obj{"name": "fc", "in": "query", "description": "Columns to return, comma-separated (default: every visible column).", "schema": obj{"type": "string"}, "example": "id,full_name"},
			"oy":     obj{"name": "oy", "in": "query", "description": "Order: column.as|asc|ds|desc, comma-separated. No default order.", "schema": obj{"type": "string"}, "example": "department_id.ds,full_name.as"},
			"format": obj{"name": "format", "in": "query", "description": "Answer format.", "schema": obj{"type": "string", "enum": []string{"json", "ndjson", "csv", "xml", "yaml", "bson"}, "default": "json"}},
			"filters": obj{"name": "filters", "in": "query", "style": "form", "explode": true,
				"description": "Filters column=op.value, AND-ed. Operators: eq ne (neq) gt ge (gte) lt le (lte) like ilike li rli in nin bw is, any prefixed by not. Values may be double-quoted to hold commas. Unknown column or operator: 400 naming it.",
				"schema":      obj{"type": "object", "additionalProperties": obj{"type": "string"}}, "example": obj{"department_id": "eq.6", "full_name": "like.Raf*"}},
			"set": obj{"name": "set", "in": "query", "style": "form", "explode": true, "description": "New value column.value (unquoted null sets NULL).", "schema": obj{"type": "array", "items": obj{"type": "string"}}},
			"all": obj{"name": "all", "in": "query", "description": "true to update or delete every row (no filter).", "schema": obj{"type": "boolean"}},
		},
		"responses": obj{
			"400": errStatus("INVALID (or UNSUPPORTED, or CONNECTION_TEST_FAILED): a bad parameter, body or field, named in the message."),
			"401": errStatus("UNAUTHENTICATED: missing, malformed, expired or revoked token, disabled identity, or a wrong server key."),
			"403": errStatus("FORBIDDEN: refused by the permissions; the message names the roles held."),
			"404": errStatus("NOT_FOUND: unknown, hidden or other-org resource."),
			"409": errStatus("CONFLICT: a duplicate, or something still in use."),
			"413": errStatus("TOO_LARGE: body over --max-body-bytes."),
			"429": errStatus("RATE_LIMITED: over the per-identity rate limit; Retry-After says when to try again."),
			"503": errStatus("UNAVAILABLE: the database cannot be reached; Retry-After says when to try again."),
			"504": errStatus("TIMEOUT: the statement ran past --statement-timeout."),
		},
		"schemas": obj{
			"Error": obj{"type": "object", "required": []string{"error"}, "properties": obj{"error": obj{
				"type": "object", "required": []string{"code", "message"},
				"properties": obj{"code": str("INVALID, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CONFLICT, TOO_LARGE, UNSUPPORTED, UNAVAILABLE, TIMEOUT, INTERNAL, METHOD_NOT_ALLOWED, RATE_LIMITED, CONNECTION_TEST_FAILED."),
					"message": str("Safe to show; says what to fix."), "request_id": str("Quote it when reporting a problem.")}}}},
			"Status": obj{"type": "object", "properties": obj{"status": obj{"type": "string"}}},
			"Row":    obj{"type": "object", "description": "Column name to value.", "additionalProperties": true},
			"Page": obj{"type": "object", "properties": obj{"number": obj{"type": "integer"}, "size": obj{"type": "integer"},
				"total": obj{"type": "integer", "description": "With count=…: the rows over every page."}}},
			"ReadAnswer": obj{"type": "object", "required": []string{"data", "page"}, "properties": obj{"data": obj{"type": "array", "items": schemaRef("Row")}, "page": schemaRef("Page")}},
			"WriteAnswer": obj{"type": "object", "required": []string{"rows_affected"}, "properties": obj{
				"rows_affected": obj{"type": "integer"}, "data": obj{"type": "array", "items": schemaRef("Row"), "description": "Inserted rows, when the database returns them."}}},
			"TokenRequest": object(nil, obj{"roles": strs("Subset of the roles held (default: all)."), "key_type": mask, "ttl": str("Lifetime such as 30m or 720h.")}),
			"Token": obj{"type": "object", "properties": obj{"token": str("The LB-Access-Token."), "jti": str("Token id, for revocation."),
				"identity": obj{"type": "string"}, "roles": strs(""), "key_type": mask, "expires_at": stamp}},
			"Journal": obj{"type": "object", "properties": obj{
				"session": obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "identity": obj{"type": "string"}, "name": obj{"type": "string"},
					"context": obj{"type": "string"}, "state": obj{"type": "string", "enum": []string{"live", "ended", "expired"}}, "started_at": stamp,
					"last_seen_at": stamp, "expires_at": obj{"type": []string{"string", "null"}, "format": "date-time"}, "ended_at": obj{"type": []string{"string", "null"}, "format": "date-time"}}},
				"calls": obj{"type": "array", "items": obj{"type": "object", "properties": obj{"seq": obj{"type": "integer"}, "tool": obj{"type": "string"},
					"arguments": obj{}, "started_at": stamp, "outcome": obj{"type": "string"}, "message": obj{"type": "string"}, "rows": obj{"type": "integer"}, "duration_ms": obj{"type": "number"}}}}}},

			"CustomAPI": obj{"type": "object", "properties": obj{"uri": obj{"type": "string"}, "method": obj{"type": "string"}, "version": obj{"type": "integer"},
				"mode": obj{"type": "string", "enum": []string{"read", "write"}}, "description": obj{"type": "string"},
				"params": obj{"type": "array", "items": obj{"type": "object", "properties": obj{"name": obj{"type": "string"}, "type": obj{"type": "string"},
					"required": obj{"type": "boolean"}, "default": obj{"type": "string"}, "max_length": obj{"type": "integer"}, "min": obj{"type": "number"}, "max": obj{"type": "number"}}}}}},

			"CustomParam": object([]string{"name", "type"}, obj{"name": obj{"type": "string"},
				"type":     obj{"type": "string", "enum": []string{"string", "integer", "number", "boolean", "date", "timestamp", "uuid"}},
				"required": obj{"type": "boolean"}, "default": str("Value in text form used when the caller omits it."),
				"max_length": obj{"type": "integer"}, "min": obj{"type": "number"}, "max": obj{"type": "number"}}),
			"CustomAPIDefinitionBody": object(nil, obj{"uri": str("Segments of [a-z0-9_-] joined by '/'; required on create."),
				"method": obj{"type": "string", "enum": []string{"GET", "POST", "PUT", "DELETE"}}, "version": obj{"type": "integer", "minimum": 1},
				"type": str("Database type."), "schema": str("Database schema."), "mode": obj{"type": "string", "enum": []string{"read", "write"}},
				"description": obj{"type": "string"}, "roles": strs("Roles that may call it (admin always may)."), "tables": strs("Tables the statements read, for locks."),
				"params": obj{"type": "array", "items": schemaRef("CustomParam")}, "sql": str("The one statement, with :name placeholders."),
				"statements": strs("A write's statements, run in order in one transaction.")}),
			"CustomAPIDefinition": obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "uri": obj{"type": "string"}, "method": obj{"type": "string"},
				"version": obj{"type": "integer"}, "type": obj{"type": "string"}, "schema": obj{"type": "string"}, "mode": obj{"type": "string"},
				"description": obj{"type": "string"}, "roles": strs(""), "tables": strs(""), "params": obj{"type": "array", "items": schemaRef("CustomParam")},
				"sql": obj{"type": "string"}, "statements": strs(""), "created_at": stamp, "updated_at": stamp}},
			"Org":           obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "name": obj{"type": "string"}, "abbr": obj{"type": "string"}, "created_at": stamp}},
			"OrgCreate":     object([]string{"name", "abbr"}, obj{"name": str("Display name, unique."), "abbr": str("Lower-case abbreviation used in URLs and tokens; cannot change.")}),
			"Rename":        object(nil, obj{"name": str("New display name; the abbreviation cannot change.")}),
			"Project":       obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "org": str("Org abbreviation."), "name": obj{"type": "string"}, "abbr": obj{"type": "string"}}},
			"ProjectCreate": object([]string{"name", "abbr"}, obj{"name": str("Display name, unique in the org."), "abbr": str("Lower-case abbreviation, unique in the org; cannot change.")}),
			"Space":         obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "name": obj{"type": "string"}, "mcp": obj{"type": "boolean"}}},
			"SpaceCreate":   object([]string{"name"}, obj{"name": str("Unique in the project; cannot change."), "mcp": obj{"type": "boolean", "default": false, "description": "MCP face on for the space's identities."}}),
			"SpacePatch":    object(nil, obj{"mcp": obj{"type": "boolean"}, "name": str("Accepted only unchanged.")}),
			"Identity": obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "name": obj{"type": "string"},
				"kind": obj{"type": "string", "enum": []string{"user", "service", "mcp"}}, "space": obj{"type": "string"}, "roles": strs(""),
				"claims": obj{"type": "object"}, "key_type": mask, "enabled": obj{"type": "boolean"}, "created_at": stamp, "updated_at": stamp}},
			"IdentityCreate": object([]string{"name", "space"}, obj{"name": str("Unique in the project; cannot change."),
				"kind": obj{"type": "string", "enum": []string{"user", "service", "mcp"}, "default": "user"}, "space": str("Space name."),
				"roles": strs("Default none."), "claims": obj{"type": "object", "description": "Extra token claims, used by row scopes as {claims.NAME}."},
				"key_type": mask, "enabled": obj{"type": "boolean", "default": true}}),
			"IdentityPatch": object(nil, obj{"kind": obj{"type": "string", "enum": []string{"user", "service", "mcp"}}, "space": obj{"type": "string"},
				"roles": strs("Replaces the roles."), "claims": obj{"type": "object", "description": "Replaces the claims."}, "key_type": mask,
				"enabled": obj{"type": "boolean"}, "name": str("Accepted only unchanged.")}),
			"AuditEntry": obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "at": obj{"type": "string", "format": "date-time"},
				"identity": obj{"type": "string"}, "roles": obj{"type": "array", "items": obj{"type": "string"}}, "face": obj{"type": "string"},
				"object": obj{"type": "string"}, "action": obj{"type": "string"}, "rows": obj{"type": "integer"}, "outcome": obj{"type": "string"},
				"message": obj{"type": "string"}, "request_id": obj{"type": "string"}, "duration_ms": obj{"type": "number"}}},
			"Role": obj{"type": "object", "properties": obj{"name": obj{"type": "string"}, "builtin": obj{"type": "boolean"},
				"identities": strs("Identities holding it."), "templates": strs("Templates bound to it."), "scopes": strs("Objects it is scoped on.")}},
			"Database": obj{"type": "object", "description": "No DSN: secrets are write-only.", "properties": obj{"id": obj{"type": "string"}, "type": obj{"type": "string"},
				"schema": obj{"type": "string"}, "created_at": stamp, "updated_at": stamp,
				"warning": str("After a create or a DSN change only: present when the connection test found no table the gateway can see.")}},
			"DatabaseCreate": object([]string{"type", "schema", "dsn"}, obj{"type": str("pg, ma, ch, ms or mi."), "schema": str("Schema to expose; (type, schema) is unique in the project."),
				"dsn": obj{"type": "string", "writeOnly": true, "description": "The driver's connection string. Sealed at rest, never answered."}}),
			"DatabasePatch": object([]string{"dsn"}, obj{"dsn": obj{"type": "string", "writeOnly": true, "description": "New connection string; tested first."},
				"type": str("Accepted only unchanged."), "schema": str("Accepted only unchanged.")}),
			"ConnectionTest": obj{"type": "object", "properties": obj{"status": obj{"type": "string", "const": "ok"}, "type": obj{"type": "string"}, "schema": obj{"type": "string"},
				"tables": obj{"type": "integer", "description": "Tables and views found."}, "warning": obj{"type": "string", "description": "Present when the schema holds no table the gateway can see."}}},
			"Rule": rule,
			"Template": obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "name": obj{"type": "string"},
				"rules": obj{"type": "array", "items": schemaRef("Rule")}, "version": policyVersion}},
			"TemplateCreate": object([]string{"name"}, obj{"name": obj{"type": "string"}, "rules": obj{"type": "array", "items": schemaRef("Rule")}, "version": writeVersion}),
			"TemplatePut":    object([]string{"rules"}, obj{"name": str("Accepted only equal to the path."), "rules": obj{"type": "array", "items": schemaRef("Rule")}, "version": writeVersion}),
			"Binding":        object([]string{"role", "templates"}, obj{"role": obj{"type": "string"}, "templates": strs("Template names."), "version": policyVersion}),
			"BindingCreate":  object([]string{"role", "templates"}, obj{"role": obj{"type": "string"}, "templates": strs("Template names."), "version": writeVersion}),
			"BindingPut":     object([]string{"templates"}, obj{"role": str("Accepted only equal to the path."), "templates": strs("Template names."), "version": writeVersion}),
			"Lock":           obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "object": str("Object pattern."), "mask": mask, "version": policyVersion}},
			"LockCreate":     object([]string{"object", "mask"}, obj{"object": str("Object pattern type[/schema[/table]]."), "mask": mask, "version": writeVersion}),
			"LockPut":        object([]string{"mask"}, obj{"object": str("Accepted only equal to the path."), "mask": mask, "version": writeVersion}),
			"Scope": object([]string{"role", "object", "filter"}, obj{"role": obj{"type": "string"}, "object": str("Object pattern."),
				"filter": str("REST filter terms joined by &, with {identity}, {space}, {org}, {project}, {claims.NAME}."), "version": policyVersion}),
			"ScopeCreate": object([]string{"role", "object", "filter"}, obj{"role": obj{"type": "string"}, "object": str("Object pattern."),
				"filter": str("REST filter terms joined by &, with {identity}, {space}, {org}, {project}, {claims.NAME}."), "version": writeVersion}),
			"ScopePut": object([]string{"filter"}, obj{"role": str("Accepted only equal to the path."), "object": str("Accepted only equal to the path."), "filter": obj{"type": "string"}, "version": writeVersion}),
		},
	}
}
