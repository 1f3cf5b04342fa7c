package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/console"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/observe"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// cmdConsoleLink prints a URL of the web console with a one-time sign-in
// code: opened within console.CodeTTL, the page exchanges the code (in
// the body of a POST; the code travels in the URL's fragment, which the
// browser never sends) for a short-lived token of the identity, held in
// the page's memory. The code is stored hashed in the control-plane store.
func cmdConsoleLink(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("console-link", stderr)
	dataDir := dataDirFlag(fs)
	ref := projectFlags(fs)
	identity := fs.String("identity", "", "identity name (required)")
	roles := fs.String("roles", "", "comma-separated roles, a subset of the identity's (default: all it holds)")
	keyType := fs.String("key-type", "", "CRUD mask, at most the identity's (default: the identity's)")
	ttl := fs.Duration("ttl", console.DefaultTokenTTL, "lifetime of the console's token, at most "+console.MaxTokenTTL.String())
	base := fs.String("url", "http://"+envOr(envRestAddr, "127.0.0.1:8080"), "base URL of the REST listener as the browser reaches it")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("console-link: unexpected argument %q", fs.Arg(0))
	}
	if *identity == "" {
		return usagef("console-link: --identity is required")
	}
	if *ttl <= 0 || *ttl > console.MaxTokenTTL {
		return usagef("console-link: --ttl must be in (0, %s], not %s", console.MaxTokenTTL, *ttl)
	}
	if *keyType != "" {
		if _, err := query.ParseMask(*keyType); err != nil {
			return usagef("console-link: --key-type: %s", fault.As(err).Message)
		}
	}
	if !strings.HasPrefix(*base, "http://") && !strings.HasPrefix(*base, "https://") {
		return usagef("console-link: --url must start with http:// or https://, not %q", *base)
	}
	st, _, _, proj, err := ref.open(ctx, "console-link", *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	id, err := st.Identity(ctx, proj.ID, *identity)
	if err != nil {
		return err
	}
	if !id.Enabled {
		return fault.New(fault.Forbidden, "identity %q is disabled", id.Name)
	}
	code, expires, err := console.NewCode(ctx, st, store.ConsoleCode{IdentityID: id.ID, Roles: splitRoles(*roles), KeyType: *keyType, TTL: *ttl})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s%s#code=%s\n", strings.TrimRight(*base, "/"), console.Prefix, code)
	fmt.Fprintf(stderr, "open it before %s (once; it signs in as %s for %s)\n", expires.Format(time.TimeOnly), id.Name, *ttl)
	return nil
}

// restHandler serves the web console at console.Prefix beside the REST
// API (unless off), behind the same request ids, log and metrics.
func restHandler(rest http.Handler, on bool, st *store.Store, key []byte, m *observe.Metrics, log *slog.Logger) http.Handler {
	if !on {
		return rest
	}
	c := observe.Middleware(observe.FaceREST, m, log)(console.Handler(st, key))
	root := strings.TrimSuffix(console.Prefix, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == root || strings.HasPrefix(r.URL.Path, console.Prefix) {
			c.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
}

// consoleFlag defines serve's --console.
func consoleFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("console", true, "serve the web console at "+console.Prefix+" on the REST listener")
}
