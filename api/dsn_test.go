package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	_ "github.com/littlebitlabs/minimal/dialects/ms"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// rogueMySQL is a hostile server speaking just enough of the MySQL
// protocol: it greets, accepts any login, and answers every command with a
// LOCAL INFILE request for one file of the gateway's host, recording every
// byte the client sends after that request.
type rogueMySQL struct {
	t    *testing.T
	ln   net.Listener
	file string

	mu    sync.Mutex
	conns int          // connections accepted
	asked int          // LOCAL INFILE requests sent
	got   bytes.Buffer // what clients sent after a request
}

func startRogueMySQL(t *testing.T, file string) *rogueMySQL {
	t.Helper()
	r := &rogueMySQL{t: t, file: file}
	r.ln = serveTCP(t, "127.0.0.1:0", func(c net.Conn) {
		r.mu.Lock()
		r.conns++
		r.mu.Unlock()
		r.serve(c)
	})
	return r
}

// serveTCP listens on addr until the test ends, serving each connection
// in a goroutine of its own.
func serveTCP(t *testing.T, addr string, serve func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln
}

func (r *rogueMySQL) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *rogueMySQL) stats() (conns, asked int, got []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns, r.asked, bytes.Clone(r.got.Bytes())
}

func (r *rogueMySQL) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	// Handshake v10: protocol 41, secure connection, plugin auth, local
	// files; no SSL.
	const caps = 0x1 | 0x80 | 0x200 | 0x2000 | 0x8000 | 0x80000
	hs := []byte{10}
	hs = append(hs, "5.7.99-rogue\x00"...)
	hs = append(hs, 7, 0, 0, 0)
	hs = append(hs, "scramble"...)
	hs = append(hs, 0, caps&0xff, caps>>8&0xff, 33, 2, 0, caps>>16&0xff, caps>>24&0xff, 21)
	hs = append(hs, make([]byte, 10)...)
	hs = append(hs, "more-scramb\x00\x00"[:13]...)
	hs = append(hs, "mysql_native_password\x00"...)
	if writePacket(c, 0, hs) != nil {
		return
	}
	if _, seq, err := readPacket(c); err != nil || writePacket(c, seq+1, []byte{0, 0, 0, 2, 0, 0, 0}) != nil {
		return
	}
	for {
		cmd, seq, err := readPacket(c)
		if err != nil || len(cmd) > 0 && cmd[0] == 1 { // COM_QUIT
			return
		}
		r.mu.Lock()
		r.asked++
		r.mu.Unlock()
		if writePacket(c, seq+1, append([]byte{0xfb}, r.file...)) != nil {
			return
		}
		// The client sends the file's content and an empty packet (or only
		// the empty packet when it refuses), then waits for an answer.
		for {
			body, s, err := readPacket(c)
			r.mu.Lock()
			var hdr [4]byte
			binary.LittleEndian.PutUint32(hdr[:], uint32(len(body))|uint32(s)<<24)
			r.got.Write(hdr[:])
			r.got.Write(body)
			r.mu.Unlock()
			if err != nil {
				return
			}
			if len(body) == 0 {
				seq = s
				break
			}
		}
		if writePacket(c, seq+1, append([]byte{0xff, 0x15, 0x04}, "#28000rogue says no"...)) != nil {
			return
		}
	}
}

func readPacket(c net.Conn) ([]byte, byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil, 0, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	body := make([]byte, n)
	_, err := io.ReadFull(c, body)
	return body, hdr[3], err
}

func writePacket(c net.Conn, seq byte, body []byte) error {
	pkt := append([]byte{byte(len(body)), byte(len(body) >> 8), byte(len(body) >> 16), seq}, body...)
	_, err := c.Write(pkt)
	return err
}

