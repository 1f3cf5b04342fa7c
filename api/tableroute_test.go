package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/observe"
)

// TestTableRoutes pins what the routes under a table's path answer, with
// and without a token, and the route their request line names (the label
// of the metrics and traces too): every method and shape passes
// authentication first (401 without a token), a table's reads, writes and
// description reach their handlers, other methods answer 405 and other
// paths 404, each with the label the mounted sub-router gives it.
func TestTableRoutes(t *testing.T) {
	g := newGateway(t, engine.Config{})
	var buf bytes.Buffer
	h := api.New(api.Deps{Engine: g.eng, Verifier: auth.NewVerifier(g.st, g.key), Store: g.st, SigningKey: g.key},
		api.Config{MaxPageSize: 100, Logger: slog.New(observe.NewJSONHandler(&buf, slog.LevelDebug))})
	table := api.AutoPrefix + "/{org}/{project}/{type}/{schema}/{table}"
	notes := auto + "/mi/app/notes"
	for _, c := range []struct {
		method, path string
		token        bool
		status       int
		code         string // the error's code, "" for a success
		route        string
	}{
		{"GET", notes, false, 401, "UNAUTHENTICATED", table},
		{"GET", notes + "?ps=1&pg=0", true, 200, "", table},
		{"GET", notes + "/?ps=1&pg=0", true, 200, "", table},
		{"GET", notes + "?ps=1&pg=0&nope=eq.1", true, 400, "INVALID", table},
		{"GET", auto + "/mi/app/nope?ps=1&pg=0", true, 404, "NOT_FOUND", table},
		{"GET", auto + "/mi/app/no%2Fpe?ps=1&pg=0", true, 404, "NOT_FOUND", table},
		{"GET", auto + "/mi/app/no%20pe?ps=1&pg=0", true, 404, "NOT_FOUND", table},
		{"GET", auto + "/mi//notes?ps=1&pg=0", true, 404, "NOT_FOUND", table},
		{"GET", "/minimal/api/rest/auto/v1/other/demo/mi/app/notes?ps=1&pg=0", true, 400, "INVALID", table},
		{"POST", notes, false, 401, "UNAUTHENTICATED", table},
		{"POST", notes, true, 400, "INVALID", table}, // no body
		{"POST", notes + "/", true, 400, "INVALID", table},
		{"PUT", notes, false, 401, "UNAUTHENTICATED", table},
		{"PUT", notes, true, 400, "INVALID", table},
		{"PATCH", notes, false, 401, "UNAUTHENTICATED", table},
		{"PATCH", notes, true, 400, "INVALID", table},
		{"DELETE", notes, false, 401, "UNAUTHENTICATED", table},
		{"DELETE", notes, true, 400, "INVALID", table}, // no filter
		{"HEAD", notes, false, 401, "UNAUTHENTICATED", table},
		{"HEAD", notes, true, 405, "METHOD_NOT_ALLOWED", table},
		{"OPTIONS", notes, false, 401, "UNAUTHENTICATED", table},
		{"OPTIONS", notes, true, 405, "METHOD_NOT_ALLOWED", table},
		{"TRACE", notes, true, 405, "METHOD_NOT_ALLOWED", table},
		{"CONNECT", notes, true, 405, "METHOD_NOT_ALLOWED", table},
		{"FOO", notes, true, 405, "METHOD_NOT_ALLOWED", "unmatched"},
		{"GET", notes + "/" + api.DescribeSegment, false, 401, "UNAUTHENTICATED", table + "/*"},
		{"GET", notes + "/" + api.DescribeSegment, true, 200, "", table + "/" + api.DescribeSegment},
		{"POST", notes + "/" + api.DescribeSegment, true, 405, "METHOD_NOT_ALLOWED", table + "/*"},
		{"GET", notes + "/x", false, 401, "UNAUTHENTICATED", table + "/*"},
		{"GET", notes + "/x", true, 404, "NOT_FOUND", table + "/*"},
		{"POST", notes + "/x/y", true, 404, "NOT_FOUND", table + "/*"},
		{"GET", auto + "/mi/app", true, 200, "", api.AutoPrefix + "/{org}/{project}/{type}/{schema}"},
		{"GET", auto + "/mi", true, 404, "NOT_FOUND", api.AutoPrefix + "/{org}/{project}/*"},
		{"GET", api.AutoPrefix + "/demo", true, 404, "NOT_FOUND", "unmatched"},
	} {
		buf.Reset()
		req := httptest.NewRequest(c.method, c.path, nil)
		if c.token {
			req.Header.Set("LB-Access-Token", g.admin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var line struct {
			Msg   string `json:"msg"`
			Route string `json:"route"`
		}
		for l := range bytes.Lines(buf.Bytes()) {
			if err := json.Unmarshal(l, &line); err != nil {
				t.Fatalf("log line %s: %v", l, err)
			}
		}
		var body struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != c.status || body.Error.Code != c.code || line.Msg != "request" || line.Route != c.route {
			t.Errorf("%s %s (token %v): %d %q, line %q route %q; want %d %q, route %q\n%s",
				c.method, c.path, c.token, w.Code, body.Error.Code, line.Msg, line.Route, c.status, c.code, c.route, strings.TrimSpace(w.Body.String()))
		}
		if c.status == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "" {
			t.Errorf("%s %s: Allow %q", c.method, c.path, w.Header().Get("Allow"))
		}
	}
}
