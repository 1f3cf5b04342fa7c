package permissions

import (
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Vars are the values a row scope may refer to, taken from the verified
// token and the identity: {identity}, {space}, {org}, {project} and
// {claims.NAME}.
type Vars struct {
	Identity, Space, Org, Project string
	Claims                        map[string]any
}

var varRef = regexp.MustCompile(`\{([A-Za-z0-9_.\-]*)\}`)

// ScopeFilter is a parsed row-scope filter whose values may still hold
// variables. Instantiate it for a caller to get a query.Expr.
type ScopeFilter struct {
	src   string
	conds []*query.Cond // AND-ed; args may hold {vars}
	neg   []bool
}

// String returns the filter as written.
func (s *ScopeFilter) String() string { return s.src }

// ParseScope parses a row-scope filter: one or more `column=op.value` terms
// of the REST filter grammar joined by '&', whose values may use
// {identity}, {space}, {org}, {project} and {claims.NAME}.
func ParseScope(filter string) (*ScopeFilter, error) {
	if strings.TrimSpace(filter) == "" {
		return nil, fault.New(fault.Invalid, "scope filter is empty")
	}
	sf := &ScopeFilter{src: filter}
	for _, term := range strings.Split(filter, "&") {
		col, val, ok := strings.Cut(term, "=")
		if !ok || col == "" {
			return nil, fault.New(fault.Invalid, "scope filter term %q is not column=op.value", term)
		}
		if u, err := url.QueryUnescape(val); err == nil {
			val = u
		}
		for _, m := range varRef.FindAllStringSubmatch(val, -1) {
			if !knownVar(m[1]) {
				return nil, fault.New(fault.Invalid, "scope filter %q: unknown variable {%s} (use {identity}, {space}, {org}, {project} or {claims.NAME})", filter, m[1])
			}
		}
		e, err := query.ParseFilter(col, val)
		if err != nil {
			return nil, fault.New(fault.Invalid, "scope filter %q: %s", filter, fault.As(err).Message)
		}
		neg := false
		if n, ok := e.(query.Not); ok {
			e, neg = n.X, true
		}
		sf.conds = append(sf.conds, e.(*query.Cond))
		sf.neg = append(sf.neg, neg)
	}
	return sf, nil
}

func knownVar(name string) bool {
	switch name {
	case "identity", "space", "org", "project":
		return true
	}
	rest, ok := strings.CutPrefix(name, "claims.")
	return ok && rest != ""
}

// Columns lists the columns the filter refers to.
func (s *ScopeFilter) Columns() []string {
	out := make([]string, len(s.conds))
	for i, c := range s.conds {
		out[i] = c.Column
	}
	return out
}

// Instantiate substitutes the caller's variables. A variable the caller
// does not carry is an error: the call must be refused (fail closed).
func (s *ScopeFilter) Instantiate(v Vars) (query.Expr, error) {
	out := make(query.And, 0, len(s.conds))
	for i, c := range s.conds {
		nc := &query.Cond{Column: c.Column, Op: c.Op, Args: make([]any, 0, len(c.Args))}
		for _, a := range c.Args {
			str, _ := a.(string)
			// A list item that is exactly an array claim expands to its items.
			if (c.Op == query.In || c.Op == query.NotIn) && isWholeVar(str) {
				if items, ok := v.lookupList(str[1 : len(str)-1]); ok {
					for _, it := range items {
						nc.Args = append(nc.Args, it)
					}
					continue
				}
			}
			like := c.Op == query.Like || c.Op == query.ILike
			sub, err := v.substitute(str, like)
			if err != nil {
				return nil, err
			}
			nc.Args = append(nc.Args, sub)
		}
		if s.neg[i] {
			out = append(out, query.Not{X: nc})
		} else {
			out = append(out, nc)
		}
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

func isWholeVar(s string) bool {
	return len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' && strings.Count(s, "{") == 1
}

// substitute replaces every {name} reference (varRef's syntax) by the
// caller's value. It runs on every scoped request, so it scans by hand
// instead of using the regular expression.
func (v Vars) substitute(s string, like bool) (string, error) {
	if strings.IndexByte(s, '{') < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i+1:], '}')
		if j < 0 || !isVarName(s[i+1:i+1+j]) {
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		ref := s[i : i+2+j]
		val, ok := v.lookup(ref[1 : len(ref)-1])
		if !ok {
			return "", fault.New(fault.Forbidden, "row scope needs %s, which the token does not carry", ref)
		}
		if like {
			val = query.LikePattern(strings.ReplaceAll(val, "*", `\*`))
		}
		b.WriteString(s[:i])
		b.WriteString(val)
		s = s[i+2+j:]
	}
}

// isVarName reports whether s matches varRef's name class [A-Za-z0-9_.-]*.
func isVarName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func (v Vars) lookup(name string) (string, bool) {
	switch name {
	case "identity":
		return v.Identity, v.Identity != ""
	case "space":
		return v.Space, v.Space != ""
	case "org":
		return v.Org, v.Org != ""
	case "project":
		return v.Project, v.Project != ""
	}
	claim, ok := strings.CutPrefix(name, "claims.")
	if !ok {
		return "", false
	}
	val, ok := v.Claims[claim]
	if !ok || val == nil {
		return "", false
	}
	return scalarText(val)
}

func (v Vars) lookupList(name string) ([]string, bool) {
	claim, ok := strings.CutPrefix(name, "claims.")
	if !ok {
		return nil, false
	}
	arr, ok := v.Claims[claim].([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, it := range arr {
		s, ok := scalarText(it)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, false
	}
	return out, true
}

func scalarText(val any) (string, bool) {
	switch x := val.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case bool:
		return strconv.FormatBool(x), true
	case interface{ String() string }:
		return x.String(), true
	}
	return "", false
}

// sortedUnique returns the sorted distinct strings of a list.
func sortedUnique(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	j := 0
	for i, s := range out {
		if i == 0 || s != out[j-1] {
			out[j] = s
			j++
		}
	}
	return out[:j]
}
