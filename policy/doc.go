// Package policy is the declarative policy file of one project and the
// logic that makes the control-plane store match it: `minimal apply -f
// policy.yaml` and `minimal policy show`.
//
// # The file
//
//	org: demo                      # org name (or abbreviation); created if missing
//	project: demo                  # project name (or abbreviation); created if missing
//	spaces:                        # optional; spaces named by identities are created anyway
//	  - {name: main, mcp: true}    # mcp: the MCP switch; absent leaves it (new spaces: off)
//	identities:                    # created or updated by name; others are left alone
//	  - name: alice
//	    kind: user                 # user (default), service or mcp
//	    space: main                # required
//	    roles: [hr-analyst]        # default []
//	    claims: {department_id: 6} # default {}; free-form, JSON-encodable
//	    key_type: crud             # default crud
//	    enabled: true              # default true
//	templates:
//	  - name: hr-read
//	    rules:
//	      - {object: "pg/public/employees", actions: [read], columns: [id, full_name]}
//	      - {object: "pg/public/salaries", actions: [read, update], effect: deny}
//	bindings:
//	  - {role: hr-analyst, templates: [hr-read]}
//	locks:
//	  - {object: "pg/public/audit_log", mask: "-r--"}
//	scopes:
//	  - {role: hr-analyst, object: "pg/public/employees", filter: "department_id=eq.{claims.department_id}"}
//	custom_apis:                   # see docs/custom-apis.md
//	  - uri: employees/by-department
//	    method: GET                # GET, POST, PUT or DELETE
//	    version: 1                 # 1 or more; versions coexist
//	    type: pg                   # the registered database
//	    schema: public
//	    mode: read                 # read or write
//	    roles: [hr-analyst]        # admin may always call
//	    tables: [employees]        # tables read, for locks
//	    params:
//	      - {name: dept, type: integer, required: true, min: 1}
//	    sql: SELECT id, full_name FROM employees WHERE department_id = :dept ORDER BY id
//
// Decoding is strict: an unknown key, a repeated key or a second YAML
// document is an error naming the line. Objects are type[/schema[/table]]
// glob patterns; a rule's effect defaults to allow and a rule without
// columns grants every column. A scope filter is one or more
// `column=op.value` terms of the REST filter grammar joined by '&', whose
// values may use the variables {identity}, {space}, {org}, {project} and
// {claims.NAME}.
//
// # Semantics
//
// Identities are matched by name within the project; the file sets every
// mutable field of the ones it names (defaults included) and leaves the
// others alone. Each of the four policy sections — templates, bindings,
// locks, scopes — that is present in the file (even as an empty list)
// replaces that section of the project as a whole; a section that is absent
// or null is left as it is. The policy sections are written in one store
// transaction (store.ReplacePolicy); identities and spaces are written one
// by one before it, so a failure part way leaves a state that a rerun of
// the same file completes. custom_apis works the same way: present, it
// replaces the project's custom APIs (matched by uri, method and version)
// in one more transaction (store.ReplaceCustomAPIs), after custom.Check
// accepted every definition.
//
// Apply is idempotent: when the store already matches, it writes nothing
// and the change counter does not move. Export renders a project as a file
// that applies back as nothing to change.
//
// policy imports custom, fault, query and store of the project; it must not import
// engine, permissions, api or auth, which consume what it writes through
// the store.
package policy
