package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeCORSOrigins: `minimal serve` turns CORS on with --cors-origins
// or MINIMAL_CORS_ORIGINS (the flag wins), answers a preflight of an
// allowed origin without a token, and refuses an origin list it cannot
// read.
func TestServeCORSOrigins(t *testing.T) {
	const envOrigins = "MINIMAL_CORS_ORIGINS" // as documented
	preflight := func(addr, origin string) (int, http.Header) {
		t.Helper()
		req, _ := http.NewRequest("OPTIONS", "http://"+addr+"/minimal/api/rest/auto/v1/demo/demo/mi/app/notes", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "GET")
		req.Header.Set("Access-Control-Request-Headers", "lb-access-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	dir := t.TempDir()
	t.Setenv(envOrigins, "https://env.example.com")
	s := startServe(t, dir, "--cors-origins", "https://flag.example.com")
	if code, h := preflight(s.addr, "https://flag.example.com"); code != 204 || h.Get("Access-Control-Allow-Origin") != "https://flag.example.com" {
		t.Errorf("flag origin: %d %v", code, h)
	}
	if code, h := preflight(s.addr, "https://env.example.com"); code == 204 || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("env origin under the flag: %d %v", code, h)
	}
	s.terminate(t)

	s = startServe(t, filepath.Clean(dir))
	if code, h := preflight(s.addr, "https://env.example.com"); code != 204 || h.Get("Access-Control-Allow-Origin") != "https://env.example.com" {
		t.Errorf("env origin: %d %v", code, h)
	}
	s.terminate(t)

	t.Setenv(envOrigins, "")
	s = startServe(t, dir)
	if code, h := preflight(s.addr, "https://env.example.com"); code == 204 || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("default: %d %v", code, h)
	}
	s.terminate(t)

	t.Setenv(envOrigins, "env.example.com")
	if _, errOut, code := cli(t, "serve", "--data-dir", dir, "--rest-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0"); code != 2 || !strings.Contains(errOut, envOrigins) {
		t.Errorf("%s=env.example.com: exit %d, %s", envOrigins, code, errOut)
	}
}
