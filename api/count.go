package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// count answers a read's total when it asks for one (count=…), nil
// otherwise. The total is counted on a plan of its own, parsed again from
// the request: Execute changes the plan it runs.
func (s *Server) count(r *http.Request, plan *query.Plan) (*int64, error) {
	if plan.Count == "" {
		return nil, nil
	}
	cp, err := PlanFromRequest(nil, r, s.cfg)
	if err != nil {
		return nil, err
	}
	n, err := s.eng.Count(r.Context(), auth.PrincipalFrom(r.Context()), cp)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// contentRange is the Content-Range header of a counted read: the rows of
// the page, first-last/total ("0-9/1234"), or */total for a page past the
// end.
func contentRange(offset, limit, total int64) string {
	last := offset + limit
	if last > total {
		last = total
	}
	if offset >= last {
		return "*/" + strconv.FormatInt(total, 10)
	}
	return strconv.FormatInt(offset, 10) + "-" + strconv.FormatInt(last-1, 10) + "/" + strconv.FormatInt(total, 10)
}

// applyPrefer reads PostgREST's Prefer header into the plan:
// resolution=merge-duplicates|ignore-duplicates (with on_conflict),
// return=representation (return=rows) and count=exact|planned|estimated.
// A parameter in the query string wins over the header.
func applyPrefer(p *query.Plan, h http.Header) error {
	for _, v := range h.Values("Prefer") {
		for _, pref := range strings.Split(v, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(pref), "=")
			switch k {
			case "resolution":
				if p.Action != query.Insert || p.Resolution != "" {
					continue
				}
				switch val {
				case "merge-duplicates":
					p.Resolution = query.ResolveMerge
				case "ignore-duplicates":
					p.Resolution = query.ResolveIgnore
				default:
					return fault.New(fault.Invalid, "Prefer: resolution=%s is not merge-duplicates or ignore-duplicates", val)
				}
				if len(p.OnConflict) == 0 {
					return fault.New(fault.Invalid, "Prefer: resolution needs the on_conflict parameter: name the unique columns a duplicate is found by")
				}
			case "return":
				if val == "representation" && p.Action != query.Read {
					p.Return = true
				}
			case "count":
				if p.Action == query.Read && p.Count == "" {
					m, err := query.ParseCountMode(val)
					if err != nil {
						return err
					}
					p.Count = m
				}
			}
		}
	}
	return nil
}
