package dialects

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// ProbeTimeout bounds a whole connection test: open, ping, introspect.
const ProbeTimeout = 15 * time.Second

// Unreachable is what a connection test tells a caller that is not the
// operator about any failure to reach the database (see Probe).
const Unreachable = "could not connect to the database (check the host, the port, the credentials and that the database is up)"

// Probe is the connection test run before a database is registered (by
// `minimal db add`, `minimal db test` and the admin API): it opens a Source
// of type typ, pings it and introspects cfg.Schema, then closes it. An
// unregistered type is fault.Invalid. A failure keeps the Kind of the
// driver's fault and says which step failed; its message never contains
// the DSN or a password found in it, even when a dialect's message would
// (the cause, kept for logs, is the dialect's own error).
//
// For a caller that is not the operator, every failure to reach the
// database (opening the pool, connecting, logging in) has one message and
// the kind Unavailable, whatever went wrong: a closed port, a port where
// something else answers and a server that refuses the login look the
// same, so the test cannot be used to scan the gateway's network. The
// cause stays in the error, for the log.
func Probe(ctx context.Context, typ string, cfg Config, trust Trust) error {
	_, err := ProbeTables(ctx, typ, cfg, trust)
	return err
}

// NoTablesWarning is what `minimal db add`, `db test` and the admin API
// say of a schema in which the connection test found no table: the
// schema's name may be wrong, or the login may not see its tables.
const NoTablesWarning = "the schema holds no table or view the gateway can see: check the schema's name and that the login may read its tables"

// ProbeTables is Probe answering how many tables and views it found.
func ProbeTables(ctx context.Context, typ string, cfg Config, trust Trust) (int, error) {
	if !slices.Contains(Types(), typ) {
		return 0, fault.New(fault.Invalid, "unknown database type %q (this gateway serves %s)", typ, strings.Join(Types(), ", "))
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	fail := func(step string, err error) error {
		fe := fault.As(err)
		if !trust.Operator && step != "list tables" && !(step == "open" && fe.Kind == fault.Invalid) {
			return fault.Wrap(fault.Unavailable, err, "connection test of %s/%s failed: %s", typ, cfg.Schema, Unreachable)
		}
		kind := fe.Kind
		if ctx.Err() != nil {
			kind = fault.Timeout
		}
		return fault.Wrap(kind, err, "connection test of %s/%s failed to %s: %s",
			typ, cfg.Schema, step, Redact(fe.Message, cfg.DSN))
	}
	src, err := Open(ctx, typ, cfg)
	if err != nil {
		return 0, fail("open", err)
	}
	defer src.Close()
	if err := src.Ping(ctx); err != nil {
		return 0, fail("connect", err)
	}
	ts, err := src.Tables(ctx)
	if err != nil {
		return 0, fail("list tables", err)
	}
	return len(ts), nil
}

// minSecretLen is the shortest password Redact replaces inside text: a
// shorter one would garble ordinary words, and is no secret anyway.
const minSecretLen = 4

// Redact returns msg with the DSN, and any password it can find in the DSN
// (URL user info, `password=`/`pwd=` settings, MySQL's user:pass@), replaced
// by "***". It is a second line of defence: dialect messages are meant to
// be caller-safe already.
func Redact(msg, dsn string) string {
	dsn = strings.TrimSpace(dsn)
	if dsn != "" {
		msg = strings.ReplaceAll(msg, dsn, "***")
	}
	for _, pw := range passwords(dsn) {
		if len(pw) < minSecretLen {
			continue
		}
		msg = strings.ReplaceAll(msg, pw, "***")
		if esc := url.QueryEscape(pw); esc != pw {
			msg = strings.ReplaceAll(msg, esc, "***")
		}
	}
	return msg
}

// passwords finds what looks like a password in the common DSN forms.
func passwords(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
	}
	// key=value settings: libpq (space-separated), SQL Server and ODBC
	// (semicolon-separated), URL query parameters (&-separated).
	for field := range strings.FieldsFuncSeq(dsn, func(r rune) bool { return r == ' ' || r == ';' || r == '&' || r == '?' }) {
		k, v, ok := strings.Cut(field, "=")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "password", "pwd", "pass":
			v = strings.Trim(strings.TrimSpace(v), `'"{}`)
			out = append(out, v)
			if dec, err := url.QueryUnescape(v); err == nil {
				out = append(out, dec)
			}
		}
	}
	// MySQL: user:pass@tcp(host)/db, with no scheme.
	if !strings.Contains(dsn, "://") {
		if at := strings.LastIndex(dsn, "@"); at > 0 {
			if _, pw, ok := strings.Cut(dsn[:at], ":"); ok {
				out = append(out, pw)
			}
		}
	}
	return out
}
