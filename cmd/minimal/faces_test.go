package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/store"
)

// faceAnswer is the HTTP answer of one face to one request.
type faceAnswer struct {
	status     int
	code       string // the error envelope's code, "" on success
	retryAfter string
	body       string
}

func (a faceAnswer) String() string {
	return fmt.Sprintf("%d %s Retry-After=%q %s", a.status, a.code, a.retryAfter, strings.TrimSpace(a.body))
}

func askFace(t *testing.T, req *http.Request) faceAnswer {
	t.Helper()
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(b, &env)
	return faceAnswer{status: resp.StatusCode, code: env.Error.Code, retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
}

// TestFacesAnswerControlPlaneOutageAlike runs a replica whose PostgreSQL
// control plane sits behind a proxy and cuts the proxy: the credential
// check of both faces — REST and the MCP listener — then fails on the
// store, and both must answer it alike, from wire's one table: 503
// UNAVAILABLE with Retry-After. Once the control plane is back, both serve
// again.
// controlPlaneReplica starts a replica whose PostgreSQL control plane sits
// behind a proxy, and returns the proxy, the replica and a request of each
// face (REST: a read; MCP: tools/list in 2026-07-28), each served before
// anything is done to the proxy.
func controlPlaneReplica(t *testing.T) (*dialecttest.Proxy, *replica, map[string]func() *http.Request) {
	t.Helper()
	dsn := freshControlPlane(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Fatalf("the control-plane DSN names no TCP address for a proxy: %v", err)
	}
	px := dialecttest.StartProxy(t, u.Host)
	u.Host = px.Addr()
	key := make([]byte, store.MasterKeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	env := []string{store.EnvControlDSN + "=" + u.String(), store.EnvMasterKey + "=" + base64.StdEncoding.EncodeToString(key)}
	dir := t.TempDir()
	r := launchReplica(t, "A", dir, env)
	r.waitReady(t)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	agent := readToken(t, filepath.Join(dir, "agent.token"))

	restReq := func() *http.Request {
		req, _ := http.NewRequest("GET", r.rest("/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=10&pg=0"), nil)
		req.Header.Set("LB-Access-Token", admin)
		return req
	}
	mcpReq := func() *http.Request {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest("POST", "http://"+r.mcpAddr+"/minimal/mcp/rpc/v1", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("LB-Access-Token", agent)
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		return req
	}
	faces := map[string]func() *http.Request{"REST": restReq, "MCP": mcpReq}
	for name, req := range faces {
		if a := askFace(t, req()); a.status != 200 {
			t.Fatalf("%s before the outage: %v", name, a)
		}
	}

	return px, r, faces
}

func TestFacesAnswerControlPlaneOutageAlike(t *testing.T) {
	px, r, faces := controlPlaneReplica(t)
	px.Cut()
	for name, req := range faces {
		// Past the verified-token cache (one second) the credential
		// check asks the store again.
		var a faceAnswer
		within(t, 5*time.Second, name+" answers the control-plane outage", func() (bool, string) {
			a = askFace(t, req())
			return a.status != 200, a.String()
		})
		if a.status != 503 || a.code != "UNAVAILABLE" || a.retryAfter == "" {
			t.Errorf("%s with the control plane cut: %v, want 503 UNAVAILABLE with Retry-After", name, a)
		}
		t.Logf("%s: %v", name, a)
	}

	px.Restore()
	for name, req := range faces {
		within(t, 10*time.Second, name+" serves again", func() (bool, string) {
			a := askFace(t, req())
			return a.status == 200, a.String()
		})
	}
	r.stop(t)
}

// TestFacesAnswerFrozenControlPlane freezes the control plane's proxy: the
// connections stay open and nothing answers. The credential check of both
// faces gives up after auth.StoreTimeout and answers 503 with Retry-After
// instead of holding the request; once thawed, both serve again.
func TestFacesAnswerFrozenControlPlane(t *testing.T) {
	px, r, faces := controlPlaneReplica(t)
	time.Sleep(1100 * time.Millisecond) // past the verified-token cache
	px.Freeze()
	for name, req := range faces {
		start := time.Now()
		a := askFace(t, req())
		took := time.Since(start)
		if a.status != 503 || a.code != "UNAVAILABLE" || a.retryAfter == "" {
			t.Errorf("%s with the control plane frozen: %v, want 503 UNAVAILABLE with Retry-After", name, a)
		}
		if took > auth.StoreTimeout+3*time.Second {
			t.Errorf("%s answered after %s, auth.StoreTimeout is %s", name, took, auth.StoreTimeout)
		}
		t.Logf("%s: %v in %s", name, a, took)
	}
	px.Thaw()
	for name, req := range faces {
		within(t, 15*time.Second, name+" serves again", func() (bool, string) {
			a := askFace(t, req())
			return a.status == 200, a.String()
		})
	}
	r.stop(t)
}
