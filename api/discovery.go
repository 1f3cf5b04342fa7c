package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Discovery of the Auto API: what the caller may see, nothing more. Every
// listing is built from engine.Access, so a hidden table or column is
// absent exactly as from the MCP meta_* tools, and the actions shown are
// those permissions.Authorize grants.
const (
	// DescribeSegment, after a table's path, describes the table. A table
	// read has exactly five segments after AutoPrefix, so the sixth cannot
	// be mistaken for a table.
	DescribeSegment = "_describe"
	// CallerOpenAPISegment, after {org}/{project}, serves the caller's
	// OpenAPI document (no database type is spelled like it).
	CallerOpenAPISegment = "openapi.json"
)

// discoveryRoutes mounts the listings and the caller's OpenAPI document
// under AutoPrefix/{org}/{project}; the table description is mounted with
// the table's routes.
func (s *Server) discoveryRoutes(r chi.Router) {
	r.Use(s.authenticate)
	r.Get("/", s.listDatabases)
	r.Get("/"+CallerOpenAPISegment, s.callerOpenAPI)
	r.Get("/{type}/{schema}", s.listTables)
}

// tenant checks that the path names the token's org and project (400 as
// on every Auto API route otherwise).
func tenant(r *http.Request) (*auth.Principal, error) {
	p := auth.PrincipalFrom(r.Context())
	if p == nil {
		return nil, fault.New(fault.Unauthenticated, "missing access token")
	}
	org, project := pathParam(r, "org"), pathParam(r, "project")
	if org != p.Org || project != p.Project {
		return nil, fault.New(fault.Invalid, "org/project %q/%q in the path do not match the token's %q/%q", org, project, p.Org, p.Project)
	}
	return p, nil
}

// actionNames names actions as policies do: create, read, update, delete.
func actionNames(gs []engine.ActionGrant) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Action.String()
	}
	return out
}

// tableEntry is a table in a listing.
type tableEntry struct {
	Type    string   `json:"type,omitempty"`
	Schema  string   `json:"schema,omitempty"`
	Table   string   `json:"table"`
	Actions []string `json:"actions"`
}

// databaseEntry is a database in the project listing.
type databaseEntry struct {
	Type   string       `json:"type"`
	Schema string       `json:"schema"`
	Tables []tableEntry `json:"tables"`
	// Error says why the tables of a database that cannot be reached now
	// are not listed (code and message as in an error answer).
	Error *entryError `json:"error,omitempty"`
}

