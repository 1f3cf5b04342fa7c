package api

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// The caller's OpenAPI document: one path per table the caller may see,
// with only the operations it holds and row schemas typed from the columns
// each operation may use. It is derived from the global document's Auto
// API operations (parameters, answers, errors), so the two cannot drift:
// the global one describes rows as free objects, this one by column.

// globalAuto is the global document, decoded once, from which the Auto API
// operations and the components they name are copied.
var globalAuto = sync.OnceValue(func() obj {
	var doc obj
	if err := json.Unmarshal(OpenAPIDocument(), &doc); err != nil {
		panic("api: OpenAPI document does not decode: " + err.Error())
	}
	return doc
})

// methodAction is the action each Auto API method needs.
var methodAction = map[string]query.Action{
	"get": query.Read, "post": query.Insert, "put": query.Update, "patch": query.Update, "delete": query.Delete,
}

// rowSchemaName is the global schema of a row, replaced per table.
const rowSchemaName = "Row"

// callerOpenAPI serves the caller's OpenAPI document.
func (s *Server) callerOpenAPI(w http.ResponseWriter, r *http.Request) {
	p, err := tenant(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var tables []engine.TableAccess
	for _, db := range s.eng.Databases(p) {
		ts, err := s.eng.Access(r.Context(), p, db[0], db[1])
		switch {
		case fault.KindOf(err) == fault.NotFound:
			continue
		case err != nil:
			// A database that cannot be reached now is left out; the
			// document says so in its description.
			s.log.WarnContext(r.Context(), "caller OpenAPI: database left out", "type", db[0], "schema", db[1], "err", err)
			continue
		}
		tables = append(tables, ts...)
	}
	doc := CallerOpenAPI(serverURL(r)+AutoPrefix+"/"+url.PathEscape(p.Org)+"/"+url.PathEscape(p.Project), p.Org+"/"+p.Project, tables)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		writeError(w, r, fault.Wrap(fault.Internal, err, "encode OpenAPI document"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "private, no-cache")
	w.Header().Add("Vary", "LB-Access-Token, Authorization")
	_, _ = w.Write(append(b, '\n'))
}

// serverURL is the scheme and host the request reached.
func serverURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// CallerOpenAPI builds the OpenAPI 3.1 document of the tables a caller may
// see: base is the server URL up to {org}/{project}, name the project's
// org/project. Each table is one path, "/{type}/{schema}/{table}", with the
// operations of the actions the caller holds; its rows are typed from the
// columns each action may use (reads and answers: read's columns; an
// insert's or update's body: that action's columns).
func CallerOpenAPI(base, name string, tables []engine.TableAccess) obj {
	g := globalAuto()
	b := &callerDoc{global: g, schemas: obj{}, done: map[string]bool{}, keys: map[string]bool{}}
	gcomp := g["components"].(obj)
	autoItem, _ := g["paths"].(obj)[AutoPrefix+"/{org}/{project}/{type}/{schema}/{table}"].(obj)
	paths := obj{}
	for _, t := range tables {
		key := b.key(t)
		read := grantOf(t, query.Read)
		rowRef := ""
		if read != nil {
			rowRef = b.add(key+"Row", rowSchema(read.Columns, "A row as read: the columns you may read ("+t.Type+"/"+t.Schema+"/"+t.Name+")."))
		}
		item := obj{}
		for _, m := range slices.Sorted(maps.Keys(autoItem)) {
			act, ok := methodAction[m]
			if !ok {
				continue
			}
			gr := grantOf(t, act)
			if gr == nil {
				continue
			}
			op := clone(autoItem[m]).(obj)
			op["operationId"] = op["operationId"].(string) + "_" + key
			op["tags"] = []any{t.Type + "/" + t.Schema}
			var params []any
			for _, prm := range asList(op["parameters"]) {
				if pm, ok := prm.(obj); ok && pm["in"] == "path" {
					continue
				}
				params = append(params, prm)
			}
			if params == nil {
				delete(op, "parameters")
			} else {
				op["parameters"] = params
			}
			answerRow := rowRef
			if answerRow == "" {
				// Answers carry no readable column: rows are empty objects.
				answerRow = b.add(key+"NoRow", obj{"type": "object", "additionalProperties": false, "description": "You may read no column of this table."})
			}
			if rb, ok := op["requestBody"]; ok {
				var in string
				switch act {
				case query.Insert:
					in = b.add(key+"Insert", insertSchema(gr.Columns))
				default:
					in = b.add(key+"Update", updateSchema(gr.Columns))
				}
				op["requestBody"] = b.retarget(rb, in)
			}
			op["responses"] = b.retarget(op["responses"], answerRow)
			item[m] = op
		}
		if len(item) == 0 {
			continue // visible, but no operation held
		}
		paths["/"+url.PathEscape(t.Type)+"/"+url.PathEscape(t.Schema)+"/"+url.PathEscape(t.Name)] = item
	}
	comps := obj{"schemas": b.schemas}
	for _, k := range []string{"securitySchemes", "parameters", "responses"} {
		comps[k] = b.retarget(gcomp[k], "")
	}
	info := clone(g["info"]).(obj)
	info["title"] = "Minimal Auto API: " + name
	info["description"] = "The tables of " + name + " that the token serving this document may see, with only the operations it holds and only the columns it may use. " +
		"Generated per caller: another token may see another document. The whole REST surface is described at " + OpenAPIPath + "."
	return obj{
		"openapi":    OpenAPIVersion,
		"info":       info,
		"servers":    []any{obj{"url": base, "description": "The Auto API of " + name + "."}},
		"security":   g["security"],
		"tags":       tagsOf(tables),
		"paths":      paths,
		"components": comps,
	}
}

// callerDoc collects the components of one caller's document.
type callerDoc struct {
	global  obj
	schemas obj
	done    map[string]bool // names of the copied global schemas
	keys    map[string]bool
}

var unsafeKey = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// key names a table in component names and operation ids, unique in the
// document.
func (b *callerDoc) key(t engine.TableAccess) string {
	base := unsafeKey.ReplaceAllString(t.Type+"_"+t.Schema+"_"+t.Name, "_")
	k := base
	for i := 2; b.keys[k]; i++ {
		k = base + "_" + strconv.Itoa(i)
	}
	b.keys[k] = true
	return k
}

// add stores a schema under name and answers its $ref.
func (b *callerDoc) add(name string, schema obj) string {
	b.schemas[name] = schema
	return "#/components/schemas/" + name
}

// retarget copies v, pointing its references to the global Row schema at
// rowRef and copying every other global schema it references (those that
// reference Row themselves are copied per row). rowRef "" keeps the
// global Row.
func (b *callerDoc) retarget(v any, rowRef string) any {
	switch x := v.(type) {
	case obj:
		out := obj{}
		for k, val := range x {
			if k == "$ref" {
				if s, ok := val.(string); ok {
					if name, ok := strings.CutPrefix(s, "#/components/schemas/"); ok {
						out[k] = b.schemaRef(name, rowRef)
						continue
					}
				}
			}
			out[k] = b.retarget(val, rowRef)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = b.retarget(e, rowRef)
		}
		return out
	default:
		return v
	}
}

// schemaRef is the reference in this document to the global schema name,
// with its rows at rowRef.
func (b *callerDoc) schemaRef(name, rowRef string) string {
	if name == rowSchemaName && rowRef != "" {
		return rowRef
	}
	gs := b.global["components"].(obj)["schemas"].(obj)
	local := name
	if rowRef != "" && mentions(gs, name, rowSchemaName, map[string]bool{}) {
		local = strings.TrimPrefix(rowRef, "#/components/schemas/") + "_" + name
	}
	if _, ok := b.done[local]; !ok {
		b.done[local] = true // before the copy: schemas may refer to each other
		b.schemas[local] = b.retarget(gs[name], rowRef)
	}
	return "#/components/schemas/" + local
}

// mentions reports whether the global schema name refers, directly or
// through others, to target.
func mentions(gs obj, name, target string, seen map[string]bool) bool {
	if name == target {
		return true
	}
	if seen[name] {
		return false
	}
	seen[name] = true
	found := false
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case obj:
			for k, val := range x {
				if s, ok := val.(string); ok && k == "$ref" {
					if n, ok := strings.CutPrefix(s, "#/components/schemas/"); ok && mentions(gs, n, target, seen) {
						found = true
					}
				}
				walk(val)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(gs[name])
	return found
}

// clone deep-copies a decoded JSON value.
func clone(v any) any {
	switch x := v.(type) {
	case obj:
		out := make(obj, len(x))
		for k, val := range x {
			out[k] = clone(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	default:
		return v
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// tagsOf names one tag per database.
func tagsOf(tables []engine.TableAccess) []any {
	seen := map[string]bool{}
	out := []any{}
	for _, t := range tables {
		n := t.Type + "/" + t.Schema
		if !seen[n] {
			seen[n] = true
			out = append(out, obj{"name": n, "description": "Tables of the " + t.Type + " database " + t.Schema + "."})
		}
	}
	return out
}

// rowSchema is a row as read: the columns, each typed and nullable as the
// database says; none required (fc picks columns).
func rowSchema(cols []dialects.Column, desc string) obj {
	props := obj{}
	for _, c := range cols {
		props[c.Name] = columnSchema(c, forRead)
	}
	return obj{"type": "object", "description": desc, "properties": props}
}

// insertSchema is a row to insert: only the columns the caller may
// insert (others are refused); required are the NOT NULL ones the
// database cannot fill.
func insertSchema(cols []dialects.Column) obj {
	props := obj{}
	var req []string
	for _, c := range cols {
		props[c.Name] = columnSchema(c, forInsert)
		if !c.Nullable && !c.HasDefault {
			req = append(req, c.Name)
		}
	}
	o := obj{"type": "object", "additionalProperties": false, "properties": props,
		"description": "A row to insert: the columns you may insert. Absent keys, and null for a column the database fills itself, let the database fill them."}
	if len(req) > 0 {
		o["required"] = req
	}
	return o
}

// updateSchema is the new values of an update: the columns the caller may
// update.
func updateSchema(cols []dialects.Column) obj {
	props := obj{}
	for _, c := range cols {
		props[c.Name] = columnSchema(c, forUpdate)
	}
	return obj{"type": "object", "additionalProperties": false, "properties": props,
		"description": "New values by column: the columns you may update."}
}

// use says where a column schema is used.
type use int

const (
	forRead use = iota
	forInsert
	forUpdate
)

// columnSchema types one column from its kind, as the JSON encoder writes
// it (see docs/rest.md, Answers). In a request, integers and decimals may
// also come as strings, to keep precision; an insert may send null for a
// NOT NULL column the database fills itself.
func columnSchema(c dialects.Column, u use) obj {
	var s obj
	switch c.Kind {
	case dialects.KindInt:
		s = obj{"type": "integer"}
	case dialects.KindFloat, dialects.KindDecimal:
		s = obj{"type": "number"}
	case dialects.KindBool:
		s = obj{"type": "boolean"}
	case dialects.KindUUID:
		s = obj{"type": "string", "format": "uuid"}
	case dialects.KindDate:
		s = obj{"type": "string", "format": "date"}
	case dialects.KindTimestampTZ:
		s = obj{"type": "string", "format": "date-time"}
	case dialects.KindTimestamp:
		s = obj{"type": "string", "description": "Without zone: 2006-01-02T15:04:05.999999."}
	case dialects.KindBytes:
		s = obj{"type": "string", "contentEncoding": "base64"}
	case dialects.KindJSON:
		s = obj{"description": "Any JSON value."}
	case dialects.KindArray:
		s = obj{"type": "array"}
	default: // string, time, other: text
		s = obj{"type": "string"}
	}
	if t, ok := s["type"].(string); ok {
		types := []any{t}
		if u != forRead && (c.Kind == dialects.KindInt || c.Kind == dialects.KindDecimal) {
			types = append(types, "string")
		}
		if c.Nullable || (u == forInsert && c.HasDefault) {
			types = append(types, "null")
		}
		if len(types) == 1 {
			s["type"] = t
		} else {
			s["type"] = types
		}
	}
	desc := c.DBType
	if c.PrimaryKey {
		desc += ", primary key"
	}
	if d, ok := s["description"].(string); ok {
		desc += ". " + d
	}
	s["description"] = desc
	return s
}
