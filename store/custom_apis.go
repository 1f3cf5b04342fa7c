package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/fault"
)

// Custom API modes: a read runs one statement in a read-only transaction
// and returns its rows; a write runs its statements in one transaction and
// returns the rows they affected.
const (
	ModeRead  = "read"
	ModeWrite = "write"
)

// Limits on custom API definitions.
const (
	maxURILen          = 200
	maxDescriptionLen  = 2000
	maxStatements      = 16
	maxStatementLen    = 64 << 10
	maxCustomParams    = 64
	maxCustomAPITables = 64
)

// CustomAPI is the definition of a custom API: operator-written,
// parameterized SQL run on one registered database, served at
// /minimal/api/rest/custom/v1/{org}/{project}/{URI}?version=N and by the
// MCP tool call_api. (ProjectID, URI, Method, Version) is unique; several
// versions of one URI and method coexist.
//
// The store checks the shape of a definition (CheckCustomAPI). What the
// statements and parameter types mean — placeholders, string-literal
// ambiguity, the statement verbs against the mode — is checked by package
// custom (custom.Check), which callers run before writing, as package
// policy checks scope filters the store keeps as text.
type CustomAPI struct {
	// ID is the store-assigned UUID; ignored on create.
	ID string
	// ProjectID is the owning project.
	ProjectID string
	// URI is the path below the project, segments of [a-z0-9_-] joined by
	// '/', without a leading or trailing '/': "employees/by-department".
	URI string
	// Method is GET, POST, PUT or DELETE.
	Method string
	// Version is 1 or more.
	Version int
	// Type and Schema name the registered database the statements run on.
	Type   string
	Schema string
	// Mode is ModeRead or ModeWrite.
	Mode string
	// Description tells callers what the API does (listings, help).
	Description string
	// Roles may call the API (the built-in admin role always may).
	Roles []string
	// Tables are the tables of the database the statements read, so locks
	// on them apply; the tables a write statement writes are found in its
	// text and need not be listed.
	Tables []string
	// Params are the typed parameters, in declaration order.
	Params []CustomParam
	// Statements are the SQL texts with :name placeholders, as written: one
	// for a read, one or more run in order in one transaction for a write.
	Statements []string
	// CreatedAt and UpdatedAt are set by the store (UTC).
	CreatedAt, UpdatedAt time.Time
}

// Key names the definition in messages: "GET employees/by-department v1".
func (c CustomAPI) Key() string {
	return fmt.Sprintf("%s %s v%d", c.Method, c.URI, c.Version)
}

// CustomParam is a typed parameter of a custom API. Type is one of
// string, integer, number, boolean, date, timestamp, uuid (checked by
// package custom). Default, MaxLength, Min and Max are optional (nil).
type CustomParam struct {
	Name     string
	Type     string
	Required bool
	// Default is the value, in its text form, used when the caller omits
	// the parameter; a parameter with a default is not required.
	Default *string
	// MaxLength bounds a string parameter's length in characters.
	MaxLength *int
	// Min and Max bound a numeric parameter, inclusive.
	Min, Max *float64
}

