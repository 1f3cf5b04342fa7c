package dialects_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	_ "github.com/littlebitlabs/minimal/dialects/ch"
	_ "github.com/littlebitlabs/minimal/dialects/ma"
	_ "github.com/littlebitlabs/minimal/dialects/ms"
	_ "github.com/littlebitlabs/minimal/dialects/pg"
	"github.com/littlebitlabs/minimal/fault"
)

// TestCheckDSNFileOptions: every option naming a file, a program or a
// local socket is refused by name for anyone but the operator, in every
// spelling the drivers read; ordinary options pass.
func TestCheckDSNFileOptions(t *testing.T) {
	refused := []struct{ typ, dsn, option string }{
		{"pg", "postgres://u:p@db/x?sslkey=/k", "sslkey"},
		{"pg", "postgresql://u:p@db/x?sslmode=verify-full&sslrootcert=/ca.pem", "sslrootcert"},
		{"pg", "postgres://u:p@db/x?%73slcert=/c", "sslcert"},
		{"pg", "postgres://u:p@db/x?passfile=/root/.pgpass", "passfile"},
		{"pg", "postgres://u:p@db/x?service=a", "service"},
		{"pg", "postgres://u:p@db/x?sslcrl=/crl", "sslcrl"},
		{"pg", "host=db servicefile=/tmp/s.conf service=a", "servicefile"},
		{"pg", "host=db sslkey='/a b'", "sslkey"},
		{"pg", `host=db password='it\'s' passfile = /p`, "passfile"},
		{"pg", `host=db password=a\ b sslcrldir=/d`, "sslcrldir"},
		{"pg", "host=/var/run/postgresql dbname=x", "host"},
		{"pg", "postgres://u:p@%2Ftmp/x", "host"},
		{"pg", "postgres://u:p@db,%2Ftmp/x", "host"},
		{"ma", "u:p@tcp(db:3306)/x?allowAllFiles=true", "allowAllFiles"},
		{"ma", "u:p@tcp(db:3306)/x?allowAllFiles=1&parseTime=true", "allowAllFiles"},
		{"ma", "u:p@tcp(db:3306)/x?serverPubKey=k", "serverPubKey"},
		{"ma", "u:p@tcp(db:3306)/x?tls=custom", "tls"},
		{"ma", "u:p@unix(/run/mysqld.sock)/x", "unix"},
		{"ms", "sqlserver://u:p@db?certificate=/c.pem", "certificate"},
		{"ms", "sqlserver://u:p@db?Certificate=/c.pem", "certificate"},
		{"ms", "sqlserver://u:p@db?servercertificate=/c.pem", "servercertificate"},
		{"ms", "server=db;user id=u;Server Certificate = /c.pem", "server certificate"},
		{"ms", "server=db;password=\"a;b\";krb5-credcachefile=/tmp/cc", "krb5-credcachefile"},
		{"ms", "odbc:server=db;krb5-configfile=/etc/krb5.conf", "krb5-configfile"},
		{"ms", "server=db;pipe=\\\\.\\pipe\\sql\\query", "pipe"},
	}
	for _, tc := range refused {
		err := dialects.CheckDSN(tc.typ, tc.dsn, dialects.Trust{})
		if fe := fault.As(err); fe.Kind != fault.Invalid || fe.Code != dialects.CodeOptionRefused || !strings.Contains(fe.Message, `"`+tc.option+`"`) {
			t.Errorf("%s %q: %v, want Invalid naming %q", tc.typ, tc.dsn, err, tc.option)
		}
		if err := dialects.CheckDSN(tc.typ, tc.dsn, dialects.Trust{Operator: true}); err != nil {
			t.Errorf("%s %q: refused for the operator: %v", tc.typ, tc.dsn, err)
		}
	}
	allowed := []struct{ typ, dsn string }{
		{"pg", "postgres://u:p@db:5432/x?sslmode=verify-full&application_name=a&search_path=s"},
		{"pg", "postgres://u:p@db/x?ssl=true&pool_max_conns=3"},
		{"pg", "host=db port=5432 user=u password='sslkey=/k' dbname=x sslmode=require"},
		{"pg", "host = db dbname = x  connect_timeout = 2"},
		{"ma", "u:p@tcp(db:3306)/x?parseTime=true&tls=skip-verify&allowAllFiles=false"},
		{"ms", "sqlserver://u:p@db:1433?database=x&encrypt=true&hostnameincertificate=db&trustservercertificate=false"},
		{"ms", "server=db;user id=u;password=p;database=x"},
		{"ch", "clickhouse://u:p@db:9000/x?dial_timeout=2s&secure=true"},
	}
	for _, tc := range allowed {
		if err := dialects.CheckDSN(tc.typ, tc.dsn, dialects.Trust{}); err != nil {
			t.Errorf("%s %q: %v", tc.typ, tc.dsn, err)
		}
	}
	// A string the driver cannot read is Invalid, not an option refused.
	for _, tc := range []struct{ typ, dsn string }{{"pg", "postgres://u@[::1:bad/x"}, {"ma", "u@tcp(db/x"}, {"ch", "clickhouse://"}} {
		if fe := fault.As(dialects.CheckDSN(tc.typ, tc.dsn, dialects.Trust{})); fe.Kind != fault.Invalid || fe.Code == dialects.CodeOptionRefused {
			t.Errorf("%s %q: %v", tc.typ, tc.dsn, fe)
		}
	}
	// A type without a checker is the operator's alone.
	if err := dialects.CheckDSN("mi", "/srv/tables", dialects.Trust{}); fault.KindOf(err) != fault.Forbidden {
		t.Errorf("mi for an org admin: %v", err)
	}
	if err := dialects.CheckDSN("mi", "/srv/tables", dialects.Trust{Operator: true}); err != nil {
		t.Errorf("mi for the operator: %v", err)
	}
}

