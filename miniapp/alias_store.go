package miniapp

import (
	"context"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/engine"
)

// The global aliases live in each mi database's alias store (the mi
// source's _global.db, a dialects.AliasStore), reached through the
// engine's gated, audited entry points.

// scope is one alias store: a mi database, named project or user as
// mini-app-mcp reports it.
type scope struct {
	name, schema string
}

// aliasRow is one stored global alias and the store it came from.
type aliasRow struct {
	dialects.Alias
	scope scope
}

// scopes lists the caller's alias stores, in lookup order: every mi
// database other than the drop-in user and legacy ones is a project scope
// (schema-name order), then the user scope.
func (s *Service) scopes(ctx context.Context, p *auth.Principal) ([]scope, error) {
	dbs, err := s.miDatabases(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []scope
	var user *scope
	for _, d := range dbs {
		switch d[0] {
		case SchemaLegacy:
			if s.cfg.Mounted {
				continue
			}
		case SchemaUser:
			user = &scope{name: "user", schema: d[0]}
			continue
		}
		out = append(out, scope{name: "project", schema: d[0]})
	}
	if user != nil {
		out = append(out, *user)
	}
	return out, nil
}

// insertAlias stores a new alias in a scope; false when the name is
// taken. on is the table the alias reads first (zero: none named), whose
// update right storing it needs.
func (s *Service) insertAlias(ctx context.Context, p *auth.Principal, sc scope, on engine.TableRef, r aliasRow) (bool, error) {
	ok, err := s.eng.PutAlias(ctx, p, "mi", sc.schema, on, r.Alias)
	return ok, fileErr(err)
}

// getAlias finds an alias in the scopes, in order.
func (s *Service) getAlias(ctx context.Context, p *auth.Principal, scopes []scope, name string) (*aliasRow, error) {
	for _, sc := range scopes {
		a, ok, err := s.eng.Alias(ctx, p, "mi", sc.schema, name)
		if err != nil {
			return nil, fileErr(err)
		}
		if ok {
			return &aliasRow{Alias: a, scope: sc}, nil
		}
	}
	return nil, aliasNotFound(name)
}

// listAliases reads every scope's aliases; the first scope holding a name
// wins.
func (s *Service) listAliases(ctx context.Context, p *auth.Principal, scopes []scope) ([]aliasRow, error) {
	seen := map[string]bool{}
	var out []aliasRow
	for _, sc := range scopes {
		as, err := s.eng.Aliases(ctx, p, "mi", sc.schema)
		if err != nil {
			return nil, fileErr(err)
		}
		for _, a := range as {
			if !seen[a.Name] {
				seen[a.Name] = true
				out = append(out, aliasRow{Alias: a, scope: sc})
			}
		}
	}
	return out, nil
}

// deleteAlias removes an alias from one scope; on as for insertAlias.
func (s *Service) deleteAlias(ctx context.Context, p *auth.Principal, sc scope, on engine.TableRef, name string) (bool, error) {
	ok, err := s.eng.DropAlias(ctx, p, "mi", sc.schema, on, name)
	return ok, fileErr(err)
}
