package ms

import (
	"net/url"
	"slices"
	"strings"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

func init() { dialects.RegisterDSNChecker("ms", CheckDSN) }

// fileKeys are the go-mssqldb settings that name a file or a named pipe
// of the gateway's host: the CA certificate and the pinned server
// certificate (read while the string is parsed), the Kerberos
// configuration, keytab and credential cache, and a named pipe.
var fileKeys = []string{msdsn.Certificate, msdsn.ServerCertificate, "server certificate",
	"krb5-configfile", "krb5-keytabfile", "krb5-credcachefile", msdsn.Pipe}

// CheckDSN is the DSNChecker of SQL Server connection strings (sqlserver://
// URL, ADO key=value; or odbc: form). msdsn.Parse reads the certificate
// files a string names, so the keys are first looked for in a reading of
// the raw string that finds every key the driver's parsers can (and
// perhaps more, from text inside values); then the string is parsed by
// the driver and its parameters checked again. Refused: fileKeys and any
// protocol but TCP. The hosts are the server and the failover partner.
func CheckDSN(dsn string) ([]string, error) {
	for _, k := range rawKeys(dsn) {
		if slices.Contains(fileKeys, k) {
			return nil, dialects.FileOption(k, "a file")
		}
	}
	mc, err := msdsn.Parse(dsn)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "invalid SQL Server connection string (%s)", dsnForms)
	}
	for k := range mc.Parameters {
		if slices.Contains(fileKeys, k) {
			return nil, dialects.FileOption(k, "a file")
		}
	}
	for _, p := range mc.Protocols {
		if p != "tcp" && p != "admin" {
			return nil, dialects.FileOption("protocol", "a local connection ("+p+")")
		}
	}
	hosts := []string{mc.Host}
	if p := mc.FailOverPartner; p != "" {
		if h, _, ok := strings.Cut(p, `\`); ok {
			p = h
		}
		hosts = append(hosts, dialects.SplitHost(strings.TrimSpace(p)))
	}
	return hosts, nil
}

// rawKeys lists every piece of dsn that could be a key: the text before
// '=' in each piece between ';', '&' and '?', lower-cased and trimmed,
// also percent-decoded.
func rawKeys(dsn string) []string {
	dsn = strings.TrimPrefix(dsn, "odbc:")
	var keys []string
	for piece := range strings.FieldsFuncSeq(dsn, func(r rune) bool { return r == ';' || r == '&' || r == '?' }) {
		k, _, ok := strings.Cut(piece, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		keys = append(keys, k)
		if dec, err := url.QueryUnescape(k); err == nil && dec != k {
			keys = append(keys, strings.ToLower(strings.TrimSpace(dec)))
		}
	}
	return keys
}

// dsnForms names the connection strings this type takes, for the message
// of one it cannot read.
const dsnForms = "expected sqlserver://user:pass@host:1433?database=db or server=host;user id=user;password=pass;database=db"
