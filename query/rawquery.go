package query

import (
	"net/url"
	"slices"
	"strings"
)

// quickParams is the most pairs a query string may hold to be read without
// building its url.Values (FromQuery, FirstValue).
const quickParams = 16

// quick is whether url.ParseQuery takes a query of quickParams pairs: it
// refuses a query of more pairs than the urlmaxqueryparams GODEBUG setting
// allows (10000 unset) and the quick road must refuse what it refuses.
// Read once: the server does not change GODEBUG while it runs.
var quick = func() bool {
	_, err := url.ParseQuery(strings.Repeat("&", quickParams-1))
	return err == nil
}()

// slowQuery reports whether raw is read through url.ParseQuery.
func slowQuery(raw string) bool {
	return !quick || strings.Count(raw, "&") >= quickParams
}

// nextPair returns the first pair of raw that url.ParseQuery keeps, its key
// and value unescaped, and the query after it; ok is false when none is
// left. As (*url.URL).Query, it leaves out a pair whose key holds a
// semicolon and one whose key or value is badly escaped.
func nextPair(raw string) (key, value, rest string, ok bool) {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv == "" || strings.Contains(kv, ";") {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			continue
		}
		v, err = url.QueryUnescape(v)
		if err != nil {
			continue
		}
		return k, v, raw, true
	}
	return "", "", "", false
}

// FirstValue is url.Values.Get of a raw URL query string as
// (*url.URL).Query reads it: the first value of name, or "".
func FirstValue(raw, name string) string {
	// Without escapes ('%', '+') a key is its raw text: a query that does
	// not hold name holds no key name (a read without "format", the
	// common case, is not walked pair by pair).
	if !strings.Contains(raw, name) && !strings.ContainsAny(raw, "%+") {
		return ""
	}
	if slowQuery(raw) {
		v, _ := url.ParseQuery(raw)
		return v.Get(name)
	}
	for {
		k, v, rest, ok := nextPair(raw)
		if !ok {
			return ""
		}
		if k == name {
			return v
		}
		raw = rest
	}
}

// FromQuery is FromParams over a raw URL query string, read as
// (*url.URL).Query reads it, without building its url.Values.
func FromQuery(action Action, raw string, lim Limits) (*Plan, error) {
	if slowQuery(raw) {
		v, _ := url.ParseQuery(raw)
		return FromParams(action, v, lim)
	}
	type pair struct{ key, value string }
	var pairBuf [quickParams]pair
	pairs := pairBuf[:0]
	for {
		k, v, rest, ok := nextPair(raw)
		if !ok {
			break
		}
		pairs = append(pairs, pair{k, v})
		raw = rest
	}
	// A name's values stay in the order given, as url.Values keeps them.
	slices.SortStableFunc(pairs, func(a, b pair) int { return strings.Compare(a.key, b.key) })
	// Names and values are assigned into arrays of this frame rather
	// than appended, so that they stay on the stack.
	var vals [quickParams]string
	for i, pr := range pairs {
		vals[i] = pr.value
	}
	var names [quickParams]string
	var values [quickParams][]string
	n := 0
	for i := 0; i < len(pairs); n++ {
		j := i + 1
		for j < len(pairs) && pairs[j].key == pairs[i].key {
			j++
		}
		names[n], values[n] = pairs[i].key, vals[i:j]
		i = j
	}
	return fromParams(action, names[:n], values[:n], lim)
}
