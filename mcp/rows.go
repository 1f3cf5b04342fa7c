package mcp

import (
	"bytes"
	"context"
	"net/url"
	"sort"
	"strconv"

	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/wire"
)

// plan builds the plan of a data tool the way REST does: the query object
// through query.FromParams, the address from the arguments, org and project
// from the token (MCP has no path to name them).
func (s *Server) plan(c *call, action query.Action, vals url.Values) (*query.Plan, error) {
	p, err := query.FromParams(action, vals, query.Limits{MaxPageSize: s.cfg.MaxPageSize})
	if err != nil {
		return nil, err
	}
	p.Org, p.Project = c.p.Org, c.p.Project
	p.Type, p.Schema, p.Table = c.args.str("type"), c.args.str("schema"), c.args.str("table")
	return p, nil
}

// writePlan is plan for a write: the query object's filters and the all
// argument.
func (s *Server) writePlan(c *call, action query.Action) (*query.Plan, error) {
	vals, err := queryValues(action, c.args.obj("query"))
	if err != nil {
		return nil, err
	}
	if c.args.flag("all") {
		vals.Set(query.ParamAll, "true")
	}
	return s.plan(c, action, vals)
}

// readRows answers {"data":[…],"page":{…}}, encoded by the REST json
// encoder, so a page reads the same on both faces.
func (s *Server) readRows(ctx context.Context, c *call) (answer, error) {
	vals, err := queryValues(query.Read, c.args.obj("query"))
	if err != nil {
		return answer{}, err
	}
	vals.Set(query.ParamSize, strconv.FormatInt(c.args.int("page_size"), 10))
	vals.Set(query.ParamPage, strconv.FormatInt(c.args.int("page_number"), 10))
	plan, err := s.plan(c, query.Read, vals)
	if err != nil {
		return answer{}, err
	}
	res, err := s.eng.Execute(ctx, c.p, plan)
	if err != nil {
		return answer{}, err
	}
	defer res.Rows.Close()
	buf := getBuffer()
	n, err := wire.Stream(buf, wire.JSON, res.Rows, &wire.Page{Number: plan.Offset / plan.Limit, Size: plan.Limit})
	if err != nil {
		putBuffer(buf)
		return answer{}, err
	}
	return answer{text: bytes.TrimSuffix(buf.Bytes(), []byte("\n")), rows: n, buf: buf}, nil
}

func (s *Server) insertRows(ctx context.Context, c *call) (answer, error) {
	plan, err := s.plan(c, query.Insert, url.Values{})
	if err != nil {
		return answer{}, err
	}
	plan.Records = c.args.rows("rows")
	return s.write(ctx, c, plan)
}

func (s *Server) updateRows(ctx context.Context, c *call) (answer, error) {
	plan, err := s.writePlan(c, query.Update)
	if err != nil {
		return answer{}, err
	}
	values := c.args.obj("values")
	cols := make([]string, 0, len(values))
	for k := range values {
		cols = append(cols, k)
	}
	sort.Strings(cols)
	for _, k := range cols {
		plan.Set = append(plan.Set, query.Assign{Column: k, Value: values[k]})
	}
	return s.write(ctx, c, plan)
}

func (s *Server) deleteRows(ctx context.Context, c *call) (answer, error) {
	plan, err := s.writePlan(c, query.Delete)
	if err != nil {
		return answer{}, err
	}
	return s.write(ctx, c, plan)
}

// write executes a write plan and answers like REST: rows_affected and, for
// an insert, the inserted rows the caller may read.
func (s *Server) write(ctx context.Context, c *call, plan *query.Plan) (answer, error) {
	res, err := s.eng.Execute(ctx, c.p, plan)
	if err != nil {
		return answer{}, err
	}
	return answer{text: wire.AppendWriteResult(nil, res.RowsAffected, res.Columns, res.Returned), rows: res.RowsAffected}, nil
}