type entryError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// listDatabases answers the databases of the project in which the caller
// sees at least one table, each with those tables. A database that cannot
// be reached is listed with its error rather than failing the listing.
func (s *Server) listDatabases(w http.ResponseWriter, r *http.Request) {
	p, err := tenant(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := []databaseEntry{}
	for _, db := range s.eng.Databases(p) {
		e := databaseEntry{Type: db[0], Schema: db[1], Tables: []tableEntry{}}
		ts, err := s.eng.Access(r.Context(), p, db[0], db[1])
		switch {
		case fault.KindOf(err) == fault.NotFound:
			continue // removed since Databases looked
		case err != nil:
			f := fault.As(err)
			e.Error, e.Tables = &entryError{Code: f.Kind.String(), Message: f.Message}, nil
		case len(ts) == 0:
			continue // nothing visible: absent, as a hidden table is
		}
		for _, t := range ts {
			e.Tables = append(e.Tables, tableEntry{Table: t.Name, Actions: actionNames(t.Actions)})
		}
		out = append(out, e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
}

// listTables answers the tables of one database the caller may see, as
// meta_list_tables does (an unregistered database is a 404).
func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	p, err := tenant(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	typ, schema := pathParam(r, "type"), pathParam(r, "schema")
	ts, err := s.eng.Access(r.Context(), p, typ, schema)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]tableEntry, len(ts))
	for i, t := range ts {
		out[i] = tableEntry{Type: typ, Schema: schema, Table: t.Name, Actions: actionNames(t.Actions)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
}

// describe answers a table's description (engine.Describe, the same
// document as the MCP tool meta_describe_table): its columns the caller
// may use, with type, nullability, keys, foreign keys and default, and the
// caller's actions on it. A hidden table, or one of an unregistered
// database, answers the 404 of a missing one.
func (s *Server) describe(w http.ResponseWriter, r *http.Request) {
	p, err := tenant(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	d, err := s.eng.Describe(r.Context(), p, pathParam(r, "type"), pathParam(r, "schema"), pathParam(r, "table"))
	if fault.KindOf(err) == fault.NotFound {
		err = errNoTable
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// errNoTable is the answer of the data routes for a missing or hidden
// table.
var errNoTable = fault.New(fault.NotFound, "table not found")

// grantOf is the grant of one action, nil when the caller does not hold it.
func grantOf(t engine.TableAccess, a query.Action) *engine.ActionGrant {
	for i := range t.Actions {
		if t.Actions[i].Action == a {
			return &t.Actions[i]
		}
	}
	return nil
}

// discoveryOps documents the discovery routes in the global document.
func discoveryOps(d *document) {
	base := AutoPrefix + "/{org}/{project}"
	errs := []string{"400", "401", "404", "503", "504"}
	actions := obj{"type": "array", "items": obj{"type": "string", "enum": []string{"read", "create", "update", "delete"}},
		"description": "The actions you hold on the table (key_type, locks, templates and row scopes applied)."}
	entry := obj{"type": "object", "required": []string{"table", "actions"}, "properties": obj{
		"type": obj{"type": "string"}, "schema": obj{"type": "string"}, "table": obj{"type": "string"}, "actions": actions}}
	d.op("GET", base, obj{"tags": []string{"auto"}, "operationId": "listVisibleDatabases", "summary": "List the databases and tables you may see",
		"description": "The databases of the project in which you see at least one table, each with those tables and your actions on them. Hidden tables are absent; a database that cannot be reached now is listed with an error instead of its tables.",
		"security":    tokenSecurity,
		"responses": withErrors(obj{"200": reply("Databases.", obj{"type": "object", "required": []string{"data"}, "properties": obj{"data": obj{"type": "array", "items": obj{
			"type": "object", "required": []string{"type", "schema"}, "properties": obj{
				"type": obj{"type": "string"}, "schema": obj{"type": "string"},
				"tables": obj{"type": "array", "items": entry},
				"error":  obj{"type": "object", "properties": obj{"code": obj{"type": "string"}, "message": obj{"type": "string"}}},
			}}}}})}, "400", "401")})
	d.op("GET", base+"/"+CallerOpenAPISegment, obj{"tags": []string{"auto"}, "operationId": "callerOpenAPI", "summary": "Your OpenAPI document",
		"description": "An OpenAPI 3.1 document of the tables you may see: one path per table with only the operations you hold, rows typed by the columns you may use, servers set to this project's Auto API. Tables of a database that cannot be reached now are left out.",
		"security":    tokenSecurity,
		"responses":   withErrors(obj{"200": reply("The document.", obj{"type": "object"})}, "400", "401")})
	d.op("GET", base+"/{type}/{schema}", obj{"tags": []string{"auto"}, "operationId": "listVisibleTables", "summary": "List the tables of a database you may see",
		"description": "As the MCP tool meta_list_tables: hidden tables are absent; an unregistered database answers 404.",
		"security":    tokenSecurity,
		"responses":   withErrors(obj{"200": reply("Tables.", obj{"type": "object", "required": []string{"data"}, "properties": obj{"data": obj{"type": "array", "items": entry}}})}, errs...)})
	col := obj{"type": "object", "properties": obj{
		"name": obj{"type": "string"}, "type": str("The database's type name."), "kind": str("Neutral kind: integer, float, decimal, boolean, string, uuid, date, time, timestamp, timestamptz, json, bytes, array, other."),
		"nullable": obj{"type": "boolean"}, "primary_key": obj{"type": "boolean"}, "has_default": obj{"type": "boolean", "description": "The database can fill it (default, identity, generated)."},
		"default": obj{"type": []string{"string", "null"}},
		"references": obj{"type": []string{"object", "null"}, "description": "The column a single-column foreign key references (PostgreSQL, MariaDB/MySQL, SQL Server), when you may see that table and column; null otherwise.",
			"properties": obj{"table": obj{"type": "string"}, "column": obj{"type": "string"}}},
		"actions": obj{"type": "array", "items": obj{"type": "string"}, "description": "The actions you may use this column in."}}}
	d.op("GET", base+"/{type}/{schema}/{table}/"+DescribeSegment, obj{"tags": []string{"auto"}, "operationId": "describeTable", "summary": "Describe a table",
		"description": "The columns you may use (type, kind, nullability, primary key, foreign key, default, and the actions each may be used in) and your actions on the table; the same document as the MCP tool meta_describe_table. A hidden table answers the same 404 as a missing one.",
		"security":    tokenSecurity,
		"responses": withErrors(obj{"200": reply("The description.", obj{"type": "object", "properties": obj{
			"type": obj{"type": "string"}, "schema": obj{"type": "string"}, "table": obj{"type": "string"}, "actions": actions,
			"row_scoped":  obj{"type": "array", "items": obj{"type": "string"}, "description": "Actions a row scope narrows."},
			"primary_key": obj{"type": "array", "items": obj{"type": "string"}},
			"columns":     obj{"type": "array", "items": col}}})}, errs...)})
}
