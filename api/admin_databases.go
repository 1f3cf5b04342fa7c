package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// CodeConnectionTest is the error code of a registration (or a DSN change,
// or a test) refused because the gateway could not connect to the
// database, list its tables or make sense of the DSN.
const CodeConnectionTest = "CONNECTION_TEST_FAILED"

// miType is the mini-app database type, whose DSN is a directory on the
// gateway's own disk.
const miType = "mi"

// databaseJSON is a registered database as the admin API shows it. The
// DSN is write-only: it is sealed in the store and never answered, not
// even redacted.
type databaseJSON struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Schema    string    `json:"schema"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Warning, on a create or a DSN change only, is
	// dialects.NoTablesWarning when the connection test found no table.
	Warning string `json:"warning,omitempty"`
}

func databaseOut(d store.Database) databaseJSON {
	return databaseJSON{ID: d.ID, Type: d.Type, Schema: d.Schema, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// tested is a database as a create or a DSN change answers it: as stored,
// with the connection test's warning ("" for none).
type tested struct {
	store.Database
	warning string
}

// databaseBody registers a database (all three required) or replaces its
// DSN (dsn only).
type databaseBody struct {
	Type   string `json:"type"`
	Schema string `json:"schema"`
	DSN    string `json:"dsn"`
}

// trust is what the caller may register: the operator (server key)
// anything, an org admin no option naming a file of the gateway's host
// and only the hosts of the configured allowlist (Config.DBAllow).
func (a *admin) trust(r *http.Request) dialects.Trust {
	c := callerFrom(r.Context())
	return dialects.Trust{Operator: c != nil && c.operator, Hosts: a.s.cfg.DBAllow}
}

// probe runs the connection test. A failure is a 400 with
// CodeConnectionTest whose message never holds the DSN or its password
// (nor, for an org admin, why the database could not be reached); the
// cause goes to the log, redacted the same way.
// The answer is dialects.NoTablesWarning when the schema holds no table
// the gateway can see, "" otherwise.
func (a *admin) probe(r *http.Request, typ, schema, dsn string) (string, error) {
	n, err := dialects.ProbeTables(r.Context(), typ, dialects.Config{DSN: dsn, Schema: schema}, a.trust(r))
	if err := a.testFailed(r, typ, schema, dsn, err); err != nil {
		return "", err
	}
	if n == 0 {
		return dialects.NoTablesWarning, nil
	}
	return "", nil
}

// checkDSN refuses, before any connection, a DSN the caller may not
// register (dialects.CheckDSN): an option naming a file of the gateway's
// host (400), a host outside the allowlist (403). A string the driver
// cannot read at all is answered as the connection test answers it.
func (a *admin) checkDSN(r *http.Request, typ, schema, dsn string) error {
	err := dialects.CheckDSN(typ, dsn, a.trust(r))
	if fe := fault.As(err); err != nil && fe.Kind == fault.Invalid && fe.Code != dialects.CodeOptionRefused {
		return a.testFailed(r, typ, schema, dsn, fault.Wrap(fault.Invalid, err, "connection test of %s/%s failed to open: %s", typ, schema, fe.Message))
	}
	return err
}

// testFailed is the answer to a failed connection test.
func (a *admin) testFailed(r *http.Request, typ, schema, dsn string, err error) error {
	if err == nil {
		return nil
	}
	a.s.log.WarnContext(r.Context(), "connection test failed", "type", typ, "schema", schema,
		"err", dialects.Redact(err.Error(), dsn), "request_id", middleware.GetReqID(r.Context()))
	return &fault.Error{Kind: fault.Invalid, Code: CodeConnectionTest, Message: dialects.Redact(fault.As(err).Message, dsn), Err: err}
}

// checkMiDSN keeps mini-app directories the operator's: a directory on
// the gateway's disk is not a credential an org admin holds, and letting
// one name any path would let it open another org's tables.
func checkMiDSN(r *http.Request, typ string) error {
	if typ != miType {
		return nil
	}
	return needOperator(r, "registering a mini-app (mi) directory")
}

// database resolves {org}, {project}, {type} and {schema}; the DSN of the
// answer must not leave the process.
func (a *admin) database(r *http.Request) (store.Database, error) {
	_, p, err := a.project(r)
	if err != nil {
		return store.Database{}, err
	}
	return a.s.st.Database(r.Context(), p.ID, pathParam(r, "type"), pathParam(r, "schema"))
}

// databases serves the registered databases of a project. A create or a
// DSN change runs the connection test first, and answers its warning; the
// DSN is never answered.
func (a *admin) databases() crud[store.Project, store.Database, tested, databaseBody, databaseBody] {
	return crud[store.Project, store.Database, tested, databaseBody, databaseBody]{
		a:      a,
		parent: a.projectOf,
		list: func(r *http.Request, p store.Project) ([]tested, error) {
			ds, err := a.s.st.DatabasesOf(r.Context(), p.ID)
			out := make([]tested, len(ds))
			for i, d := range ds {
				out[i] = tested{Database: d}
			}
			return out, err
		},
		at: func(r *http.Request, p store.Project) (store.Database, error) {
			return a.s.st.Database(r.Context(), p.ID, pathParam(r, "type"), pathParam(r, "schema"))
		},
		get: func(_ *http.Request, _ store.Project, d store.Database) (tested, error) {
			return tested{Database: d}, nil
		},
		create: a.createDatabase,
		update: a.patchDatabase,
		remove: func(r *http.Request, _ store.Project, d store.Database) error {
			return a.s.st.RemoveDatabase(r.Context(), d.ProjectID, d.Type, d.Schema)
		},
		out: func(_ store.Project, d tested) any {
			o := databaseOut(d.Database)
			o.Warning = d.warning
			return o
		},
	}
}

// createDatabase registers a database after a successful connection test.
func (a *admin) createDatabase(r *http.Request, p store.Project, b *databaseBody) (tested, error) {
	for _, f := range []struct{ name, v string }{{"type", b.Type}, {"schema", b.Schema}, {"dsn", b.DSN}} {
		if err := required(f.name, f.v); err != nil {
			return tested{}, err
		}
	}
	if !slices.Contains(dialects.Types(), b.Type) {
		return tested{}, fault.New(fault.Invalid, "field \"type\": unknown database type %q (this gateway serves %s)", b.Type, strings.Join(dialects.Types(), ", "))
	}
	if err := checkMiDSN(r, b.Type); err != nil {
		return tested{}, err
	}
	if err := a.checkDSN(r, b.Type, b.Schema, b.DSN); err != nil {
		return tested{}, err
	}
	// A duplicate is refused before the (slow) connection test; the store
	// checks again when it writes.
	if _, err := a.s.st.Database(r.Context(), p.ID, b.Type, b.Schema); err == nil {
		return tested{}, fault.New(fault.Conflict, "database %s/%s is already registered in this project", b.Type, b.Schema)
	} else if fault.KindOf(err) != fault.NotFound {
		return tested{}, err
	}
	warning, err := a.probe(r, b.Type, b.Schema, b.DSN)
	if err != nil {
		return tested{}, err
	}
	d, err := a.s.st.AddDatabase(r.Context(), store.Database{ProjectID: p.ID, Type: b.Type, Schema: b.Schema, DSN: b.DSN})
	return tested{d, warning}, err
}

// patchDatabase replaces the DSN (a rotated password, a moved host) after
// a successful connection test; servers reopen the pool.
func (a *admin) patchDatabase(r *http.Request, _ store.Project, d store.Database, b *databaseBody) (tested, error) {
	if b.Type != "" && b.Type != d.Type || b.Schema != "" && b.Schema != d.Schema {
		return tested{}, fault.New(fault.Invalid, "fields \"type\" and \"schema\" cannot change: register another database")
	}
	if err := required("dsn", b.DSN); err != nil {
		return tested{}, err
	}
	if err := checkMiDSN(r, d.Type); err != nil {
		return tested{}, err
	}
	if err := a.checkDSN(r, d.Type, d.Schema, b.DSN); err != nil {
		return tested{}, err
	}
	warning, err := a.probe(r, d.Type, d.Schema, b.DSN)
	if err != nil {
		return tested{}, err
	}
	d, err = a.s.st.SetDatabaseDSN(r.Context(), d.ProjectID, d.Type, d.Schema, b.DSN)
	return tested{d, warning}, err
}

// testDatabase runs the connection test on a registered database's stored
// DSN, like `minimal db test`.
func (a *admin) testDatabase(w http.ResponseWriter, r *http.Request) {
	d, err := a.database(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	n, err := dialects.ProbeTables(r.Context(), d.Type, dialects.Config{DSN: d.DSN, Schema: d.Schema}, a.trust(r))
	if err := a.testFailed(r, d.Type, d.Schema, d.DSN, err); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tablesAnswer(d.Type, d.Schema, n))
}
