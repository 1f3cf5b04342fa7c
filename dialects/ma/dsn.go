package ma

import (
	"net"
	"net/url"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

func init() { dialects.RegisterDSNChecker("ma", CheckDSN) }

// CheckDSN is the DSNChecker of MySQL/MariaDB connection strings, read by
// the driver's own parser (which opens no file). Refused: allowAllFiles
// (the driver would send the server any file it asks for with LOAD DATA
// LOCAL; Open turns it off whatever the DSN says, and registers no local
// file or reader, but the option says what its author meant),
// serverPubKey (a key registered in the process), a tls value naming a
// registered TLS configuration, and any network but TCP (a Unix socket is
// a file of the gateway's host). The host is the TCP address's.
func CheckDSN(dsn string) ([]string, error) {
	dsn, err := driverDSN(dsn)
	if err != nil {
		return nil, err
	}
	// The driver's parser refuses a key or TLS name nobody registered
	// with an error that does not say which: name the option first.
	for pair := range strings.FieldsFuncSeq(dsn, func(r rune) bool { return r == '?' || r == '&' }) {
		switch k, v, _ := strings.Cut(pair, "="); k {
		case "serverPubKey":
			return nil, dialects.FileOption(k, "a key registered in the gateway's process")
		case "tls":
			if !standardTLS(strings.ToLower(v)) {
				return nil, dialects.FileOption(k, "a TLS configuration registered in the gateway's process")
			}
		}
	}
	mc, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	switch {
	case mc.AllowAllFiles:
		return nil, dialects.FileOption("allowAllFiles", "every file (LOAD DATA LOCAL INFILE)")
	case mc.ServerPubKey != "":
		return nil, dialects.FileOption("serverPubKey", "a key registered in the gateway's process")
	case !standardTLS(mc.TLSConfig):
		return nil, dialects.FileOption("tls", "a TLS configuration registered in the gateway's process")
	}
	switch mc.Net {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, dialects.FileOption(mc.Net, "a local socket")
	}
	return []string{dialects.SplitHost(mc.Addr)}, nil
}

// standardTLS reports whether a tls value is one the driver knows without
// a registered configuration.
func standardTLS(v string) bool {
	switch v {
	case "", "true", "false", "1", "0", "skip-verify", "preferred":
		return true
	}
	return false
}

// dsnForms names the connection strings this type takes, for the message
// of one it cannot read.
const dsnForms = "expected user:pass@tcp(host:3306)/db?param=value or mysql://user:pass@host:3306/db?param=value"

// parseDSN reads a connection string in either form (see driverDSN) with
// the driver's parser. One it cannot read is fault.Invalid naming the
// forms it takes, and nothing of the string.
func parseDSN(dsn string) (*mysql.Config, error) {
	d, err := driverDSN(dsn)
	if err != nil {
		return nil, err
	}
	mc, err := mysql.ParseDSN(d)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "invalid MySQL connection string (%s)", dsnForms)
	}
	return mc, nil
}

// driverDSN turns a URL-style connection string, mysql:// or mariadb://
// (user:pass@host:port/db?param=value, port 3306 by default, user and
// password URL-escaped), into the driver's form; any other string is
// returned as it is. Checks and Open read the converted form.
func driverDSN(dsn string) (string, error) {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok || !(strings.EqualFold(scheme, "mysql") || strings.EqualFold(scheme, "mariadb")) {
		return dsn, nil
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" || u.Opaque != "" || u.Fragment != "" {
		return "", fault.New(fault.Invalid, "invalid MySQL connection string URL (%s)", dsnForms)
	}
	mc := mysql.NewConfig()
	mc.Net = "tcp"
	mc.Addr = u.Host
	if u.Port() == "" {
		mc.Addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	if u.User != nil {
		mc.User = u.User.Username()
		mc.Passwd, _ = u.User.Password()
	}
	mc.DBName = strings.TrimPrefix(u.Path, "/")
	if strings.Contains(mc.DBName, "/") {
		return "", fault.New(fault.Invalid, "invalid MySQL connection string URL: the path is one database name (%s)", dsnForms)
	}
	out := mc.FormatDSN()
	if u.RawQuery != "" {
		sep := "?"
		if strings.Contains(out, "?") {
			sep = "&"
		}
		out += sep + u.RawQuery
	}
	return out, nil
}
