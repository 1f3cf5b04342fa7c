package engine

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// prepareDocs readies a plan that carries JSON documents (Docs) or asks
// for them (Doc) for the gates: it runs after authorize and before
// validate, so that everything after it judges the plan as any other.
//
//   - Only a dialects.DocumentStore source takes such plans.
//   - DocKeys becomes the grant's column list, nil when it has none; the
//     columns the store fills itself (HasDefault: id and the timestamps of
//     mi) are the row's own, not document keys (docField), and are left
//     out.
//   - An insert's documents become its Records: the keys that name the
//     table's columns. An update's document becomes its Set: every key that
//     names a column, and with DocReplace null for each visible column the
//     document leaves out (unless the database fills it). A key naming no
//     column is kept in the document only for a caller without a column
//     limit on the table; for any other it is an unknown column, as a key
//     naming a column the caller may not see is (validate refuses those).
//   - A Doc read may order by a key no column names, again only without a
//     column limit (validate).
func prepareDocs(plan *query.Plan, g *grant) error {
	plan.DocKeys = nil
	if len(plan.Docs) == 0 && !plan.Doc && !plan.DocReplace {
		return nil
	}
	if ds, ok := g.src.(dialects.DocumentStore); !ok || !ds.Documents() {
		return fault.New(fault.Unsupported, "this database does not store rows as JSON documents")
	}
	if g.view != g.table {
		plan.DocKeys = []string{}
		for _, c := range g.view.Columns {
			if !c.HasDefault {
				plan.DocKeys = append(plan.DocKeys, c.Name)
			}
		}
	}
	switch plan.Action {
	case query.Read:
		if len(plan.Docs) > 0 || plan.DocReplace {
			return fault.New(fault.Invalid, "a read carries no documents")
		}
		if plan.IsAggregate() {
			return fault.New(fault.Invalid, "an aggregate read answers no documents")
		}
	case query.Insert:
		if plan.Doc || plan.DocReplace {
			return fault.New(fault.Invalid, "an insert answers no documents and replaces none")
		}
		if len(plan.Records) > 0 || len(plan.Rows) > 0 || len(plan.Columns) > 0 {
			return fault.New(fault.Invalid, "an insert carries documents or rows, not both")
		}
		recs := make([]map[string]any, len(plan.Docs))
		for i, d := range plan.Docs {
			obj, err := docObject(d)
			if err != nil {
				return rowError(plan, i, err)
			}
			rec := make(map[string]any, len(obj))
			for _, k := range sortedKeys(obj) {
				if docField(g.table, k) {
					rec[k] = obj[k]
				} else if plan.DocKeys != nil {
					return rowError(plan, i, unknownColumn(k))
				}
			}
			recs[i] = rec
		}
		plan.Records = recs
	case query.Update:
		if plan.Doc {
			return fault.New(fault.Invalid, "an update answers no documents")
		}
		if len(plan.Docs) != 1 || len(plan.Set) > 0 {
			return fault.New(fault.Invalid, "an update carries one document and no other new values")
		}
		obj, err := docObject(plan.Docs[0])
		if err != nil {
			return err
		}
		for _, k := range sortedKeys(obj) {
			if docField(g.table, k) {
				plan.Set = append(plan.Set, query.Assign{Column: k, Value: obj[k]})
			} else if plan.DocKeys != nil {
				return unknownColumn(k)
			}
		}
		if plan.DocReplace {
			for _, c := range g.view.Columns {
				if _, ok := obj[c.Name]; !ok && !c.HasDefault {
					plan.Set = append(plan.Set, query.Assign{Column: c.Name, Value: nil})
				}
			}
		}
	default:
		return fault.New(fault.Invalid, "a %s carries no documents", plan.Action)
	}
	return nil
}

// docField reports whether a document key is one of the table's columns.
// A column the store fills itself (HasDefault: a document table's id and
// timestamps) is the row's own, apart from its document: a key of that
// name is a key like any other the columns do not name.
func docField(t *dialects.Table, k string) bool {
	c, ok := t.Column(k)
	return ok && !c.HasDefault
}

// docObject decodes a document, which must be one JSON object; numbers
// stay json.Number.
func docObject(d json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(d))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
		return nil, fault.New(fault.Invalid, "a document must be one JSON object")
	}
	return obj, nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// rowError names the row of a multi-row insert in err's message.
func rowError(plan *query.Plan, i int, err error) error {
	if len(plan.Docs) < 2 {
		return err
	}
	fe := fault.As(err)
	return fault.New(fe.Kind, "row %d: %s", i, fe.Message)
}
