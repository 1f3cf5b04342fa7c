package main

import (
	"flag"
	"os"

	"github.com/littlebitlabs/minimal/dialects"
)

// envDBAllow is the environment default of --db-allow.
const envDBAllow = "MINIMAL_DB_ALLOW"

// dbAllowFlag defines --db-allow: the database hosts and networks org
// admins may register through the admin API (see dialects.HostList). The
// returned function reads it after fs.Parse; nil means no limit.
func dbAllowFlag(fs *flag.FlagSet) func() (*dialects.HostList, error) {
	v := fs.String("db-allow", os.Getenv(envDBAllow), "comma-separated CIDR networks, addresses and host names (\".example.com\": every name under it) that org admins may register databases on; host names are matched by name, not resolved; the operator is not limited; empty: any host (env "+envDBAllow+")")
	return func() (*dialects.HostList, error) {
		l, err := dialects.ParseHostList(*v)
		if err != nil {
			return nil, usagef("serve: --db-allow: %v", err)
		}
		return l, nil
	}
}