// TestDSNLocalInfileRogueServer: an org admin registers a MySQL database
// on a hostile server that asks, as LOAD DATA LOCAL does, for a file of
// the gateway's host. allowAllFiles=true is refused by name before any
// connection; without it, and even for the operator with it, the
// connection test sends the server no byte of the file.
func TestDSNLocalInfileRogueServer(t *testing.T) {
	secret := fmt.Sprintf("master-key-secret-%d", rand.Uint64())
	file := filepath.Join(t.TempDir(), "master.key")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rogue := startRogueMySQL(t, file)
	g := newAdminGateway(t)
	dbs := demoProj + "/databases"
	dsn := fmt.Sprintf("attacker:pw@tcp(127.0.0.1:%d)/loot", rogue.port())
	leaked := func(when string) {
		t.Helper()
		if _, _, got := rogue.stats(); bytes.Contains(got, []byte(secret)) || bytes.Contains(got, []byte("master-key-secret")) {
			t.Fatalf("%s: the gateway sent the rogue server the local file: %q", when, got)
		}
	}

	// The option is refused by name, before any connection.
	for _, opt := range []string{"allowAllFiles=true", "allowAllFiles=1", "parseTime=true&allowAllFiles=true"} {
		r := g.do("POST", dbs, g.admin, map[string]any{"type": "ma", "schema": "loot", "dsn": dsn + "?" + opt})
		expectErr(t, r, 400, `"allowAllFiles"`, "operator")
		leaked("refused registration")
	}
	if conns, _, _ := rogue.stats(); conns != 0 {
		t.Fatalf("a refused DSN reached the server: %d connections", conns)
	}
	// So is a DSN change to it (on a database registered before).
	ctx := context.Background()
	if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: "ma", Schema: "loot", DSN: dsn}); err != nil {
		t.Fatal(err)
	}
	expectErr(t, g.do("PATCH", dbs+"/ma/loot", g.admin, map[string]any{"dsn": dsn + "?allowAllFiles=true"}), 400, `"allowAllFiles"`)

	// Without the option the server still asks: nothing of the file goes.
	r := g.do("POST", dbs, g.admin, map[string]any{"type": "ma", "schema": "loot2", "dsn": dsn})
	expectErr(t, r, 400, "connection test of ma/loot2 failed")
	if _, asked, _ := rogue.stats(); asked == 0 {
		t.Fatal("the rogue server never got to ask for the file: the test proves nothing")
	}
	leaked("org admin's connection test")
	expectErr(t, g.do("POST", dbs+"/ma/loot/test", g.admin, nil), 400, "connection test")
	leaked("org admin's test of a registered database")

	// The operator may write the option, but the driver still sends
	// nothing: Open turns it off.
	_, before, _ := rogue.stats()
	expectErr(t, g.withKey("POST", dbs, map[string]any{"type": "ma", "schema": "loot3", "dsn": dsn + "?allowAllFiles=true"}), 400, "connection test of ma/loot3 failed")
	if _, asked, _ := rogue.stats(); asked == before {
		t.Fatal("the operator's connection test never reached the rogue server")
	}
	leaked("operator's connection test with allowAllFiles=true")
	expectErr(t, g.withKey("PATCH", dbs+"/ma/loot", map[string]any{"dsn": dsn + "?allowAllFiles=true"}), 400, "connection test")
	leaked("operator's DSN change with allowAllFiles=true")
}

