package mcp

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The JSON-RPC rules of the endpoint that mcp-go does not apply, checked
// before it serves a request (the direct road declines every request they
// concern, so they cost it nothing):
//
//   - a Content-Type other than application/json is 415;
//   - a batch (a JSON array) is served under 2025-03-26, the one version
//     that has them (no MCP-Protocol-Version header, or that one); any
//     later version answers -32600;
//   - a method that is not a string is -32600;
//   - "id": null is -32600 (a notification has no id at all), not a
//     notification;
//   - a numeric id is echoed exactly as sent, also past 2^53 (mcp-go reads
//     ids as float64).

// batchVersion is the one protocol version with JSON-RPC batches.
const batchVersion = mcpgo.ProtocolVersion20250326

// serveRPC serves body, which the direct road declined, through next
// (mcp-go) under the rules above.
func (s *Server) serveRPC(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler, c *caller) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeHTTPError(w, http.StatusUnsupportedMediaType, "UNSUPPORTED",
			"Content-Type "+quoteHeader(r.Header.Get("Content-Type"))+" is not served: send JSON-RPC as application/json")
		return
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if v := r.Header.Get(mcpgo.HeaderProtocolVersion); v != "" && v != batchVersion {
			writeRPCError(w, nil, mcpgo.INVALID_REQUEST, "JSON-RPC batches are not served in protocol version "+v+": send one request per POST (only "+batchVersion+" has batches)")
			return
		}
		s.serveBatch(w, r, t, next, c)
		return
	}
	s.serveOne(w, r, body, next, c)
}

// serveOne serves one JSON-RPC message.
func (s *Server) serveOne(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler, c *caller) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		pass(w, r, body, next) // mcp-go answers -32700
		return
	}
	id, hasID := msg["id"]
	method, hasMethod := msg["method"]
	var name string
	switch {
	case hasMethod && json.Unmarshal(method, &name) != nil:
		writeRPCError(w, echoID(id), mcpgo.INVALID_REQUEST, "method must be a string")
		return
	case hasMethod && hasID && string(bytes.TrimSpace(id)) == "null":
		writeRPCError(w, nil, mcpgo.INVALID_REQUEST, "id must be a string or an integer: null is no request id (a notification has no id member)")
		return
	}
	if p := cmp.Or(c.p, c.local); hasMethod && name == string(mcpgo.MethodInitialize) && p != nil && handshakeInitialize(r.Header, msg) {
		w.Header().Set(mcpgo.HeaderSessionID, newTransportID(p))
	}
	if hasID && inexactID(id) {
		passExactID(w, r, msg, id, next, c.codes)
		return
	}
	passFinished(w, r, body, next, c.codes)
}

// passFinished hands body to next and writes its answer finished
// (finish.go: isError on tool results, the codes in rc).
func passFinished(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler, rc *rpcCodes) {
	rec := newRecorder()
	pass(rec, r, body, next)
	rec.writeTo(w, finishBody(rec.body.Bytes(), rec.header.Get("Content-Type"), rc))
}

// pass hands body to next.
func pass(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	next.ServeHTTP(w, r)
}

// echoID is the id an error answer carries: the request's when it is a
// string or a number, else null.
func echoID(id json.RawMessage) json.RawMessage {
	id = bytes.TrimSpace(id)
	if len(id) > 0 && (id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9')) {
		return id
	}
	return nil
}

// inexactID reports whether id is a number that mcp-go would not echo as
// sent: anything but a canonical integer literal within ±2^53.
func inexactID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 || (id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		return false
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err != nil || n > 1<<53 || n < -(1<<53) || strconv.FormatInt(n, 10) != string(id)
}

// passExactID serves a message whose numeric id mcp-go would round: it
// goes to next under a placeholder string id, which the answer gets back
// as the id's exact text.
func passExactID(w http.ResponseWriter, r *http.Request, msg map[string]json.RawMessage, id json.RawMessage, next http.Handler, rc *rpcCodes) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	placeholder := []byte(`"minimal-id-` + hex.EncodeToString(b[:]) + `"`)
	msg["id"] = placeholder
	body, err := json.Marshal(msg)
	if err != nil {
		pass(w, r, nil, next)
		return
	}
	rec := newRecorder()
	pass(rec, r, body, next)
	out := finishBody(rec.body.Bytes(), rec.header.Get("Content-Type"), rc)
	rec.writeTo(w, bytes.Replace(out, placeholder, bytes.TrimSpace(id), 1))
}

// serveBatch serves a batch of 2025-03-26: each member as a message of its
// own, the answers (of the members that are requests) in one array.
func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler, c *caller) {
	var members []json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		writeRPCError(w, nil, mcpgo.PARSE_ERROR, "request body is not valid json")
		return
	}
	if len(members) == 0 {
		writeRPCError(w, nil, mcpgo.INVALID_REQUEST, "empty batch")
		return
	}
	var answers [][]byte
	for _, m := range members {
		if t := bytes.TrimSpace(m); len(t) == 0 || t[0] != '{' {
			answers = append(answers, rpcError(nil, mcpgo.INVALID_REQUEST, "a batch member must be a JSON-RPC object"))
			continue
		}
		rec := newRecorder()
		s.serveOne(rec, r.Clone(r.Context()), m, next, c)
		if a := bytes.TrimSpace(rec.body.Bytes()); len(a) > 0 && rec.status != http.StatusAccepted {
			answers = append(answers, a)
		}
	}
	if len(answers) == 0 {
		w.WriteHeader(http.StatusAccepted) // notifications only
		return
	}
	out := append(append([]byte{'['}, bytes.Join(answers, []byte{','})...), ']', '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// rpcError is a JSON-RPC error response with id (null when nil).
func rpcError(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: mcpgo.JSONRPC_VERSION, ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return b
}

// writeRPCError answers a JSON-RPC error with HTTP 400.
func writeRPCError(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	b := append(rpcError(id, code, msg), '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
}

// recorder keeps an answer of next, to be rewritten or gathered.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, status: http.StatusOK} }

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(status int)      { r.status = status }

// writeTo answers w with the recorded status and header, and body.
func (r *recorder) writeTo(w http.ResponseWriter, body []byte) {
	r.copyHeader(w)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(r.status)
	_, _ = w.Write(body)
}

// copyHeader copies the recorded header to w, but Content-Length.
func (r *recorder) copyHeader(w http.ResponseWriter) {
	for k, v := range r.header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
}
