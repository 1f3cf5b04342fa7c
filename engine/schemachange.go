package engine

import (
	"context"
	"slices"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// schemaChanged drops the cached tables of the plan's database after a
// statement found a table or column gone (dialects.ErrSchemaChanged): the
// next call reads them again instead of waiting for RefreshInterval.
func (e *Engine) schemaChanged(ctx context.Context, p *auth.Principal, plan *query.Plan, err error) {
	e.log.InfoContext(ctx, "table changed in the database; reading its tables again",
		"type", plan.Type, "schema", plan.Schema, "table", plan.Table, "err", err)
	e.Refresh(p, plan.Type, plan.Schema)
}

// clonePlan copies the request part of a read plan, so that running one
// copy (which expands, coerces and scopes it in place) leaves the other as
// the caller gave it.
func clonePlan(p *query.Plan) *query.Plan {
	// The plan and the copy of a lone condition (a read by key) are one
	// allocation.
	pc := new(struct {
		plan  query.Plan
		where condCopy
	})
	c := &pc.plan
	*c = *p
	c.Columns = slices.Clone(p.Columns)
	c.Order = slices.Clone(p.Order)
	c.Aggregates = slices.Clone(p.Aggregates)
	c.GroupBy = slices.Clone(p.GroupBy)
	if x, ok := p.Where.(*query.Cond); ok {
		c.Where = copyCond(&pc.where, x)
	} else {
		c.Where = cloneExpr(p.Where)
	}
	c.Having = cloneExpr(p.Having)
	return c
}

// forget drops the source's cached tables: the next call reads them again.
func (s *source) forget() {
	s.mu.Lock()
	s.tables, s.loadedAt, s.tried = nil, time.Time{}, time.Time{}
	s.mu.Unlock()
}

// Reload reads the tables of one registered database of a project at
// once, on this server, and answers how many there are (the admin API's
// reload; other servers follow store.TouchDatabase). A database the
// catalog does not hold yet (registered an instant ago) is synced first.
func (e *Engine) Reload(ctx context.Context, projectID, typ, schema string) (int, error) {
	s := e.cat.get(projectID, typ, schema)
	if s == nil {
		if err := e.cat.sync(ctx); err != nil {
			return 0, err
		}
		if s = e.cat.get(projectID, typ, schema); s == nil {
			return 0, fault.New(fault.NotFound, "database %s/%s not found", typ, schema)
		}
	}
	s.forget()
	if err := s.load(ctx, e.cfg.ConnectTimeout); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tables), nil
}