// paramDoc is the stored (JSON) form of a CustomParam.
type paramDoc struct {
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	Required  bool     `json:"required,omitempty"`
	Default   *string  `json:"default,omitempty"`
	MaxLength *int     `json:"max_length,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
}

// CheckCustomAPI checks the shape of a definition, as every write does:
// URI, method, version, database type and schema, mode, description, roles
// (at least one, no repeats), tables, parameter names (no repeats) and
// statements (one to 16, non-empty, valid UTF-8). A problem is
// fault.Invalid naming the definition and the field.
func CheckCustomAPI(c CustomAPI) error {
	if err := checkCustomAPI(c); err != nil {
		return fault.New(fault.Invalid, "custom API %s: %s", c.Key(), fault.As(err).Message)
	}
	return nil
}

func checkCustomAPI(c CustomAPI) error {
	if err := CheckURI(c.URI); err != nil {
		return err
	}
	switch c.Method {
	case "GET", "POST", "PUT", "DELETE":
	default:
		return fault.New(fault.Invalid, "method %q must be GET, POST, PUT or DELETE", c.Method)
	}
	if c.Version < 1 {
		return fault.New(fault.Invalid, "version %d must be 1 or more", c.Version)
	}
	if err := checkDBType(c.Type); err != nil {
		return err
	}
	if err := checkSchema(c.Schema); err != nil {
		return err
	}
	switch c.Mode {
	case ModeRead, ModeWrite:
	default:
		return fault.New(fault.Invalid, "mode %q must be %q or %q", c.Mode, ModeRead, ModeWrite)
	}
	if len(c.Description) > maxDescriptionLen || !utf8.ValidString(c.Description) {
		return fault.New(fault.Invalid, "description must be valid UTF-8 of at most %d bytes", maxDescriptionLen)
	}
	if len(c.Roles) == 0 {
		return fault.New(fault.Invalid, "roles is empty: name at least one role that may call it")
	}
	if err := uniqueNames("role", c.Roles); err != nil {
		return err
	}
	if len(c.Tables) > maxCustomAPITables {
		return fault.New(fault.Invalid, "more than %d tables", maxCustomAPITables)
	}
	if err := uniqueNames("table", c.Tables); err != nil {
		return err
	}
	for _, t := range c.Tables {
		if strings.Contains(t, "/") {
			return fault.New(fault.Invalid, "table %q must not contain '/' (name a table of the API's schema)", t)
		}
	}
	if len(c.Params) > maxCustomParams {
		return fault.New(fault.Invalid, "more than %d parameters", maxCustomParams)
	}
	names := make([]string, len(c.Params))
	for i, p := range c.Params {
		names[i] = p.Name
		if p.Type == "" {
			return fault.New(fault.Invalid, "parameter %q has no type", p.Name)
		}
	}
	if err := uniqueNames("parameter", names); err != nil {
		return err
	}
	switch n := len(c.Statements); {
	case n == 0:
		return fault.New(fault.Invalid, "no statement: give sql or statements")
	case n > maxStatements:
		return fault.New(fault.Invalid, "%d statements, at most %d", n, maxStatements)
	}
	for i, s := range c.Statements {
		switch {
		case strings.TrimSpace(s) == "":
			return fault.New(fault.Invalid, "statement %d is empty", i+1)
		case len(s) > maxStatementLen:
			return fault.New(fault.Invalid, "statement %d is longer than %d bytes", i+1, maxStatementLen)
		case !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0:
			return fault.New(fault.Invalid, "statement %d is not valid UTF-8 text", i+1)
		}
	}
	return nil
}

// CheckURI accepts a custom API URI: segments of lower-case letters,
// digits, '_' and '-' joined by single '/', no leading or trailing '/', at
// most 200 bytes.
func CheckURI(uri string) error {
	if uri == "" {
		return fault.New(fault.Invalid, "uri is empty")
	}
	if len(uri) > maxURILen {
		return fault.New(fault.Invalid, "uri is longer than %d bytes", maxURILen)
	}
	for seg := range strings.SplitSeq(uri, "/") {
		if seg == "" {
			return fault.New(fault.Invalid, "uri %q has an empty segment (no leading, trailing or double '/')", uri)
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return fault.New(fault.Invalid, "uri %q: segments hold only lower-case letters, digits, '_' and '-'", uri)
			}
		}
	}
	return nil
}

func uniqueNames(what string, names []string) error {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if err := checkName(what, n); err != nil {
			return err
		}
		if seen[n] {
			return fault.New(fault.Invalid, "%s %q is listed twice", what, n)
		}
		seen[n] = true
	}
	return nil
}

// normCustomAPI checks c and returns a copy with fresh, non-nil slices.
func normCustomAPI(c CustomAPI) (CustomAPI, error) {
	if err := CheckCustomAPI(c); err != nil {
		return CustomAPI{}, err
	}
	c.Roles = slices.Clone(c.Roles)
	c.Tables = slices.Clone(c.Tables)
	if c.Tables == nil {
		c.Tables = []string{}
	}
	c.Params = slices.Clone(c.Params)
	if c.Params == nil {
		c.Params = []CustomParam{}
	}
	c.Statements = slices.Clone(c.Statements)
	return c, nil
}

// customRow is a definition's JSON columns.
type customRow struct {
	roles, tables, params, statements string
}

func encodeCustomAPI(c CustomAPI) (customRow, error) {
	docs := make([]paramDoc, len(c.Params))
	for i, p := range c.Params {
		docs[i] = paramDoc(p)
	}
	var r customRow
	for _, x := range []struct {
		dst *string
		v   any
	}{{&r.roles, c.Roles}, {&r.tables, c.Tables}, {&r.params, docs}, {&r.statements, c.Statements}} {
		b, err := json.Marshal(x.v)
		if err != nil {
			return customRow{}, fault.Wrap(fault.Internal, err, "store: encode custom API %s", c.Key())
		}
		*x.dst = string(b)
	}
	return r, nil
}

const customAPICols = `id, project_id, uri, method, version, db_type, schema_name, mode, description, roles, tables, params, statements, created_at, updated_at`

func scanCustomAPI(r interface{ Scan(...any) error }) (CustomAPI, error) {
	var (
		c                CustomAPI
		created, updated int64
		row              customRow
	)
	if err := r.Scan(&c.ID, &c.ProjectID, &c.URI, &c.Method, &c.Version, &c.Type, &c.Schema, &c.Mode, &c.Description,
		&row.roles, &row.tables, &row.params, &row.statements, &created, &updated); err != nil {
		return CustomAPI{}, err
	}
	c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
	var docs []paramDoc
	for _, x := range []struct {
		src string
		dst any
	}{{row.roles, &c.Roles}, {row.tables, &c.Tables}, {row.params, &docs}, {row.statements, &c.Statements}} {
		if err := json.Unmarshal([]byte(x.src), x.dst); err != nil {
			return CustomAPI{}, fault.Wrap(fault.Internal, err, "store: custom API %s is malformed", c.Key())
		}
	}
	c.Params = make([]CustomParam, len(docs))
	for i, d := range docs {
		c.Params[i] = CustomParam(d)
	}
	if c.Roles == nil {
		c.Roles = []string{}
	}
	if c.Tables == nil {
		c.Tables = []string{}
	}
	if c.Statements == nil {
		c.Statements = []string{}
	}
	return c, nil
}

func (s *Store) customAPIs(ctx context.Context, where string, args ...any) ([]CustomAPI, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+customAPICols+` FROM custom_apis WHERE `+where, args...)
	if err != nil {
		return nil, dbErr(err, "store: list custom APIs")
	}
	out, err := collect(rows, scanCustomAPI, "store: list custom APIs")
	if err != nil {
		return nil, err
	}
	// Sorted here, not by ORDER BY: byte order on every backend, whatever
	// the database's collation.
	SortCustomAPIs(out)
	return out, nil
}

// CustomAPIs lists the custom APIs of a project ordered by URI, method and
// version. An unknown project yields an empty list.
func (s *Store) CustomAPIs(ctx context.Context, projectID string) ([]CustomAPI, error) {
	return s.customAPIs(ctx, `project_id = ?`, projectID)
}

// CustomAPIsAt lists the definitions of one URI of a project, every method
// and version, ordered by method and version: what a call needs to answer
// precisely when the method or version it names is missing.
func (s *Store) CustomAPIsAt(ctx context.Context, projectID, uri string) ([]CustomAPI, error) {
	return s.customAPIs(ctx, `project_id = ? AND uri = ?`, projectID, uri)
}

// CustomAPI returns one definition. An absent one is fault.NotFound.
func (s *Store) CustomAPI(ctx context.Context, projectID, uri, method string, version int) (CustomAPI, error) {
	list, err := s.customAPIs(ctx, `project_id = ? AND uri = ? AND method = ? AND version = ?`, projectID, uri, method, version)
	if err != nil {
		return CustomAPI{}, err
	}
	if len(list) == 0 {
		return CustomAPI{}, fault.New(fault.NotFound, "custom API %s %s v%d not found", method, uri, version)
	}
	return list[0], nil
}

// CreateCustomAPI stores a new definition and returns it with ID and
// timestamps assigned. A malformed one is fault.Invalid (CheckCustomAPI),
// an unknown project fault.NotFound, an existing (URI, method, version)
// fault.Conflict. Run custom.Check first: the store does not read the SQL.
func (s *Store) CreateCustomAPI(ctx context.Context, c CustomAPI) (CustomAPI, error) {
	c, err := normCustomAPI(c)
	if err != nil {
		return CustomAPI{}, err
	}
	row, err := encodeCustomAPI(c)
	if err != nil {
		return CustomAPI{}, err
	}
	if c.ID, err = newID(); err != nil {
		return CustomAPI{}, err
	}
	var stamp int64
	c.CreatedAt, stamp = now()
	c.UpdatedAt = c.CreatedAt
	err = s.write(ctx, "store: create custom API", func(tx *sql.Tx) error {
		if err := projectExists(ctx, tx, c.ProjectID); err != nil {
			return err
		}
		if err := absent(ctx, tx, fault.New(fault.Conflict, "custom API %s already exists in this project", c.Key()),
			`SELECT 1 FROM custom_apis WHERE project_id = ? AND uri = ? AND method = ? AND version = ?`,
			c.ProjectID, c.URI, c.Method, c.Version); err != nil {
			return err
		}
		return insertCustomAPI(ctx, tx, c, row, stamp, stamp)
	})
	if err != nil {
		return CustomAPI{}, err
	}
	return c, nil
}

func insertCustomAPI(ctx context.Context, tx *sql.Tx, c CustomAPI, row customRow, created, updated int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO custom_apis (`+customAPICols+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.ProjectID, c.URI, c.Method, c.Version, c.Type, c.Schema, c.Mode, c.Description,
		row.roles, row.tables, row.params, row.statements, created, updated)
	return err
}

