package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/policy"
	"github.com/littlebitlabs/minimal/store"
)

func cmdToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if args[0] == "mint" {
		return tokenMint(ctx, args[1:], stdout, stderr)
	}
	return tokenRevoke(ctx, args[1:], stdout, stderr)
}

func tokenMint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token mint", stderr)
	dataDir := dataDirFlag(fs)
	ref := projectFlags(fs)
	identity := fs.String("identity", "", "identity name (required)")
	roles := fs.String("roles", "", "comma-separated roles, a subset of the identity's (default: all it holds)")
	keyType := fs.String("key-type", "", "CRUD mask, at most the identity's (default: the identity's)")
	ttl := fs.String("ttl", fmt.Sprintf("%gh", auth.DefaultTTL.Hours()), "token lifetime: a duration (90m, 720h) or days (30d); at most "+fmt.Sprint(auth.MaxTTL.Hours()/24)+"d")
	asJSON := fs.Bool("json", false, "print token, jti, identity, roles, key_type and expires_at as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("token mint: unexpected argument %q", fs.Arg(0))
	}
	if *identity == "" {
		return usagef("token mint: --identity is required")
	}
	lifetime, err := auth.ParseTTL(*ttl)
	if err != nil {
		return usagef("token mint: --ttl: %s", fault.As(err).Message)
	}
	st, _, _, proj, err := ref.open(ctx, "token mint", *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	id, err := st.Identity(ctx, proj.ID, *identity)
	if err != nil {
		return err
	}
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		return err
	}
	opt := auth.MintOptions{KeyType: *keyType, TTL: lifetime, Roles: splitRoles(*roles)}
	tok, err := auth.Mint(ctx, st, key, id, opt)
	if err != nil {
		return err
	}
	if !*asJSON {
		fmt.Fprintln(stdout, tok)
		return nil
	}
	p, err := auth.NewVerifier(st, key).Verify(ctx, tok)
	if err != nil {
		return err
	}
	// The fields and their form are the admin API's answer to a mint.
	return json.NewEncoder(stdout).Encode(mintedJSON{
		Token: tok, JTI: p.TokenID, Identity: id.Name, Roles: p.Roles, KeyType: p.KeyType.String(),
		ExpiresAt: p.ExpiresAt.UTC().Format(time.RFC3339),
	})
}

// splitRoles reads a --roles flag: comma-separated names, blanks
// ignored; nil for none (every role the identity holds).
func splitRoles(s string) []string {
	var out []string
	for _, r := range strings.Split(s, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// mintedJSON is what `token mint --json` prints.
type mintedJSON struct {
	Token     string   `json:"token"`
	JTI       string   `json:"jti"`
	Identity  string   `json:"identity"`
	Roles     []string `json:"roles"`
	KeyType   string   `json:"key_type"`
	ExpiresAt string   `json:"expires_at"`
}

func tokenRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token revoke", stderr)
	dataDir := dataDirFlag(fs)
	tok := fs.String("token", "", "the token to revoke")
	file := fs.String("token-file", "", "a file holding the token to revoke")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 1 && *tok == "" && *file == "" {
		return revokeJTI(ctx, *dataDir, fs.Arg(0), stdout)
	}
	if fs.NArg() > 0 {
		return usagef("token revoke: give one JTI, or --token / --token-file")
	}
	raw := *tok
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		raw = strings.TrimSpace(string(b))
	}
	if raw == "" {
		return usagef("token revoke: give a JTI, --token or --token-file")
	}
	st, err := openStore(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		return err
	}
	p, err := auth.NewVerifier(st, key).Verify(ctx, raw)
	if err != nil {
		return err
	}
	if err := st.RevokeToken(ctx, p.TokenID, p.ExpiresAt); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked token %s of identity %s and every token minted from it (was valid until %s)\n", p.TokenID, p.Identity, p.ExpiresAt.Format(time.RFC3339))
	return nil
}

// revokeJTI revokes a token by its id, and with it every token minted from
// it (auth.Claims.Ancestors). Its expiry is not known, so the revocation is
// kept for the longest lifetime a token can have.
func revokeJTI(ctx context.Context, dataDir, jti string, stdout io.Writer) error {
	st, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.RevokeToken(ctx, jti, time.Now().Add(auth.MaxTTL)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked token %s and every token minted from it\n", jti)
	return nil
}

// resolveProject finds an org and project by their abbreviations (see
// policy.Resolve): the one lookup of every command.
func resolveProject(ctx context.Context, st *store.Store, org, project string) (store.Org, store.Project, error) {
	return policy.Resolve(ctx, st, org, project)
}
