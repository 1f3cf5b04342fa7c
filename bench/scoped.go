package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The scoped read: an analyst whose role may read only some columns of the
// bench table, and only its rows of one group, against the admin asking for
// the same rows and columns by filter. Both run the same SQL shape
// (SELECT id, name, price, qty, active, created … WHERE grp = $1 ORDER BY
// id LIMIT … OFFSET …), so the ratio is what the permission gates cost.

const (
	analystIdentity = "analyst"
	analystRole     = "bench-analyst"
	// readerIdentity is a read-only agent (kind mcp) whose role reads every
	// pg and mi table: the second role of the tools/list measure.
	readerIdentity = "reader-agent"
	readerRole     = "bench-reader"
	// analystGroup is the analyst's grp claim: it sees the rows with
	// grp = analystGroup (see groupSize).
	analystGroup = 3
)

// analystColumns are the columns the template grants; note and grp are
// hidden.
var analystColumns = []string{"id", "name", "price", "qty", "active", "created"}

// benchObject is the bench table as permissions name it.
const benchObject = "pg/" + benchSchema + "/" + benchTable

// policyYAML is the policy file applied with bin/minimal apply.
func policyYAML() string {
	return fmt.Sprintf(`# Written by the bench: the scoped, column-limited reader, and a read-only agent.
org: demo
project: demo
identities:
  - {name: %s, kind: user, space: main, roles: [%s], claims: {grp: %d}}
  - {name: %s, kind: mcp, space: main, roles: [%s]}
templates:
  - name: bench-read
    rules:
      - {object: %q, actions: [read], columns: [%s]}
  - name: bench-read-all
    rules:
      - {object: pg, actions: [read]}
      - {object: mi, actions: [read]}
bindings:
  - {role: %s, templates: [bench-read]}
  - {role: %s, templates: [bench-read-all]}
scopes:
  - {role: %s, object: %q, filter: "grp=eq.{claims.grp}"}
`, analystIdentity, analystRole, analystGroup, readerIdentity, readerRole, benchObject, strings.Join(analystColumns, ", "), analystRole, readerRole, analystRole, benchObject)
}

// setupAnalyst applies the policy to the gateway's store and mints the
// analyst's token.
func setupAnalyst(ctx context.Context, cfg gatewayConfig, tmp string) (string, error) {
	path := filepath.Join(tmp, "bench-policy.yaml")
	if err := os.WriteFile(path, []byte(policyYAML()), 0o600); err != nil {
		return "", err
	}
	out, err := minimal(ctx, cfg, "apply", "-f", path, "--data-dir", cfg.dataDir)
	if err != nil {
		return "", err
	}
	logf("minimal apply: %s", strings.ReplaceAll(out, "\n", "; "))
	return mintToken(ctx, cfg, analystIdentity)
}

// mintToken mints a token of an identity of the bench project.
func mintToken(ctx context.Context, cfg gatewayConfig, identity string) (string, error) {
	tok, err := minimal(ctx, cfg, "token", "mint", "--data-dir", cfg.dataDir, "--identity", identity, "--ttl", "2h")
	if err != nil {
		return "", err
	}
	if tok == "" || strings.ContainsAny(tok, " \n") {
		return "", fmt.Errorf("minimal token mint printed %q, not a token", tok)
	}
	return tok, nil
}

// scopedPages is the pages of the analyst's rows (grp = analystGroup, ids
// analystGroup·groupSize+1 … in 1..rows) the scoped read asks for: up to
// pageCount, fewer when the table is small.
func scopedPages(rows int) pageSet {
	size := groupSize(rows)
	first := analystGroup*size + 1
	n := min(rows, first+size-1) - first + 1
	return pageSet{
		pages: min(pageCount, max(n, 0)/pageSize),
		idAt:  func(pg, i int) int64 { return int64(first + pg*pageSize + i) },
	}
}

// adminEquivalent is the admin's query for the analyst's rows and columns.
func adminEquivalent(rows int) pageSet {
	s := scopedPages(rows)
	s.params = fmt.Sprintf("&grp=eq.%d&fc=%s", analystGroup, strings.Join(analystColumns, ","))
	return s
}