// UpdateCustomAPI replaces the definition with c's (ProjectID, URI,
// Method, Version) by c, keeping its ID and CreatedAt, and returns it. A
// malformed one is fault.Invalid, an absent one fault.NotFound. Run
// custom.Check first.
func (s *Store) UpdateCustomAPI(ctx context.Context, c CustomAPI) (CustomAPI, error) {
	c, err := normCustomAPI(c)
	if err != nil {
		return CustomAPI{}, err
	}
	row, err := encodeCustomAPI(c)
	if err != nil {
		return CustomAPI{}, err
	}
	var stamp int64
	c.UpdatedAt, stamp = now()
	err = s.write(ctx, "store: update custom API", func(tx *sql.Tx) error {
		var created int64
		err := tx.QueryRowContext(ctx, `SELECT id, created_at FROM custom_apis WHERE project_id = ? AND uri = ? AND method = ? AND version = ?`,
			c.ProjectID, c.URI, c.Method, c.Version).Scan(&c.ID, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return fault.New(fault.NotFound, "custom API %s not found", c.Key())
		}
		if err != nil {
			return err
		}
		c.CreatedAt = fromNanos(created)
		return updateCustomAPI(ctx, tx, c, row, stamp)
	})
	if err != nil {
		return CustomAPI{}, err
	}
	return c, nil
}

