package ch

import (
	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

func init() { dialects.RegisterDSNChecker("ch", CheckDSN) }

// CheckDSN is the DSNChecker of ClickHouse connection strings, read by
// the driver's own parser. clickhouse-go's DSN has no option naming a
// file (TLS is secure=true with the system's roots, or skip_verify), so
// nothing is refused but what Open refuses; the hosts are every address
// the driver may dial (the URL's host list, hosts and alt_hosts).
func CheckDSN(dsn string) ([]string, error) {
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "invalid ClickHouse connection string (%s)", dsnForms)
	}
	hosts := make([]string, 0, len(opts.Addr))
	for _, a := range opts.Addr {
		hosts = append(hosts, dialects.SplitHost(a))
	}
	return hosts, nil
}

// dsnForms names the connection strings this type takes, for the message
// of one it cannot read.
const dsnForms = "expected clickhouse://user:pass@host:9000/db?dial_timeout=5s"
