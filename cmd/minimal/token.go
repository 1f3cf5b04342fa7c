package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/store"
)

func cmdToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("token: say mint or revoke")
	}
	switch args[0] {
	case "mint":
		return tokenMint(ctx, args[1:], stdout, stderr)
	case "revoke":
		return tokenRevoke(ctx, args[1:], stdout, stderr)
	}
	return usagef("token: unknown subcommand %q (mint, revoke)", args[0])
}

func tokenMint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token mint", stderr)
	dataDir := dataDirFlag(fs)
	org := fs.String("org", "demo", "org name")
	project := fs.String("project", "demo", "project name")
	identity := fs.String("identity", "", "identity name (required)")
	roles := fs.String("roles", "", "comma-separated roles, a subset of the identity's (default: all it holds)")
	keyType := fs.String("key-type", "", "CRUD mask, at most the identity's (default: the identity's)")
	ttl := fs.Duration("ttl", auth.DefaultTTL, "token lifetime")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *identity == "" {
		return usagef("token mint: --identity is required")
	}
	st, err := store.Open(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	_, proj, err := resolveProject(ctx, st, *org, *project)
	if err != nil {
		return err
	}
	id, err := st.Identity(ctx, proj.ID, *identity)
	if err != nil {
		return err
	}
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		return err
	}
	opt := auth.MintOptions{KeyType: *keyType, TTL: *ttl}
	if *roles != "" {
		for _, r := range strings.Split(*roles, ",") {
			if r = strings.TrimSpace(r); r != "" {
				opt.Roles = append(opt.Roles, r)
			}
		}
	}
	tok, err := auth.Mint(ctx, st, key, id, opt)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

func tokenRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token revoke", stderr)
	dataDir := dataDirFlag(fs)
	tok := fs.String("token", "", "the token to revoke")
	file := fs.String("token-file", "", "a file holding the token to revoke")
	if err := fs.Parse(args); err != nil {
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
	st, err := store.Open(ctx, *dataDir)
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
	st, err := store.Open(ctx, dataDir)
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

// resolveProject finds an org and project by name.
func resolveProject(ctx context.Context, st *store.Store, org, project string) (store.Org, store.Project, error) {
	o, err := st.Org(ctx, org)
	if err != nil {
		return store.Org{}, store.Project{}, err
	}
	p, err := st.Project(ctx, o.ID, project)
	return o, p, err
}
