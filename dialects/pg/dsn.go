package pg

import (
	"net/url"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

func init() { dialects.RegisterDSNChecker("pg", CheckDSN) }

// fileKeys are the connection string keys that make pgconn (or libpq)
// read a file of the gateway's host: client certificate and key, CA and
// revocation lists, the password file, the service file and a service
// (which is looked up in a service file, whose entries override host,
// port and sslmode).
var fileKeys = []string{"sslcert", "sslkey", "sslrootcert", "sslcrl", "sslcrldir", "passfile", "service", "servicefile"}

// baseKeys are the settings a URL form sets from its user info, host
// list and path; they are always allowed.
var baseKeys = []string{"user", "password", "host", "port", "database", "dbname"}

// CheckDSN is the DSNChecker of PostgreSQL connection strings (URL or
// keyword/value form). A key naming a file (fileKeys) is refused by name
// before anything is parsed further. The string is then parsed by pgconn
// itself, told to accept no key but those found here, so that a key this
// reading missed fails closed; a host that is a Unix socket directory (a
// path, or no host at all where the default is a socket) is refused. The
// hosts are those pgconn will dial, fallbacks included.
func CheckDSN(dsn string) ([]string, error) {
	keys := connStringKeys(dsn)
	for _, k := range keys {
		if slices.Contains(fileKeys, k) {
			return nil, dialects.FileOption(k, "a file")
		}
	}
	pc, err := pgconn.ParseConfigWithOptions(dsn, pgconn.ParseConfigOptions{ConnStringAllowedKeys: append(keys, baseKeys...)})
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "invalid PostgreSQL connection string (%s)", dsnForms)
	}
	hosts := []string{pc.Host}
	for _, fb := range pc.Fallbacks {
		if !slices.Contains(hosts, fb.Host) {
			hosts = append(hosts, fb.Host)
		}
	}
	for _, h := range hosts {
		if network, _ := pgconn.NetworkAddress(h, pc.Port); network == "unix" {
			return nil, dialects.FileOption("host", "a Unix socket directory")
		}
	}
	return hosts, nil
}

// connStringKeys lists the keys of a connection string: at least every
// key pgconn will read from it (it may list more, from text inside
// values, which only makes the check stricter).
func connStringKeys(dsn string) []string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		// Every query pair follows a '?' or a '&'; splitting on both
		// anywhere in the string finds each pair pgconn reads, and
		// perhaps pieces of the user info too.
		var keys []string
		for pair := range strings.FieldsFuncSeq(dsn, func(r rune) bool { return r == '?' || r == '&' }) {
			k, _, ok := strings.Cut(pair, "=")
			if !ok {
				continue
			}
			if dec, err := url.PathUnescape(k); err == nil {
				k = dec
			}
			keys = append(keys, strings.TrimSpace(k))
		}
		return keys
	}
	return keywordKeys(dsn)
}

// keywordKeys reads the keys of a keyword/value string as pgconn does:
// key = value pairs separated by white space, a value either bare (up to
// white space, a backslash escaping the next byte) or single-quoted (a
// backslash escaping the next byte).
func keywordKeys(s string) []string {
	const space = " \t\n\r\v\f"
	var keys []string
	s = strings.TrimLeft(s, space)
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			break
		}
		keys = append(keys, strings.Trim(s[:eq], space))
		s = strings.TrimLeft(s[eq+1:], space)
		quoted := s != "" && s[0] == '\''
		if quoted {
			s = s[1:]
		}
		end := 0
		for ; end < len(s); end++ {
			if quoted && s[end] == '\'' || !quoted && strings.IndexByte(space, s[end]) >= 0 {
				break
			}
			if s[end] == '\\' {
				end++
			}
		}
		if quoted && end < len(s) {
			end++ // the closing quote
		}
		s = strings.TrimLeft(s[min(end, len(s)):], space)
	}
	return keys
}

// dsnForms names the connection strings this type takes, for the message
// of one it cannot read.
const dsnForms = "expected postgres://user:pass@host:5432/db?sslmode=require or host=host port=5432 user=user dbname=db"
