package mcp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	_ "github.com/littlebitlabs/minimal/dialects/ma"
	"github.com/littlebitlabs/minimal/policy"
	"github.com/littlebitlabs/minimal/store"
)

// maCustomPolicy defines a read and a write custom API on MariaDB tables;
// PFX_ is the test's table prefix and SCHEMA the DSN's database.
const maCustomPolicy = `org: demo
project: demo
custom_apis:
  - uri: staff/by-department
    method: GET
    version: 1
    type: ma
    schema: SCHEMA
    mode: read
    roles: [hr-analyst]
    tables: [PFX_staff]
    params:
      - {name: dept, type: integer, required: true}
      - {name: name, type: string, default: "%"}
    sql: |
      SELECT id, full_name, salary FROM PFX_staff
      WHERE dept = :dept AND full_name LIKE :name ORDER BY id
  - uri: staff/transfer
    method: POST
    version: 1
    type: ma
    schema: SCHEMA
    mode: write
    roles: [hr-analyst]
    tables: [PFX_staff, PFX_audit]
    params:
      - {name: id, type: integer, required: true}
      - {name: dept, type: integer, required: true}
    statements:
      - UPDATE PFX_staff SET dept = :dept WHERE id = :id
      - INSERT INTO PFX_audit (id, msg) VALUES (:id, CONCAT('moved to ', :dept))
`

// TestCustomAPIMariaDB: custom APIs on a MariaDB database answer over REST
// and MCP call_api alike, byte for byte; a write's statements commit
// together, and a failing one keeps nothing.
func TestCustomAPIMariaDB(t *testing.T) {
	dsn := dialecttest.DSN(t, "MINIMAL_TEST_MA_DSN")
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	admin := sql.OpenDB(conn)
	var b [4]byte
	_, _ = rand.Read(b[:])
	pfx := "cap" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP TABLE IF EXISTS " + pfx + "_staff, " + pfx + "_audit")
		_ = admin.Close()
	})
	for _, s := range []string{
		"CREATE TABLE " + pfx + "_staff (id BIGINT PRIMARY KEY, full_name VARCHAR(40) NOT NULL, dept INT, salary DECIMAL(12,2)) ENGINE=InnoDB",
		"CREATE TABLE " + pfx + "_audit (id BIGINT PRIMARY KEY, msg VARCHAR(40) NOT NULL) ENGINE=InnoDB",
		"INSERT INTO " + pfx + "_staff VALUES (1, 'Ada', 7, 100.50), (2, 'Rafael', 6, 200), (3, 'Robert''); DROP TABLE x;--', 6, NULL)",
	} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}

	g := newGateway(t, time.Hour)
	ctx := context.Background()
	if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: "ma", Schema: mc.DBName, DSN: dsn}); err != nil {
		t.Fatal(err)
	}
	pf, err := policy.Load(strings.NewReader(strings.NewReplacer("SCHEMA", mc.DBName, "PFX", pfx).Replace(maCustomPolicy)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := policy.Apply(ctx, g.st, pf); err != nil {
		t.Fatal(err)
	}
	f := &customFixture{gateway: g, schema: mc.DBName, tokens: map[string]string{"agent": g.agent}}
	_, alice := g.identity("alice", "mcp", []string{"hr-analyst"}, nil, auth.MintOptions{})
	sid := f.start(alice)
	deadline := time.Now().Add(5 * time.Second)
	for f.restCall(alice, "GET", "staff/by-department", 1, url.Values{"dept": {"6"}}).status != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("the database never reached the engine: %s", f.restCall(alice, "GET", "staff/by-department", 1, url.Values{"dept": {"6"}}).raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	same := func(method, uri string, params url.Values, want string) {
		t.Helper()
		r := f.restCall(alice, method, uri, 1, params)
		rest := string(bytes.TrimSuffix(r.raw, []byte("\n")))
		if r.status != 200 || rest != want {
			t.Fatalf("REST %s %s %v: %d %s, want %s", method, uri, params, r.status, rest, want)
		}
		if m := f.mcpCall(alice, sid, method, uri, 1, params).ok(t).text; m != rest {
			t.Fatalf("REST and MCP differ:\nREST %s\nMCP  %s", rest, m)
		}
	}
	same("GET", "staff/by-department", url.Values{"dept": {"6"}},
		`{"data":[{"id":2,"full_name":"Rafael","salary":200.00},{"id":3,"full_name":"Robert'); DROP TABLE x;--","salary":null}]}`)
	same("GET", "staff/by-department", url.Values{"dept": {"6"}, "name": {"R%'); DROP TABLE x;--"}},
		`{"data":[{"id":3,"full_name":"Robert'); DROP TABLE x;--","salary":null}]}`)
	same("GET", "staff/by-department", url.Values{"dept": {"7"}, "name": {"' OR 1=1 --"}}, `{"data":[]}`)

	// REST moves Ada, then MCP moves Rafael: two statements each.
	r := f.restCall(alice, "POST", "staff/transfer", 1, url.Values{"id": {"1"}, "dept": {"9"}})
	if got := string(bytes.TrimSuffix(r.raw, []byte("\n"))); r.status != 200 || got != `{"rows_affected":2}` {
		t.Fatalf("REST write: %d %s", r.status, got)
	}
	if m := f.mcpCall(alice, sid, "POST", "staff/transfer", 1, url.Values{"id": {"2"}, "dept": {"9"}}).ok(t).text; m != `{"rows_affected":2}` {
		t.Fatalf("MCP write: %s", m)
	}
	same("GET", "staff/by-department", url.Values{"dept": {"9"}},
		`{"data":[{"id":1,"full_name":"Ada","salary":100.50},{"id":2,"full_name":"Rafael","salary":200.00}]}`)

	// Moving Ada again: the audit line's key exists, so the UPDATE that ran
	// first is rolled back, and both faces say CONFLICT.
	r = f.restCall(alice, "POST", "staff/transfer", 1, url.Values{"id": {"1"}, "dept": {"6"}})
	code, _ := r.httpError(t)
	mcode, _ := f.mcpCall(alice, sid, "POST", "staff/transfer", 1, url.Values{"id": {"1"}, "dept": {"6"}}).refusal(t)
	if r.status != 409 || code != "CONFLICT" || mcode != "CONFLICT" {
		t.Fatalf("duplicate audit line: REST %d %s, MCP %s", r.status, code, mcode)
	}
	var dept int
	if err := admin.QueryRow("SELECT dept FROM " + pfx + "_staff WHERE id = 1").Scan(&dept); err != nil || dept != 9 {
		t.Fatalf("after a failed transfer Ada is in %d (%v), want 9", dept, err)
	}
}
