package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
)

// Sessions an HTTP client can carry. A client sets its headers once per
// connection, so besides X-Session-Id the AI session travels two more ways:
//
//   - Handshake era (2025-03-26 … 2025-11-25): initialize issues an
//     Mcp-Session-Id (a transport session), which the client echoes on
//     every later request. start_ai_session on it binds the AI session to
//     it (the store records the binding, so every replica sees it), and a
//     later call that names no session uses the newest AI session bound to
//     it. A transport session id is bound to the identity that initialized
//     it: presented with another identity's token it is refused (404, as
//     the protocol answers an unknown session).
//   - Every era: each tool that needs a session takes an optional
//     session_id argument, declared with x-mcp-header so that a 2026-07-28
//     client mirrors it into Mcp-Param-Session-Id; the header, when sent,
//     must equal the argument.
//
// The AI session itself decides the rest as before: its owner, expiry and
// journal. A transport session id adds no right: it only names an AI
// session of its own identity, which Begin checks like any other.

// ParamSessionHeader carries the session_id argument of a 2026-07-28
// tools/call (the x-mcp-header annotation "Session-Id").
const ParamSessionHeader = mcpgo.HeaderParamPrefix + paramSessionAnnotation

const paramSessionAnnotation = "Session-Id"

// pSession is the optional session_id argument of the tools that need a
// session, on the HTTP face.
var pSession = param{name: "session_id", kind: kString, header: paramSessionAnnotation,
	desc: "session_id of start_ai_session, unless X-Session-Id or your MCP session carries it."}

// Transport session ids are "<nonce>.<mark>": 16 random bytes and a digest
// binding them to the project and identity that initialized them, both in
// hex. The mark needs no secret: it stops no one from minting an id for
// their own identity, which grants nothing, and a mark of another identity
// does not match the token it is presented with.
const (
	nonceBytes = 16
	markBytes  = 12
)

func transportMark(p *auth.Principal, nonce string) string {
	sum := sha256.Sum256([]byte("minimal mcp transport session\x00" + p.ProjectID + "\x00" + p.IdentityID + "\x00" + nonce))
	return hex.EncodeToString(sum[:markBytes])
}

// newTransportID mints a transport session id for p.
func newTransportID(p *auth.Principal) string {
	var b [nonceBytes]byte
	_, _ = rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	return nonce + "." + transportMark(p, nonce)
}

// transportOf reports whether id is a transport session id minted for p.
// A client sends its id on every request, so the ids found to be minted
// are kept with the project and identity they were minted for (the mark
// of an id never changes; one kept for another identity is checked
// again).
func transportOf(id string, p *auth.Principal) bool {
	marked.RLock()
	o, hit := marked.m[id]
	marked.RUnlock()
	if hit && o.project == p.ProjectID && o.identity == p.IdentityID {
		return true
	}
	nonce, mark, ok := strings.Cut(id, ".")
	if !ok || len(nonce) != 2*nonceBytes || len(mark) != 2*markBytes ||
		subtle.ConstantTimeCompare([]byte(mark), []byte(transportMark(p, nonce))) != 1 {
		return false
	}
	marked.Lock()
	if len(marked.m) >= markedSize {
		clear(marked.m)
	}
	marked.m[id] = markOwner{p.ProjectID, p.IdentityID}
	marked.Unlock()
	return true
}

// markOwner is whom a transport session id was minted for.
type markOwner struct{ project, identity string }

// marked are transport session ids checked to be minted for their owner.
var marked = struct {
	sync.RWMutex
	m map[string]markOwner
}{m: map[string]markOwner{}}

// markedSize bounds marked: when full it starts again empty.
const markedSize = 4096

// transportSession reads the Mcp-Session-Id of a handshake-era request of
// p: "" when none is sent or the request is of the stateless era (which
// ignores it), an error when it was not minted for p.
func transportSession(h http.Header, p *auth.Principal) (string, error) {
	id := h.Get(mcpgo.HeaderSessionID)
	if id == "" || mcpgo.IsModernProtocol(h.Get(mcpgo.HeaderProtocolVersion)) {
		return "", nil
	}
	if !transportOf(id, p) {
		return "", fault.New(fault.NotFound, "MCP session %s not found for this identity: send initialize to start one", quoteHeader(id))
	}
	return id, nil
}

// handshakeInitialize reports whether msg, an initialize request, is of
// the handshake era, so that it gets a transport session id. (mcp-go runs
// stateless here: the binding lives in the store, not in its memory.)
func handshakeInitialize(h http.Header, msg map[string]json.RawMessage) bool {
	if mcpgo.IsModernProtocol(h.Get(mcpgo.HeaderProtocolVersion)) {
		return false
	}
	var params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(msg["params"], &params)
	var v string
	_ = json.Unmarshal(params.Meta[mcpgo.MetaKeyProtocolVersion], &v)
	return !mcpgo.IsModernProtocol(v)
}

// sessionOf returns the id of the AI session a call runs in: the
// session_id argument (when the tool takes one, takesArg), else X-Session-Id (or the implicit session of a
// single-user process), else the newest AI session bound to the transport
// session, else "" (Begin refuses it). The argument must agree with
// Mcp-Param-Session-Id and X-Session-Id when those are sent.
func (s *Server) sessionOf(ctx context.Context, p *auth.Principal, takesArg bool, raw []byte) (string, error) {
	c := callerFrom(ctx)
	arg := ""
	if takesArg {
		var err error
		if arg, err = sessionArgument(raw); err != nil {
			return "", err
		}
		if c.paramSet && c.param != arg {
			return "", invalid("argument %q and the %s header differ: send the same session id in both, or only the argument", pSession.name, ParamSessionHeader)
		}
	}
	switch {
	case arg != "" && c.session != "" && arg != c.session:
		return "", invalid("argument %q names another session than the %s header: send one of them", pSession.name, SessionHeader)
	case arg != "":
		return arg, nil
	case c.session != "":
		return c.session, nil
	case c.transport != "":
		return s.sess.Bound(ctx, owner(p), c.transport)
	}
	return "", nil
}

// sessionArgument reads the session_id argument from a call's arguments
// without decoding the rest: "" when absent or null, fault.Invalid when it
// is not a string.
func sessionArgument(raw []byte) (string, error) {
	if !bytes.Contains(raw, []byte(`"session_id"`)) {
		return "", nil
	}
	var a struct {
		SessionID json.RawMessage `json:"session_id"`
	}
	if json.Unmarshal(raw, &a) != nil || len(a.SessionID) == 0 || string(a.SessionID) == "null" {
		return "", nil // decodeArgs names what is wrong
	}
	var id string
	if json.Unmarshal(a.SessionID, &id) != nil {
		return "", invalid("argument %q must be a string", pSession.name)
	}
	return id, nil
}