// TestDSNFileOptions: connection string options that name a file, a
// program or a local socket of the gateway's host are refused by name for
// an org admin, on every type, in every form of the string; the operator
// may use them.
func TestDSNFileOptions(t *testing.T) {
	dsn := pgDSN(t)
	g := newAdminGateway(t)
	dbs := demoProj + "/databases"
	pgKeyword := "host=127.0.0.1 port=1 user=u password=p dbname=x sslmode=disable connect_timeout=2"
	for _, tc := range []struct{ typ, dsn, option string }{
		{"pg", "postgres://u:p@127.0.0.1:1/x?sslmode=disable&sslkey=/etc/ssl/private/gateway.key", "sslkey"},
		{"pg", "postgres://u:p@127.0.0.1:1/x?sslcert=/etc/passwd&sslmode=require", "sslcert"},
		{"pg", "postgres://u:p@127.0.0.1:1/x?ssl%72ootcert=/etc/passwd", "sslrootcert"},
		{"pg", "postgres://u:p@127.0.0.1:1/x?passfile=/root/.pgpass", "passfile"},
		{"pg", "postgres://u:p@127.0.0.1:1/x?servicefile=/tmp/evil.conf&service=evil", "servicefile"},
		{"pg", pgKeyword + " service=prod", "service"},
		{"pg", pgKeyword + " sslkey = '/etc/ssl/private/a key.pem'", "sslkey"},
		{"pg", "password='x y' sslcrl=/tmp/crl host=127.0.0.1", "sslcrl"},
		{"pg", "postgres://u:p@%2Fvar%2Frun%2Fpostgresql/x", "host"},
		{"pg", "host=/tmp user=u dbname=x", "host"},
		{"ma", "u:p@unix(/var/run/mysqld/mysqld.sock)/x", "unix"},
		{"ma", "u:p@tcp(127.0.0.1:1)/x?serverPubKey=gateway", "serverPubKey"},
		{"ms", "sqlserver://u:p@127.0.0.1:1?database=x&certificate=/etc/ssl/private/gateway.pem", "certificate"},
		{"ms", "server=127.0.0.1;user id=u;password=p;Server Certificate=/etc/ssl/gw.pem", "server certificate"},
		{"ms", "odbc:server=127.0.0.1;uid=u;krb5-keytabfile=/etc/krb5.keytab", "krb5-keytabfile"},
		{"ms", "sqlserver://u:p@127.0.0.1:1?krb5-configfile=/etc/krb5.conf", "krb5-configfile"},
	} {
		r := g.do("POST", dbs, g.admin, map[string]any{"type": tc.typ, "schema": "files", "dsn": tc.dsn})
		if r.status != 400 || !strings.Contains(r.errorMessage(t), `"`+tc.option+`"`) || r.json(t)["error"].(map[string]any)["code"] != dialects.CodeOptionRefused {
			t.Errorf("%s %q: %d %s, want 400 naming %q", tc.typ, tc.dsn, r.status, r.body, tc.option)
		}
	}

	// The operator may: the real test database with a key file that the
	// driver only reads for TLS (sslmode=disable) registers.
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	withKey := dsn + sep + "sslkey=" + qpath(filepath.Join(t.TempDir(), "client.key")) + "&sslcert=" + qpath(filepath.Join(t.TempDir(), "client.crt"))
	expectErr(t, g.do("POST", dbs, g.admin, map[string]any{"type": "pg", "schema": "public", "dsn": withKey}), 400, `"sslkey"`)
	if !strings.Contains(withKey, "sslmode=disable") {
		t.Skip("the test DSN does not disable TLS: the key would be read")
	}
	expect(t, g.withKey("POST", dbs, map[string]any{"type": "pg", "schema": "public", "dsn": withKey}), 201)
	// And an org admin may not switch the registered DSN to another file.
	expectErr(t, g.do("PATCH", dbs+"/pg/public", g.admin, map[string]any{"dsn": dsn + sep + "passfile=/etc/shadow"}), 400, `"passfile"`)
	expect(t, g.do("PATCH", dbs+"/pg/public", g.admin, map[string]any{"dsn": dsn}), 200)
}

// qpath escapes a path for a URL query value.
func qpath(s string) string { return strings.ReplaceAll(s, "/", "%2F") }

