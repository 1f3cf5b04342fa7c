package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/console"
	"github.com/littlebitlabs/minimal/store"
)

// chromiumPath finds Debian's Chromium (scripts/services.sh installs it),
// installing it with apt-get when missing and possible. Without it the
// test fails under MINIMAL_TEST_REQUIRE_DBS=1 and is skipped otherwise.
func chromiumPath(t *testing.T) string {
	t.Helper()
	find := func() string {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("apt-get"); err == nil {
			cmd := exec.Command("apt-get", "install", "-y", "-q", "chromium")
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			out, err := cmd.CombinedOutput()
			if p := find(); p != "" {
				return p
			}
			t.Logf("apt-get install chromium: %v\n%s", err, out)
		}
	}
	if os.Getenv("MINIMAL_TEST_REQUIRE_DBS") == "1" {
		t.Fatal("no Chromium (chromium) and MINIMAL_TEST_REQUIRE_DBS=1: run scripts/services.sh, which installs it")
	}
	t.Skip("no Chromium: run scripts/services.sh")
	return ""
}

// browser is a headless Chromium driven by chromedp, recording every
// request it makes, the headers of every answer and every console error.
type browser struct {
	t        *testing.T
	ctx      context.Context
	shots    string
	mu       sync.Mutex
	requests []string
	headers  map[string]network.Headers
	errors   []string
	// close stops the browser.
	close func()
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.WindowSize(1280, 800),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	stop := func() { cancelTimeout(); cancelCtx(); cancelAlloc() }
	t.Cleanup(stop)

	shots := os.Getenv("MINIMAL_TEST_ARTIFACTS")
	if shots == "" {
		shots = filepath.Join(os.TempDir(), "minimal-test-artifacts")
	}
	shots = filepath.Join(shots, "console")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, ctx: ctx, shots: shots, headers: map[string]network.Headers{}, close: stop}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL+e.Request.URLFragment)
		case *network.EventResponseReceived:
			b.headers[e.Response.URL] = e.Response.Headers
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				b.errors = append(b.errors, e.Entry.Text)
			}
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if x := e.ExceptionDetails.Exception; x != nil && x.Description != "" {
				msg += " " + x.Description
			}
			b.errors = append(b.errors, msg)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); return err },
		func() error { _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err },
	} {
		if err := enable(); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// do runs actions in the tab.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.shot("failure")
		b.t.Fatalf("browser: %v\nconsole errors: %v", err, b.errors)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// hash moves the console to a page.
func (b *browser) hash(h string) {
	b.t.Helper()
	eval[any](b, fmt.Sprintf("void (location.hash = %q)", h))
}

// waitText waits until the element sel holds want, and returns its text.
func (b *browser) waitText(sel, want string) string {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q)||{}).innerText||""`, sel)))
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			b.shot("failure")
			b.t.Fatalf("%s never held %q; it holds %q\nconsole errors: %v", sel, want, s, b.errors)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Error(err)
	}
}

// setValue sets the value of the field sel as a script would, with the
// change event a user's choice fires.
func (b *browser) setValue(sel, value string) {
	b.t.Helper()
	b.do(chromedp.WaitVisible(chromedp.CSS(sel)))
	got := eval[string](b, fmt.Sprintf(`(e => { e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); return e.value })(document.querySelector(%q))`, value, sel))
	if got != value {
		b.t.Fatalf("%s: value %q after setting %q", sel, got, value)
	}
}

// fill types text into the field sel, after emptying it.
func (b *browser) fill(sel, text string) {
	b.t.Helper()
	b.setValue(sel, "")
	b.do(chromedp.SendKeys(chromedp.CSS(sel), text))
}

func (b *browser) click(sel string) {
	b.t.Helper()
	b.do(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// signIn opens a console-link URL and waits for the databases page.
func (b *browser) signIn(link string) {
	b.t.Helper()
	b.do(chromedp.Navigate(link))
	b.waitText("#who-text", " · ")
	if href := eval[string](b, `location.href`); strings.Contains(href, "code=") {
		b.t.Fatalf("the code stayed in the address bar: %s", href)
	}
}

func (b *browser) signOut() {
	b.t.Helper()
	b.click("#signout")
	b.do(chromedp.WaitVisible(chromedp.CSS("#token")))
}

// TestConsoleInBrowser drives the web console in headless Chromium as an
// operator and a data owner would: sign in with a console-link code,
// register a PostgreSQL database, browse a table with a filter, see a
// column limit and a row scope applied to a limited identity, see the
// admin API's refusal as it words it, explain a refused request naming
// the roles, open an AI session's journal, watch the metrics. Every
// request of the browser stays on the gateway's origin and no URL holds a
// token. Screenshots of each page go to $MINIMAL_TEST_ARTIFACTS/console.
func TestConsoleInBrowser(t *testing.T) {
	dsn := os.Getenv("MINIMAL_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("MINIMAL_TEST_REQUIRE_DBS") == "1" {
			t.Fatal("MINIMAL_TEST_PG_DSN is unset and MINIMAL_TEST_REQUIRE_DBS=1")
		}
		t.Skip("MINIMAL_TEST_PG_DSN is unset")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("console_%d", rand.Uint32())
	defer func() {
		_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(ctx)
	}()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".employees (id serial PRIMARY KEY, full_name text NOT NULL, department_id int NOT NULL, salary numeric(10,2) NOT NULL);"+
		"INSERT INTO "+schema+".employees (full_name, department_id, salary) VALUES ('Ada Lovelace', 1, 9100), ('Alan Turing', 2, 8800), ('Grace Hopper', 1, 9900), ('Edsger Dijkstra', 3, 8700)"); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	s := startServer(t, dir)
	defer s.stop(t)
	// The browser goes first: its open connections would hold up the
	// server's graceful stop.
	b := newBrowser(t)
	defer b.close()
	base := "http://" + s.addr
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	A := base + "/minimal/api/admin/v1/orgs/demo/projects/demo"
	object := "pg/" + schema + "/employees"

	// A limited identity: three columns of employees (not salary), its own
	// department's rows only.
	for _, c := range []struct{ path, body string }{
		{"/identities", `{"name":"lena","space":"main","roles":["hr-analyst"],"claims":{"department_id":1}}`},
		{"/templates", `{"name":"hr-read","rules":[{"object":"` + object + `","actions":["read"],"columns":["id","full_name","department_id"]}]}`},
		{"/bindings", `{"role":"hr-analyst","templates":["hr-read"]}`},
		{"/scopes", `{"role":"hr-analyst","object":"` + object + `","filter":"department_id=eq.{claims.department_id}"}`},
	} {
		if code, body := post(t, A+c.path, admin, c.body); code != 201 {
			t.Fatalf("POST %s: %d %s", c.path, code, body)
		}
	}

	// 1. Sign in as the admin with a one-time code; register the database.
	link, _ := consoleLink(t, dir, s.addr, "--identity", "admin")
	b.do(chromedp.EmulateViewport(1280, 800))
	b.signIn(link)
	b.waitText("#page", "Registered databases")
	b.setValue("#db-type", "pg")
	b.fill("#db-schema", schema)
	b.fill("#db-dsn", dsn)
	b.click("#db-register")
	b.waitText("#page", "Registered pg/"+schema+" after a connection test.")
	b.waitText("#page", "pg\t"+schema)
	b.waitText("#page", "Tables of pg/"+schema)
	b.waitText("#page", "employees\tread, create, update, delete")
	// Reload the database's tables (as after a migration).
	b.do(chromedp.Click(chromedp.Search(`//tr[td[text()="` + schema + `"]]//button[text()="Reload tables"]`)))
	b.waitText("#page", "Reloaded pg/"+schema+": 1 table.")
	b.shot("databases")

	// 2. Browse the table with a filter and an order (the catalog reaches
	// the server within seconds of the registration).
	browse := base + console.Prefix + "#browse/pg/" + url.PathEscape(schema) + "/employees"
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.hash("#databases")
		b.hash(browse[strings.Index(browse, "#"):])
		time.Sleep(300 * time.Millisecond)
		opts := eval[string](b, `[...document.querySelectorAll("#browse-table option")].map(o => o.value).join(" ")`)
		if strings.Contains(opts, object) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the table never appeared in the browser's list: %q", opts)
		}
	}
	b.waitText("#browse-limits", "You may read 4 columns")
	b.fill("#browse-filters", "department_id=eq.1")
	b.fill("#browse-order", "id.as")
	b.click("#browse-run")
	out := b.waitText("#browse-out", "Grace Hopper")
	if !strings.Contains(out, "Ada Lovelace") || strings.Contains(out, "Alan Turing") || !strings.Contains(out, "salary") {
		t.Fatalf("filtered rows as admin: %q", out)
	}
	b.shot("browse")

	// 3. Explain a request of the limited identity: refused, naming its roles.
	b.hash("#policy")
	b.waitText("#policy-view", "lena")
	b.fill("#explain-identity", "lena")
	b.setValue("#explain-method", "DELETE")
	b.setValue("#explain-path", "/minimal/api/rest/auto/v1/demo/demo/"+object+"?id=eq.1")
	b.click("#explain-run")
	refusal := b.waitText("#explain-refusal", "FORBIDDEN")
	if !strings.Contains(refusal, "hr-analyst") {
		t.Fatalf("explain refusal does not name the roles: %q", refusal)
	}
	b.waitText("#explain-out", "1 lock mask")
	b.shot("policy")

	// 4. An AI session and its journal.
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	org, _ := st.Org(ctx, "demo")
	proj, _ := st.Project(ctx, org.ID, "demo")
	agent, err := st.Identity(ctx, proj.ID, "agent")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.CreateSession(ctx, store.Session{ProjectID: proj.ID, IdentityID: agent.ID, Name: "quarterly report", Context: "summing salaries", IdleTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	_, call, err := st.BeginCall(ctx, store.CallStart{SessionID: sess.ID, ProjectID: proj.ID, IdentityID: agent.ID, At: time.Now(), Tool: "query_table", Arguments: `{"table":"employees"}`})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishCall(ctx, sess.ID, call.Seq, "FORBIDDEN", "insufficient permissions", 0, 3*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	st.Close()
	b.hash("#sessions")
	b.waitText("#session-list", "quarterly report")
	b.do(chromedp.Click(chromedp.Search(`//tr[td[text()="quarterly report"]]//button[text()="Journal"]`)))
	journal := b.waitText("#session-out", "query_table")
	if !strings.Contains(journal, "quarterly report") || !strings.Contains(journal, "FORBIDDEN") {
		t.Fatalf("journal: %q", journal)
	}
	b.shot("sessions")
	// By id, too.
	b.hash("#audit")
	b.hash("#sessions")
	b.fill("#session-id", sess.ID)
	b.click("#session-open")
	b.waitText("#session-out", "summing salaries")

	// 5. The audit log and the metrics.
	b.hash("#audit")
	b.waitText("#audit-out", object)
	b.shot("audit")
	b.hash("#metrics")
	b.waitText("#metric-requests", "/s")
	time.Sleep(2500 * time.Millisecond)
	b.shot("metrics")
	b.signOut()

	// 6. The limited identity: its column limit and row scope, applied and
	// said; the admin API's refusal as the API words it.
	link, _ = consoleLink(t, dir, s.addr, "--identity", "lena")
	b.signIn(link)
	lenaTok, _, _ := cli(t, "token", "mint", "--data-dir", dir, "--identity", "lena")
	_, _, apiRefusal := get(t, A+"/databases", strings.TrimSpace(lenaTok))
	msg := apiMessage(apiRefusal)
	if msg == "" {
		t.Fatalf("admin API refusal: %s", apiRefusal)
	}
	b.waitText("#page", msg)
	b.shot("databases-limited")
	b.hash(browse[strings.Index(browse, "#"):])
	limits := b.waitText("#browse-limits", "You may read 3 columns")
	if strings.Contains(limits, "salary") || !strings.Contains(limits, "row scope") {
		t.Fatalf("limits shown to lena: %q", limits)
	}
	b.click("#browse-run")
	out = b.waitText("#browse-out", "Ada Lovelace")
	if strings.Contains(out, "salary") || strings.Contains(out, "Alan Turing") || !strings.Contains(out, "Grace Hopper") {
		t.Fatalf("lena's rows: %q", out)
	}
	// Another format, through the Auto API: CSV of the granted columns.
	b.setValue("#browse-format", "csv")
	b.click("#browse-run")
	csv := b.waitText("#browse-out", "id,full_name,department_id\n")
	if strings.Contains(csv, "salary") || !strings.Contains(csv, "Grace Hopper,1") {
		t.Fatalf("lena's CSV: %q", csv)
	}
	b.setValue("#browse-format", "json")
	// Asking for the hidden column shows the Auto API's own refusal.
	b.fill("#browse-fields", "id,salary")
	b.click("#browse-run")
	_, _, hidden := get(t, base+"/minimal/api/rest/auto/v1/demo/demo/"+object+"?ps=25&pg=0&fc=id,salary", strings.TrimSpace(lenaTok))
	if hm := apiMessage(hidden); hm == "" {
		t.Fatalf("Auto API answer to a hidden column: %s", hidden)
	} else {
		b.waitText("#browse-out", hm)
	}
	b.shot("browse-limited")

	// 7. Phone width: no horizontal scrolling of the page itself.
	b.do(chromedp.EmulateViewport(390, 844))
	b.hash("#databases")
	b.waitText("#page", "Register a database")
	if eval[bool](b, `document.documentElement.scrollWidth > document.documentElement.clientWidth + 1`) {
		t.Error("the databases page scrolls sideways at phone width")
	}
	b.shot("databases-phone")

	// 8. A reload forgets the token (memory only); signing in with a pasted
	// token works from the keyboard alone, and focus lands on the page.
	b.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+console.Prefix))
	b.waitText("#page", "Sign in")
	if id := eval[string](b, `document.activeElement.id`); id != "token" {
		t.Fatalf("the sign-in page focuses %q, want the token field", id)
	}
	if stored := eval[int](b, `sessionStorage.length + localStorage.length + document.cookie.length`); stored != 0 {
		t.Errorf("the console stored something in the browser (%d)", stored)
	}
	// A token the gateway refuses: its answer, as it words it.
	forged := strings.TrimSpace(lenaTok)
	forged = forged[:len(forged)-4] + "AAAA"
	_, _, forgedAnswer := get(t, base+"/minimal/api/rest/auto/v1/demo/demo", forged)
	if apiMessage(forgedAnswer) == "" {
		t.Fatalf("the gateway's answer to a forged token: %s", forgedAnswer)
	}
	b.do(chromedp.KeyEvent(forged), chromedp.KeyEvent("\r"))
	b.waitText("#page", "401 UNAUTHENTICATED: "+apiMessage(forgedAnswer))
	if eval[bool](b, `document.getElementById("nav").hidden`) != true {
		t.Fatal("signed in with a refused token")
	}
	b.do(chromedp.KeyEvent(strings.TrimSpace(lenaTok)), chromedp.KeyEvent("\r"))
	b.waitText("#who-text", "lena")
	if focused := eval[string](b, `document.activeElement.tagName + " " + document.activeElement.textContent`); focused != "H1 Databases" {
		t.Errorf("after sign-in, focus is on %q, want the page's heading", focused)
	}
	b.do(chromedp.KeyEvent("\t"))
	if focused := eval[string](b, `document.activeElement.textContent`); focused != "Reload" {
		t.Errorf("Tab after the heading focuses %q, want the Reload button", focused)
	}

	// Every request stayed on the gateway's origin; no URL held a token or,
	// after the first navigation, a code; the pages obeyed the CSP.
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, u := range b.requests {
		pu, err := url.Parse(u)
		if err != nil || pu.Host != s.addr && pu.Scheme != "data" {
			t.Errorf("a request left the gateway: %s", u)
		}
		if strings.Contains(u, "eyJ") || strings.Contains(u, admin) {
			t.Errorf("a token in a URL: %s", u)
		}
		if strings.Contains(u, "code=") && !strings.HasSuffix(pu.Path, console.Prefix) {
			t.Errorf("a code in a request URL other than the link itself (#%d): %s", i, u)
		}
	}
	h := b.headers[base+console.Prefix]
	csp, _ := h["Content-Security-Policy"].(string)
	if csp == "" || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("the console page's CSP as the browser got it: %q (headers %v)", csp, h)
	}
	for _, e := range b.errors {
		if strings.Contains(e, "Content Security Policy") || strings.Contains(e, "Uncaught") {
			t.Errorf("browser console: %s", e)
		}
	}
	t.Logf("%d browser requests, all to %s; screenshots in %s", len(b.requests), s.addr, b.shots)
}

// post sends a JSON body with a token and returns the status and body.
func post(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("LB-Access-Token", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// apiMessage is the message of an error envelope.
func apiMessage(body string) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error.Message
}
