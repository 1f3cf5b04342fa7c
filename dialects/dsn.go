package dialects

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
)

// Trust says who hands the gateway a connection string, and so what the
// string may make the gateway do.
type Trust struct {
	// Operator is set for the operator's registrations: `minimal db add`
	// and `db test`, and the admin API called with the server key. The
	// operator may name files of the gateway's host (client certificates
	// and keys, CA files, password and service files, Unix sockets) and
	// any host.
	Operator bool
	// Hosts, when not nil, lists the hosts and networks a registration
	// that is not the operator's may connect to.
	Hosts *HostList
}

// DSNChecker reads a connection string of one database type as the
// type's driver will, without opening a file or a connection. It refuses,
// as a *fault.Error of kind Invalid naming the option (see FileOption),
// any option that makes the driver read or write a file of the gateway's
// host, run a program or reach a local socket; otherwise it returns the
// hosts (names or IP literals, without port) the driver will dial.
type DSNChecker func(dsn string) (hosts []string, err error)

var checkers = map[string]DSNChecker{}

// RegisterDSNChecker sets the checker of a database type, next to its
// Factory. It panics on a nil checker or a duplicate, like Register.
func RegisterDSNChecker(typ string, c DSNChecker) {
	mu.Lock()
	defer mu.Unlock()
	if c == nil {
		panic("dialects: RegisterDSNChecker checker is nil for " + typ)
	}
	if _, dup := checkers[typ]; dup {
		panic("dialects: RegisterDSNChecker called twice for " + typ)
	}
	checkers[typ] = c
}

// CheckDSN decides whether a connection string of type typ may be
// registered by trust, before any connection. The operator may register
// anything. Anyone else may register only a type that has a DSNChecker,
// only a string its checker can read (else fault.Invalid) and accepts
// (else fault.Invalid with CodeOptionRefused, naming the option), and,
// when trust.Hosts is set, only hosts it allows (else fault.Forbidden
// naming the host).
func CheckDSN(typ, dsn string, trust Trust) error {
	if trust.Operator {
		return nil
	}
	mu.RLock()
	c, ok := checkers[typ]
	mu.RUnlock()
	if !ok {
		return fault.New(fault.Forbidden, "only the operator (the server key, or `minimal db add`) may register a %q database", typ)
	}
	hosts, err := c(dsn)
	if err != nil {
		return err
	}
	if trust.Hosts == nil {
		return nil
	}
	for _, h := range hosts {
		if !trust.Hosts.Allows(h) {
			return fault.New(fault.Forbidden, "database host %q is not among the hosts this gateway lets org admins register (--db-allow); ask the operator", h)
		}
	}
	return nil
}

// CodeOptionRefused is the error code of a connection string refused by
// a DSNChecker for an option it holds (see FileOption); a string the
// driver cannot read at all is plain fault.Invalid.
const CodeOptionRefused = "DSN_OPTION_REFUSED"

// FileOption is the refusal of a connection string option that names
// something on the gateway's own host: a file, a program, a local socket.
// Its kind is Invalid, its code CodeOptionRefused.
func FileOption(option, what string) error {
	return &fault.Error{Kind: fault.Invalid, Code: CodeOptionRefused,
		Message: fmt.Sprintf("connection string option %q is refused: it names %s on the gateway's host; only the operator (the server key, or `minimal db add`) may use it", option, what)}
}

// HostList is the set of database hosts an org admin may register: IP
// networks, and host names compared exactly (a name starting with "."
// matches every name under it). A name in a connection string is not
// resolved to check it against the networks: the driver resolves it
// again when it dials, and the answer may have changed by then; so a host
// name is allowed only when listed by name.
type HostList struct {
	nets  []netip.Prefix
	names []string // lower case, no trailing dot
}

// ParseHostList reads a comma-separated list of CIDR networks, IP
// addresses and host names, e.g. "10.0.0.0/8,db.internal,.corp.example,
// 127.0.0.1". An empty list is nil: no limit.
func ParseHostList(s string) (*HostList, error) {
	var l HostList
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case strings.Contains(item, "/"):
			p, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fault.Wrap(fault.Invalid, err, "database host list: %q is not a CIDR network", item)
			}
			l.nets = append(l.nets, p.Masked())
		default:
			if a, err := netip.ParseAddr(strings.Trim(item, "[]")); err == nil {
				a = a.Unmap()
				l.nets = append(l.nets, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			name := canonicalHost(item)
			if name == "" || name == "." || strings.ContainsAny(name, " :@") {
				return nil, fault.New(fault.Invalid, "database host list: %q is neither a network, an address nor a host name", item)
			}
			l.names = append(l.names, name)
		}
	}
	if len(l.nets) == 0 && len(l.names) == 0 {
		return nil, nil
	}
	return &l, nil
}

// Allows reports whether host, an IP literal or a name as a connection
// string gives it, is in the list. A nil list allows every host.
func (l *HostList) Allows(host string) bool {
	if l == nil {
		return true
	}
	h := strings.Trim(host, "[]")
	if i := strings.IndexByte(h, '%'); i >= 0 { // an IPv6 zone
		h = h[:i]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.Unmap()
		for _, p := range l.nets {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	name := canonicalHost(h)
	for _, n := range l.names {
		if name == n || strings.HasPrefix(n, ".") && strings.HasSuffix(name, n) {
			return true
		}
	}
	return false
}

// String lists the entries, for logs.
func (l *HostList) String() string {
	if l == nil {
		return ""
	}
	out := make([]string, 0, len(l.nets)+len(l.names))
	for _, p := range l.nets {
		out = append(out, p.String())
	}
	return strings.Join(append(out, l.names...), ",")
}

func canonicalHost(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}

// SplitHost returns the host of a "host:port" address, or the address
// itself when it has no port.
func SplitHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return strings.Trim(addr, "[]")
}