// TestDSNHostAllowlist: with --db-allow set, an org admin registers
// databases only on the listed networks and names, checked before any
// connection; names are not resolved; every host of a string counts
// (PostgreSQL fallbacks, ClickHouse alt_hosts); the operator is not
// limited.
func TestDSNHostAllowlist(t *testing.T) {
	t.Setenv(api.EnvServerKey, testServerKey)
	allow, err := dialects.ParseHostList("127.0.0.0/31, db.internal, .corp.test")
	if err != nil {
		t.Fatal(err)
	}
	g := newOpsGateway(t, engine.Config{}, api.Config{DBAllow: allow}).gateway
	dbs := demoProj + "/databases"

	// A listener outside the list counts who knocks.
	var knocks atomic.Int32
	out := serveTCP(t, "127.0.0.2:0", func(c net.Conn) {
		knocks.Add(1)
		c.Close()
	}).Addr().String()
	closed := closedPort(t)
	for _, tc := range []struct{ typ, dsn, host string }{
		{"pg", "postgres://u:p@" + out + "/x?sslmode=disable&connect_timeout=2", "127.0.0.2"},
		{"pg", "postgres://u:p@127.0.0.1:" + closed + "," + out + "/x?sslmode=disable&connect_timeout=2", "127.0.0.2"},
		{"pg", "host=localhost port=" + closed + " user=u dbname=x sslmode=disable", "localhost"},
		{"pg", "postgres://u:p@corp.test:5432/x", "corp.test"},
		{"pg", "postgres://u:p@db.internal.evil.example:5432/x", "db.internal.evil.example"},
		{"ma", "u:p@tcp(" + out + ")/x", "127.0.0.2"},
		{"ma", "u:p@tcp([::ffff:127.0.0.2]:3306)/x", "::ffff:127.0.0.2"},
		{"ch", "clickhouse://127.0.0.1:" + closed + "/x?alt_hosts=" + out, "127.0.0.2"},
		{"ms", "sqlserver://u:p@" + out + "?database=x", "127.0.0.2"},
		{"ms", "sqlserver://u:p@127.0.0.1:" + closed + "?database=x&failoverpartner=127.0.0.2", "127.0.0.2"},
	} {
		r := g.do("POST", dbs, g.admin, map[string]any{"type": tc.typ, "schema": "outside", "dsn": tc.dsn})
		if r.status != 403 || !strings.Contains(r.errorMessage(t), `"`+tc.host+`"`) {
			t.Errorf("%s %q: %d %s, want 403 naming %q", tc.typ, tc.dsn, r.status, r.body, tc.host)
		}
	}
	if n := knocks.Load(); n != 0 {
		t.Fatalf("a refused registration connected %d times", n)
	}
	// Inside the list: the connection test runs (and fails: nothing listens).
	for _, tc := range []struct{ typ, dsn string }{
		{"pg", "postgres://u:p@127.0.0.1:" + closed + "/x?sslmode=disable&connect_timeout=2"},
		{"pg", "postgres://u:p@DB.Internal.:" + closed + "/x?sslmode=disable&connect_timeout=2"},
		{"pg", "postgres://u:p@eu.corp.test:" + closed + "/x?sslmode=disable&connect_timeout=2"},
		{"ma", "u:p@tcp(127.0.0.1:" + closed + ")/x"},
		{"ma", "u:p@tcp(127.0.0.0:" + closed + ")/x"},
	} {
		expectErr(t, g.do("POST", dbs, g.admin, map[string]any{"type": tc.typ, "schema": "inside", "dsn": tc.dsn}), 400, "connection test")
	}
	// A DSN change is held to the list too.
	ctx := context.Background()
	if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: "pg", Schema: "moved", DSN: "postgres://u:p@127.0.0.1:" + closed + "/x"}); err != nil {
		t.Fatal(err)
	}
	expectErr(t, g.do("PATCH", dbs+"/pg/moved", g.admin, map[string]any{"dsn": "postgres://u:p@" + out + "/x"}), 403, `"127.0.0.2"`)
	if n := knocks.Load(); n != 0 {
		t.Fatalf("a refused DSN change connected %d times", n)
	}
	// The operator is not limited.
	expectErr(t, g.withKey("POST", dbs, map[string]any{"type": "pg", "schema": "outside", "dsn": "postgres://u:p@" + out + "/x?sslmode=disable&connect_timeout=2"}), 400, "connection test")
	if knocks.Load() == 0 {
		t.Fatal("the operator's registration did not reach the host")
	}
}

// closedPort returns a TCP port of 127.0.0.1 where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return port
}