func updateCustomAPI(ctx context.Context, tx *sql.Tx, c CustomAPI, row customRow, updated int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE custom_apis SET db_type = ?, schema_name = ?, mode = ?, description = ?,
roles = ?, tables = ?, params = ?, statements = ?, updated_at = ? WHERE id = ?`,
		c.Type, c.Schema, c.Mode, c.Description, row.roles, row.tables, row.params, row.statements, updated, c.ID)
	return err
}

// DeleteCustomAPI deletes one definition. An absent one is fault.NotFound.
func (s *Store) DeleteCustomAPI(ctx context.Context, projectID, uri, method string, version int) error {
	return s.write(ctx, "store: delete custom API", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM custom_apis WHERE project_id = ? AND uri = ? AND method = ? AND version = ?`,
			projectID, uri, method, version)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "custom API %s %s v%d not found", method, uri, version))
	})
}

// ReplaceCustomAPIs makes apis the whole set of custom APIs of a project,
// in one transaction with one change-counter bump: definitions whose (URI,
// method, version) is kept are updated in place (same ID and CreatedAt),
// new ones inserted, the others deleted. Each is checked first
// (CheckCustomAPI; fault.Invalid) and a (URI, method, version) given twice
// is fault.Invalid; ProjectID, ID and the timestamps of apis are ignored.
// An unknown project is fault.NotFound. Run custom.Check first.
func (s *Store) ReplaceCustomAPIs(ctx context.Context, projectID string, apis []CustomAPI) error {
	want := make([]CustomAPI, len(apis))
	rows := make([]customRow, len(apis))
	ids := make([]string, len(apis))
	seen := make(map[string]bool, len(apis))
	for i, c := range apis {
		c.ProjectID = projectID
		n, err := normCustomAPI(c)
		if err != nil {
			return err
		}
		if seen[n.Key()] {
			return fault.New(fault.Invalid, "custom API %s is given twice", n.Key())
		}
		seen[n.Key()] = true
		if rows[i], err = encodeCustomAPI(n); err != nil {
			return err
		}
		if ids[i], err = newID(); err != nil {
			return err
		}
		want[i] = n
	}
	_, stamp := now()
	return s.write(ctx, "store: replace custom APIs", func(tx *sql.Tx) error {
		if err := projectExists(ctx, tx, projectID); err != nil {
			return err
		}
		rs, err := tx.QueryContext(ctx, `SELECT id, uri, method, version FROM custom_apis WHERE project_id = ?`, projectID)
		if err != nil {
			return err
		}
		type key struct {
			uri, method string
			version     int
		}
		old, err := collect(rs, func(r interface{ Scan(...any) error }) (struct {
			id string
			k  key
		}, error) {
			var x struct {
				id string
				k  key
			}
			err := r.Scan(&x.id, &x.k.uri, &x.k.method, &x.k.version)
			return x, err
		}, "store: replace custom APIs")
		if err != nil {
			return err
		}
		existing := make(map[key]string, len(old))
		for _, o := range old {
			existing[o.k] = o.id
		}
		kept := make(map[string]bool, len(want))
		for i, c := range want {
			k := key{c.URI, c.Method, c.Version}
			if id, ok := existing[k]; ok {
				c.ID = id
				kept[id] = true
				if err := updateCustomAPI(ctx, tx, c, rows[i], stamp); err != nil {
					return err
				}
				continue
			}
			c.ID = ids[i]
			if err := insertCustomAPI(ctx, tx, c, rows[i], stamp, stamp); err != nil {
				return err
			}
		}
		for _, o := range old {
			if !kept[o.id] {
				if _, err := tx.ExecContext(ctx, `DELETE FROM custom_apis WHERE id = ?`, o.id); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// SortCustomAPIs orders definitions as the store lists them: by URI,
// method and version.
func SortCustomAPIs(apis []CustomAPI) {
	slices.SortFunc(apis, func(a, b CustomAPI) int {
		return cmp.Or(strings.Compare(a.URI, b.URI), strings.Compare(a.Method, b.Method), cmp.Compare(a.Version, b.Version))
	})
}
