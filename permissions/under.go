package permissions

import (
	"path"
	"strings"

	"github.com/littlebitlabs/minimal/query"
)

// AnywhereUnder is Anywhere narrowed to the objects under prefix ("mi" for
// a type, "mi/app" for a database, "" for the whole project): whether the roles are granted, deny
// rules aside, one of the actions in mask on at least one object under it,
// or with schema the schema action (store.ActionSchema) there. The admin
// role holds every action everywhere. The MCP face lists a tool of one
// type of database only to a caller who could use it there.
func (a *Authorizer) AnywhereUnder(projectID string, roles []string, mask query.Mask, schema bool, prefix string) bool {
	if contains(roles, AdminRole) {
		return true
	}
	a.mu.RLock()
	pp := a.st.projects[projectID]
	a.mu.RUnlock()
	if pp == nil {
		return false
	}
	for _, r := range pp.rules {
		granted := r.actions&mask != 0
		if schema {
			granted = r.schema
		}
		if !r.deny && granted && contains(roles, r.role) && Overlaps(r.pattern, prefix) {
			return true
		}
	}
	return false
}

// Overlaps reports whether a pattern covers at least one object under
// prefix (an object or a shorter path: "mi", "mi/app"): their common
// segments match, each a glob of the pattern against the prefix's name. A
// pattern longer than the prefix names objects below it.
func Overlaps(pattern, prefix string) bool {
	for pattern != "" && prefix != "" {
		var ps, os string
		ps, pattern, _ = strings.Cut(pattern, "/")
		os, prefix, _ = strings.Cut(prefix, "/")
		if ok, err := path.Match(ps, os); err != nil || !ok {
			return false
		}
	}
	return true
}
