package observe

import (
	"io"
	"net/http"
	"testing"
)

// TestServeProfilesLoopbackOnly: the profiling listener, which asks no
// token, starts only on a loopback address, and never shows the command
// line the gateway was started with.
func TestServeProfilesLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:0", "nonsense"} {
		t.Setenv(EnvProfileAddr, addr)
		if got := ServeProfiles(nil); got != "" {
			t.Errorf("%s: profiles served on %s, want refused", addr, got)
		}
	}
	t.Setenv(EnvProfileAddr, "127.0.0.1:0")
	got := ServeProfiles(nil)
	if got == "" {
		t.Fatal("not served on 127.0.0.1")
	}
	get := func(path string) int {
		t.Helper()
		resp, err := http.Get("http://" + got + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/debug/pprof/"); code != 200 {
		t.Errorf("index: %d", code)
	}
	if code := get("/debug/pprof/cmdline"); code != 404 {
		t.Errorf("cmdline: %d, want 404", code)
	}
}
