package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/observe"
	"github.com/littlebitlabs/minimal/query"
)

var actionOf = map[string]query.Action{
	http.MethodGet: query.Read, http.MethodPost: query.Insert,
	http.MethodPut: query.Update, http.MethodPatch: query.Update, http.MethodDelete: query.Delete,
}

// PlanFromRequest builds the plan an Auto API request describes: the
// address from the path, reads, filters and paging from the query string,
// rows or new values from the body. The REST handlers and
// `minimal policy explain` share it, so both see a request the same way.
// w may be nil (no connection to tell about an oversized body).
func PlanFromRequest(w http.ResponseWriter, r *http.Request, cfg Config) (*query.Plan, error) {
	return planFromRequest(w, r, cfg, nil)
}

// planFromRequest is PlanFromRequest over the request's query string
// parsed as params, or, when params is nil, read from the request as
// r.URL.Query() would read it, without building its url.Values.
func planFromRequest(w http.ResponseWriter, r *http.Request, cfg Config, params url.Values) (*query.Plan, error) {
	action, ok := actionOf[r.Method]
	if !ok {
		return nil, fault.New(fault.Invalid, "method %s is not one of GET, POST, PUT, PATCH, DELETE", r.Method)
	}
	rest, ok := strings.CutPrefix(r.URL.Path, AutoPrefix+"/")
	var segs [5]string
	if !ok || !splitAddress(strings.TrimSuffix(rest, "/"), &segs) {
		return nil, fault.New(fault.NotFound, "no route for %s", r.URL.Path)
	}
	maxPage := cfg.MaxPageSize
	if maxPage == 0 {
		maxPage = DefaultMaxPageSize
	}
	var p *query.Plan
	var err error
	if params != nil {
		p, err = query.FromParams(action, params, query.Limits{MaxPageSize: maxPage})
	} else {
		p, err = query.FromQuery(action, r.URL.RawQuery, query.Limits{MaxPageSize: maxPage})
	}
	if err != nil {
		return nil, err
	}
	p.Org, p.Project, p.Type, p.Schema, p.Table = segs[0], segs[1], segs[2], segs[3], segs[4]
	if err := applyPrefer(p, r.Header); err != nil {
		return nil, err
	}

	switch action {
	case query.Insert:
		body, err := decodeBody(w, r, cfg.MaxBodyBytes, false)
		if err != nil {
			return nil, err
		}
		switch b := body.(type) {
		case map[string]any:
			p.Records = []map[string]any{b}
		case []any:
			if len(b) == 0 {
				return nil, fault.New(fault.Invalid, "request body is an empty array: send at least one row")
			}
			p.Records = make([]map[string]any, len(b))
			for i, row := range b {
				m, ok := row.(map[string]any)
				if !ok {
					return nil, fault.New(fault.Invalid, "row %d of the request body is not a JSON object", i)
				}
				p.Records[i] = m
			}
		default:
			return nil, fault.New(fault.Invalid, "request body must be a JSON object or an array of objects")
		}
	case query.Update:
		body, err := decodeBody(w, r, cfg.MaxBodyBytes, true)
		if err != nil {
			return nil, err
		}
		if body != nil {
			m, ok := body.(map[string]any)
			if !ok {
				return nil, fault.New(fault.Invalid, "update body must be a JSON object of new values")
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p.Set = append(p.Set, query.Assign{Column: k, Value: m[k]})
			}
		}
	}
	return p, nil
}

// splitAddress splits path at each '/' into segs and reports whether it
// has exactly their number of segments (some may be empty).
func splitAddress(path string, segs *[5]string) bool {
	n, start := 0, 0
	for i := 0; i < len(path); i++ {
		if path[i] != '/' {
			continue
		}
		if n == len(segs)-1 {
			return false
		}
		segs[n] = path[start:i]
		n, start = n+1, i+1
	}
	segs[n] = path[start:]
	return n == len(segs)-1
}

// decodeBody reads a JSON body with numbers kept exact. An empty body is
// nil when allowEmpty, an error otherwise.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, allowEmpty bool) (any, error) {
	if limit == 0 {
		limit = DefaultMaxBodyBytes
	}
	if r.Body == nil {
		r.Body = http.NoBody
	}
	if r.ContentLength > limit {
		// Refused on its declared length, before a byte of it is read:
		// a client that asked "Expect: 100-continue" gets the 413
		// instead of a 100 and never sends the body.
		return nil, fault.New(fault.TooLarge, "request body is over the limit of %d bytes", limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fault.New(fault.TooLarge, "request body is over the limit of %d bytes", limit)
		}
		var te *observe.BodyTimeoutError
		if errors.As(err, &te) {
			return nil, fault.Wrap(fault.RequestTimeout, err, "request body not received within %s: the body timeout of this server", te.Timeout)
		}
		return nil, fault.Wrap(fault.Invalid, err, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil, nil
		}
		return nil, fault.New(fault.Invalid, "request body is empty: send JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fault.New(fault.Invalid, "request body is not valid JSON: %s", jsonProblem(err))
	}
	if dec.More() {
		return nil, fault.New(fault.Invalid, "request body holds more than one JSON value")
	}
	return v, nil
}

func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Error() + " at byte " + strconv.FormatInt(se.Offset, 10)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return "malformed input"
}
