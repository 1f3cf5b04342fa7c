package observe

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// EnvProfileAddr names the environment variable that turns on the
// profiling listener (ServeProfiles): an address such as 127.0.0.1:6060.
// Unset, there is none.
const EnvProfileAddr = "MINIMAL_PPROF_ADDR"

// ServeProfiles serves Go's runtime profiles (net/http/pprof, under
// /debug/pprof/) on the address in MINIMAL_PPROF_ADDR, on a listener of
// its own that carries nothing else, and returns its address; it returns
// "" and does nothing when the variable is unset or the address cannot be
// listened on (which it logs). Profiles need no token, so the address must
// be a loopback one (127.0.0.1, ::1, localhost): any other is refused, as
// is the command line's page (/debug/pprof/cmdline), which would show the
// flags the gateway was started with, DSNs among them.
func ServeProfiles(log *slog.Logger) string {
	addr := os.Getenv(EnvProfileAddr)
	if addr == "" {
		return ""
	}
	if !loopback(addr) {
		if log != nil {
			log.Warn("profiling listener not started: its address must be a loopback one", "env", EnvProfileAddr, "addr", addr)
		}
		return ""
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if log != nil {
			log.Warn("profiling listener not started", "env", EnvProfileAddr, "err", err)
		}
		return ""
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", http.NotFound)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	if log != nil {
		log.Info("serving profiles", "addr", ln.Addr().String(), "path", "/debug/pprof/")
	}
	return ln.Addr().String()
}

// loopback reports whether addr (host:port) names a loopback host.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
