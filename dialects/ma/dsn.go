package ma

import (
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
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "invalid MySQL connection string")
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
