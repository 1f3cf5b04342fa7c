package ms_test

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
)

// TestConformance runs the shared conformance suite on the SQL Server named
// by MINIMAL_TEST_MS_DSN, in a fresh schema holding the fixture tables. It
// is skipped, with the reason printed, where no SQL Server is (see msDSN).
func TestConformance(t *testing.T) {
	db := newTestDB(t)
	// name and note compare case-sensitively (the suite's "Ann" and
	// "ann"), as the specification asks: a BIN2 collation.
	const cs = "COLLATE Latin1_General_100_BIN2"
	db.create(t, "TABLE", dialecttest.TableItems, "CREATE TABLE "+db.q(dialecttest.TableItems)+` (
		[id]     bigint IDENTITY(1,1) PRIMARY KEY,
		[name]   nvarchar(200) `+cs+` NOT NULL UNIQUE,
		[qty]    bigint NULL,
		[ratio]  float NULL,
		[active] bit NULL,
		[note]   nvarchar(max) `+cs+` NULL)`)
	db.create(t, "TABLE", dialecttest.TableWrites, "CREATE TABLE "+db.q(dialecttest.TableWrites)+` (
		[id]   bigint IDENTITY(1,1) PRIMARY KEY,
		[name] nvarchar(200) `+cs+` NOT NULL UNIQUE,
		[qty]  bigint NULL,
		[n]    bigint NULL DEFAULT 7)`)
	db.create(t, "TABLE", dialecttest.TableTypes, "CREATE TABLE "+db.q(dialecttest.TableTypes)+` (
		[name] nvarchar(200) `+cs+` NOT NULL,
		[i64]  bigint NULL,
		[dec]  decimal(20,6) NULL,
		[f64]  float NULL,
		[b]    bit NULL,
		[s]    nvarchar(max) `+cs+` NULL,
		[d]    date NULL,
		[ts]   datetime2(6) NULL,
		[tz]   datetimeoffset(6) NULL,
		[u]    uniqueidentifier NULL,
		[by]   varbinary(max) NULL)`)
	// Rows stream at once and forever (about 10^10 of them), so a deadline
	// or a cut connection is noticed by the server as soon as it happens.
	db.create(t, "VIEW", dialecttest.TableSlow, "CREATE VIEW "+db.q(dialecttest.TableSlow)+` AS
		SELECT CAST(a.object_id AS bigint) AS x
		FROM sys.all_objects AS a CROSS JOIN sys.all_objects AS b CROSS JOIN sys.all_objects AS c`)

	addr, via := proxyable(t, db.dsn)
	dialecttest.RunConformance(t, dialecttest.Harness{
		Type:   "ms",
		Config: dialects.Config{DSN: db.dsn, Schema: db.schema},
		Lacks: dialecttest.Lacks{
			JSON: "SQL Server has no JSON column type before SQL Server 2025: JSON lives in nvarchar(max) " +
				"(a string), and 2025's json type reaches go-mssqldb as nvarchar(max) too",
			Array: "SQL Server has no array type",
		},
		NullOrder: dialecttest.NullsSmallest,
		// 2100 parameters a request, two of them sp_executesql's own.
		MaxInsertValues: 2098,
		Addr:            addr,
		ViaProxy:        via,
	})
}

// proxyable returns the server's host:port from dsn and a function that
// rewrites dsn to connect to another address, keeping every other setting;
// the certificate is still checked against the real host's name.
func proxyable(t *testing.T, dsn string) (string, func(addr string) string) {
	t.Helper()
	mc, err := msdsn.Parse(dsn)
	if err != nil {
		t.Fatalf("%s: %v", dsnEnv, err)
	}
	port := mc.Port
	if port == 0 {
		if mc.Instance != "" {
			t.Fatalf("%s names the instance %q without a port; the outage tests route the connection through a "+
				"TCP proxy and need host:port", dsnEnv, mc.Instance)
		}
		port = 1433
	}
	addr := net.JoinHostPort(mc.Host, strconv.FormatUint(port, 10))
	return addr, func(to string) string {
		host, p, err := net.SplitHostPort(to)
		if err != nil {
			t.Fatalf("proxy address %q: %v", to, err)
		}
		params := map[string]string{}
		for k, v := range mc.Parameters {
			params[k] = v
		}
		params[msdsn.Server] = host
		params[msdsn.Port] = p
		if _, ok := params[msdsn.HostNameInCertificate]; !ok {
			params[msdsn.HostNameInCertificate] = mc.Host
		}
		keys := make([]string, 0, len(params))
		for k := range params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var sb strings.Builder
		for _, k := range keys {
			// ADO form, every value quoted so ; and = in a password pass.
			sb.WriteString(k + `="` + strings.ReplaceAll(params[k], `"`, `""`) + `";`)
		}
		return sb.String()
	}
}

// TestProxyDSN checks the harness's DSN rewriting, which needs no server.
func TestProxyDSN(t *testing.T) {
	for _, dsn := range []string{
		`sqlserver://sa:p%3Bw%22d=x@db.example:14330?database=minimal&encrypt=true`,
		`server=db.example,14330;user id=sa;password="p;w""d=x";database=minimal;encrypt=true`,
	} {
		addr, via := proxyable(t, dsn)
		if addr != "db.example:14330" {
			t.Errorf("%s: addr %q", dsn, addr)
		}
		mc, err := msdsn.Parse(via("127.0.0.1:5555"))
		if err != nil {
			t.Fatalf("%s: rewritten DSN: %v", dsn, err)
		}
		if mc.Host != "127.0.0.1" || mc.Port != 5555 || mc.User != "sa" || mc.Password != `p;w"d=x` ||
			mc.Database != "minimal" || mc.Encryption != msdsn.EncryptionRequired || mc.TLSConfig == nil ||
			mc.TLSConfig.ServerName != "db.example" {
			t.Errorf("%s: rewritten to host %q port %d user %q password %q database %q encryption %v TLS %+v",
				dsn, mc.Host, mc.Port, mc.User, mc.Password, mc.Database, mc.Encryption, mc.TLSConfig)
		}
	}
	if addr, _ := proxyable(t, "sqlserver://sa:x@db.example"); addr != "db.example:1433" {
		t.Errorf("default port: %q", addr)
	}
}
