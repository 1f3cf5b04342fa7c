package mcp

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/observe"
	"github.com/littlebitlabs/minimal/wire"
)

// Handler is the HTTP face: POST Path on the MCP listener. Before any
// JSON-RPC is read it applies, in order: DNS-rebinding protection, the
// method, the credential layer, the body limits (size, and time:
// observe.BodyDeadline; a refusal before the body is read closes the
// connection without reading it) and the handshake-era version header;
// then mcp-go serves the JSON-RPC request.
func (s *Server) Handler() http.Handler {
	return s.httpFace(Path, false, func(r *http.Request) (*caller, error) {
		p, err := s.credential(r)
		if err != nil {
			return nil, err
		}
		transport, err := transportSession(r.Header, p)
		if err != nil {
			return nil, err
		}
		c := &caller{p: p, session: r.Header.Get(SessionHeader), transport: transport}
		if v, ok := r.Header[ParamSessionHeader]; ok && len(v) > 0 {
			c.param, _ = mcpgo.DecodeHeaderValue(v[0])
			c.paramSet = true
		}
		return c, nil
	})
}

// httpFace serves the tools of a transport (stdio: the set of an implicit
// session) on POST path, admitting each request with who: the caller, or
// the error the request is refused with.
func (s *Server) httpFace(path string, stdio bool, who func(*http.Request) (*caller, error)) http.Handler {
	srv, rd := s.build(stdio)
	rpc := mcpserver.NewStreamableHTTPServer(srv,
		mcpserver.WithStateLess(true),
		mcpserver.WithStreamableHTTPProtocolVersions(SupportedVersions...),
		mcpserver.WithStreamableHTTPLogger(s.log),
	)
	mux := http.NewServeMux()
	mux.Handle(path, s.front(rpc, rd, who))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeHTTPError(w, http.StatusNotFound, "NOT_FOUND", "no route for "+r.URL.Path+": the MCP endpoint is POST "+path)
	})
	return observe.BodyDeadline(s.cfg.BodyTimeout)(mux)
}

func (s *Server) front(next http.Handler, rd *roads, who func(*http.Request) (*caller, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := rebinding(r); msg != "" {
			s.log.WarnContext(r.Context(), "mcp request refused: DNS rebinding protection", "host", r.Host, "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr)
			writeHTTPError(w, http.StatusForbidden, "FORBIDDEN", msg)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeHTTPError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", r.Method+" is not served: send JSON-RPC requests with POST")
			return
		}
		c, err := who(r)
		if err != nil {
			s.refuseHTTP(w, r, err)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			var te *observe.BodyTimeoutError
			switch {
			case errors.As(err, &mbe):
				err = fault.New(fault.TooLarge, "request body is over the limit of %d bytes", s.cfg.MaxBodyBytes)
			case errors.As(err, &te):
				err = fault.Wrap(fault.RequestTimeout, err, "request body not received within %s: the body timeout of this server", te.Timeout)
			default:
				err = fault.Wrap(fault.Invalid, err, "could not read the request body")
			}
			s.refuseHTTP(w, r, err)
			return
		}
		if unsupportedHandshakeVersion(w, r.Header, body) {
			return
		}
		c.version = cmp.Or(r.Header.Get(mcpgo.HeaderProtocolVersion), mcpgo.ProtocolVersion20250326)
		ctx := withCaller(r.Context(), c)
		if s.direct(w, r, ctx, body, rd) {
			return
		}
		c.codes = &rpcCodes{}
		s.serveRPC(w, r.WithContext(ctx), body, next, c)
	})
}

// credential reads and admits the token of a request.
func (s *Server) credential(r *http.Request) (*auth.Principal, error) {
	raw, err := auth.FromRequest(r)
	if err != nil {
		return nil, err
	}
	return s.admit(r.Context(), raw)
}

// refuseHTTP answers an error of the credential layer or the body limits
// with the status and headers of its kind from wire's one table, as REST
// answers it.
func (s *Server) refuseHTTP(w http.ResponseWriter, r *http.Request, err error) {
	if fault.As(err).Kind == fault.Internal {
		s.log.ErrorContext(r.Context(), "mcp credential layer failed", "err", err, "remote", r.RemoteAddr)
	}
	wire.WriteError(w, err, "")
}

// writeHTTPError answers with the gateway's error envelope, as REST does.
func writeHTTPError(w http.ResponseWriter, status int, code, msg string) {
	wire.WriteEnvelope(w, status, code, msg, "")
}

// rebinding protects a server bound to a loopback address from DNS
// rebinding: a web page whose name resolves to 127.0.0.1 must not reach it
// through a browser. On a loopback connection the Host header must name a
// loopback host, and an Origin header, when sent, too. It returns why a
// request is refused, or "".
func rebinding(r *http.Request) string {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !loopback(local.String()) {
		return ""
	}
	if !loopback(r.Host) {
		return "Host " + quoteHeader(r.Host) + " is not a loopback name: this server listens on a loopback address and refuses requests addressed to other names (DNS rebinding protection)"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || !loopback(u.Host) {
			return "Origin " + quoteHeader(o) + " is not a loopback origin: this server listens on a loopback address and refuses requests from other origins (DNS rebinding protection)"
		}
	}
	return ""
}

// loopback reports whether a host or host:port names the loopback
// interface: localhost (and its subdomains), 127.0.0.0/8 or ::1.
func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func quoteHeader(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// unsupportedHandshakeVersion answers 400 with JSON-RPC error -32022 (data:
// supported and requested) when a request of the handshake era names, in
// MCP-Protocol-Version, a version this server does not serve, and reports
// whether it did. Requests of the stateless era (2026-07-28 and later, in
// the header or in _meta) are checked by mcp-go, which answers the same
// error, after the header and _meta agree.
func unsupportedHandshakeVersion(w http.ResponseWriter, h http.Header, body []byte) bool {
	v := h.Get(mcpgo.HeaderProtocolVersion)
	if v == "" || mcpgo.IsModernProtocol(v) || slices.Contains(SupportedVersions, v) {
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	var metaVersion string
	_ = json.Unmarshal(msg.Params.Meta[mcpgo.MetaKeyProtocolVersion], &metaVersion)
	if mcpgo.IsModernProtocol(metaVersion) {
		return false // a header mismatch: mcp-go answers -32020
	}
	resp := mcpgo.UnsupportedProtocolVersionError{Version: v, Supported: SupportedVersions}.JSONRPCError()
	var id any
	_ = json.Unmarshal(msg.ID, &id)
	resp.ID = mcpgo.NewRequestId(id)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(resp)
	return true
}
