package observe

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// EnvProfileAddr names the environment variable that turns on the
// profiling listener (ServeProfiles): an address such as 127.0.0.1:6060.
// Unset, there is none.
const EnvProfileAddr = "MINIMAL_PPROF_ADDR"

// ServeProfiles serves Go's runtime profiles (net/http/pprof, under
// /debug/pprof/) on the address in MINIMAL_PPROF_ADDR, on a listener of
// its own that carries nothing else, and returns its address; it returns
// "" and does nothing when the variable is unset or the address cannot be
// listened on (which it logs). It is for performance work: bind it to a
// loopback address, since profiles need no token.
func ServeProfiles(log *slog.Logger) string {
	addr := os.Getenv(EnvProfileAddr)
	if addr == "" {
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
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() { _ = http.Serve(ln, mux) }()
	if log != nil {
		log.Info("serving profiles", "addr", ln.Addr().String(), "path", "/debug/pprof/")
	}
	return ln.Addr().String()
}
