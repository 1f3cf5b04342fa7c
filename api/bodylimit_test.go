package api_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/api"
)

// TestOversizedBodyRefusedUnsent: a body declared larger than the limit is
// refused on its Content-Length before any of it is read, so a client that
// asks "Expect: 100-continue" gets the 413 instead of a 100 and never
// sends it.
func TestOversizedBodyRefusedUnsent(t *testing.T) {
	g := newAdminGateway(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := "POST " + adm + "/orgs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n" +
		api.ServerKeyHeader + ": " + testServerKey + "\r\nContent-Length: " + strconv.Itoa(1<<17) + "\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "over the limit of 65536 bytes") {
		t.Fatalf("status %d %s; want 413 before the body is sent", resp.StatusCode, b)
	}
}