// TestHostList: networks by CIDR or address, names exactly or by a
// leading-dot suffix, never resolved; every host of a DSN must be in.
func TestHostList(t *testing.T) {
	l, err := dialects.ParseHostList(" 10.0.0.0/8, 192.168.1.7, fd00::/8, db.internal, .corp.example. ,")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"10.1.2.3", "192.168.1.7", "::ffff:10.0.0.1", "[fd00::1]", "fd00::1%eth0", "db.internal", "DB.Internal.", "a.corp.example", "a.b.corp.example"} {
		if !l.Allows(h) {
			t.Errorf("%q refused", h)
		}
	}
	for _, h := range []string{"11.0.0.1", "192.168.1.8", "127.0.0.1", "localhost", "::1", "corp.example", "xcorp.example", "db.internal.evil", "evil-db.internal", "167772161", ""} {
		if l.Allows(h) {
			t.Errorf("%q allowed", h)
		}
	}
	if l, err := dialects.ParseHostList(" , "); l != nil || err != nil {
		t.Errorf("empty list: %v, %v", l, err)
	}
	var none *dialects.HostList
	if !none.Allows("anything") {
		t.Error("a nil list refuses")
	}
	for _, bad := range []string{"10.0.0.0/33", "a b", "user@host", "host:5432"} {
		if _, err := dialects.ParseHostList(bad); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%q: %v", bad, err)
		}
	}

	trust := dialects.Trust{Hosts: l}
	for _, tc := range []struct {
		typ, dsn string
		ok       bool
	}{
		{"pg", "postgres://u:p@10.0.0.5:5432/x", true},
		{"pg", "postgres://u:p@10.0.0.5,11.0.0.5/x", false},
		{"pg", "host=db.internal,x.corp.example dbname=x", true},
		{"pg", "host=localhost dbname=x", false},
		{"ma", "u:p@tcp(db.internal:3306)/x", true},
		{"ma", "u:p@tcp([fd00::7]:3306)/x", true},
		{"ma", "u:p@tcp(127.0.0.1:3306)/x", false},
		{"ch", "clickhouse://10.0.0.1:9000/x?alt_hosts=10.0.0.2:9000", true},
		{"ch", "clickhouse://10.0.0.1:9000/x?alt_hosts=8.8.8.8:9000", false},
		{"ch", "clickhouse://10.0.0.1:9000,8.8.8.8:9000/x", false},
		{"ms", "sqlserver://u:p@db.internal?database=x&failoverpartner=8.8.8.8", false},
		{"ms", "server=db.internal\\inst;database=x", true},
	} {
		err := dialects.CheckDSN(tc.typ, tc.dsn, trust)
		if tc.ok && err != nil || !tc.ok && fault.KindOf(err) != fault.Forbidden {
			t.Errorf("%s %q: %v, want allowed %v", tc.typ, tc.dsn, err, tc.ok)
		}
		if err := dialects.CheckDSN(tc.typ, tc.dsn, dialects.Trust{Operator: true, Hosts: l}); err != nil {
			t.Errorf("%s %q: the operator is limited: %v", tc.typ, tc.dsn, err)
		}
	}
	if s := l.String(); !slices.Contains(strings.Split(s, ","), "10.0.0.0/8") || !strings.Contains(s, ".corp.example") {
		t.Errorf("String() = %q", s)
	}
}