// TestDSNProbeNoPortScan: an org admin's connection test answers the same
// for a closed port, a port where something that is no database answers
// and a port that accepts and stays silent, so the gateway cannot be used
// to map its network; the operator keeps the dialect's message.
func TestDSNProbeNoPortScan(t *testing.T) {
	g := newAdminGateway(t)
	dbs := demoProj + "/databases"
	// listen serves every connection of a new listener with serve.
	listen := func(serve func(net.Conn)) string {
		_, port, _ := net.SplitHostPort(serveTCP(t, "127.0.0.1:0", serve).Addr().String())
		return port
	}
	ports := map[string]string{
		"closed": closedPort(t),
		// Something that is not a database: answers at once and hangs up.
		"web": listen(func(c net.Conn) {
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			c.Close()
		}),
		// Something that accepts and says nothing.
		"silent": listen(func(c net.Conn) {
			time.Sleep(5 * time.Second)
			c.Close()
		}),
	}
	forms := map[string]string{
		"pg": "postgres://u:p@127.0.0.1:%s/x?sslmode=disable&connect_timeout=1",
		"ma": "u:p@tcp(127.0.0.1:%s)/x?timeout=1s&readTimeout=1s",
		"ch": "clickhouse://u:p@127.0.0.1:%s/x?dial_timeout=1s&read_timeout=1s",
	}
	admin := map[string]string{"LB-Access-Token": g.admin}
	key := map[string]string{api.ServerKeyHeader: testServerKey}
	for typ, form := range forms {
		answer := func(port string, hdr map[string]string) string {
			r := g.send("POST", dbs, hdr, map[string]any{"type": typ, "schema": "scan", "dsn": fmt.Sprintf(form, port)})
			e, _ := r.json(t)["error"].(map[string]any)
			return fmt.Sprintf("%d %v %s", r.status, e["code"], e["message"])
		}
		want := fmt.Sprintf("400 %s connection test of %s/scan failed: %s", api.CodeConnectionTest, typ, dialects.Unreachable)
		operator := map[string]string{}
		for what, port := range ports {
			if got := answer(port, admin); got != want {
				t.Errorf("%s, %s port: an org admin is answered %q, want %q", typ, what, got, want)
			}
			operator[what] = answer(port, key)
			if strings.Contains(operator[what], dialects.Unreachable) || !strings.Contains(operator[what], "failed to connect: ") {
				t.Errorf("%s, %s port: the operator is answered %q", typ, what, operator[what])
			}
		}
		t.Logf("%s: the operator is told %v", typ, operator)
	}
}

// TestPoolCapMa: with the default configuration, many concurrent requests
// on a MariaDB database open no more server connections than the default
// pool size (and all succeed, waiting their turn).
func TestPoolCapMa(t *testing.T) {
	maDSN := dialecttest.DSN(t, "MINIMAL_TEST_MA_DSN")
	name := fmt.Sprintf("minimal_pool_%d_%d", os.Getpid(), rand.Uint32())
	admin, err := sql.Open("mysql", maDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name); admin.Close() })
	for _, q := range []string{"CREATE DATABASE " + name, "CREATE TABLE " + name + ".t (id int PRIMARY KEY)",
		"INSERT INTO " + name + ".t VALUES (1)", "CREATE VIEW " + name + ".slow AS SELECT id, SLEEP(0.3) AS z FROM " + name + ".t"} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	mc, err := mysql.ParseDSN(maDSN)
	if err != nil {
		t.Fatal(err)
	}
	mc.DBName = name // the pool's connections are the ones on this database
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: "ma", Schema: name, DSN: mc.FormatDSN()}); err != nil {
		t.Fatal(err)
	}
	path := "/ma/" + name + "/slow?ps=1&pg=0"
	g.waitFor(path)

	limit := dialects.DefaultMaxConns()
	n := 3*limit + 2
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() { statuses[i] = g.do("GET", auto+path, g.admin, nil).status })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	most := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(20 * time.Millisecond):
		}
		var c int
		if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = ?", name).Scan(&c); err != nil {
			t.Fatal(err)
		}
		most = max(most, c)
	}
	for i, s := range statuses {
		if s != 200 {
			t.Fatalf("request %d: status %d", i, s)
		}
	}
	if most > limit {
		t.Fatalf("%d concurrent requests opened %d server connections; the pool's bound is %d", n, most, limit)
	}
	if most < 2 {
		t.Fatalf("at most %d connection seen: the requests did not overlap, the test proves nothing", most)
	}
	t.Logf("%d concurrent requests, at most %d server connections (bound %d)", n, most, limit)
}
