package dialecttest

import "github.com/littlebitlabs/minimal/query"

// Case is one golden rendering case: a validated plan that every dialect
// renders, compared with dialects/testdata/<Name>.golden. Name is also the
// file name, so it is lower-case with underscores.
type Case struct {
	Name string
	Plan *query.Plan
}

func cond(col string, op query.Op, args ...any) *query.Cond {
	return &query.Cond{Column: col, Op: op, Args: args}
}

func read(where query.Expr, cols ...string) *query.Plan {
	return &query.Plan{Action: query.Read, Type: "pg", Schema: "app", Table: "users", Columns: cols, Where: where}
}

var userCols = []string{"id", "name", "email"}

// Cases covers every operator, AND/OR/NOT nesting, ordering, paging,
// projection, inserts with DEFAULT cells, updates, deletes, and identifiers
// that need quoting. Values are a mix of request strings and coerced Go
// values; they must appear only in the argument list.
var Cases = []Case{
	{"read_projection", read(nil, userCols...)},
	{"read_single_column", read(nil, "email")},
	{"read_eq", read(cond("id", query.Eq, int64(42)), userCols...)},
	{"read_ne", read(cond("name", query.Ne, "bob"), userCols...)},
	{"read_comparisons", read(query.And{
		cond("age", query.Gt, int64(18)),
		cond("age", query.Ge, int64(21)),
		cond("score", query.Lt, 9.5),
		cond("score", query.Le, "10"),
	}, userCols...)},
	{"read_like", read(cond("name", query.Like, `a\_b%`), userCols...)},
	{"read_ilike", read(cond("email", query.ILike, "%@example.com"), userCols...)},
	{"read_in", read(cond("id", query.In, int64(1), int64(2), int64(3)), userCols...)},
	{"read_not_in", read(cond("name", query.NotIn, "a,b", `"c"`), userCols...)},
	{"read_in_empty", read(query.And{cond("id", query.In), cond("id", query.NotIn)}, userCols...)},
	// mini-app's array filters: only mi renders them; the others refuse.
	{"read_array_contains", read(query.And{
		cond("tags", query.ArrayContains, "x"),
		cond("tags", query.ArrayNotContains, int64(2)),
	}, userCols...)},
	{"read_between", read(cond("created", query.Between, "2024-01-01", "2024-12-31"), userCols...)},
	{"read_null_tests", read(query.And{
		cond("email", query.IsNull),
		cond("name", query.IsNotNull),
	}, userCols...)},
	{"read_bool_tests", read(query.Or{
		cond("active", query.IsTrue),
		cond("banned", query.IsFalse),
	}, userCols...)},
	{"read_and_or_nesting", read(query.And{
		cond("org", query.Eq, "acme"),
		query.Or{
			cond("role", query.Eq, "admin"),
			query.And{cond("role", query.Eq, "user"), cond("age", query.Ge, int64(18))},
		},
	}, userCols...)},
	{"read_not", read(query.And{
		query.Not{X: cond("id", query.Eq, int64(1))},
		query.Not{X: query.Or{cond("name", query.Like, "x%"), cond("email", query.IsNull)}},
		query.Not{X: query.Not{X: cond("active", query.IsTrue)}},
	}, userCols...)},
	{"read_empty_and_or", read(query.Or{query.And{}, query.Or{}, query.And{cond("id", query.Gt, int64(0))}}, userCols...)},
	{"read_where_empty_and", read(query.And{}, userCols...)},
	{"read_where_empty_or", read(query.Or{}, userCols...)},
	{"read_order_multi", &query.Plan{Action: query.Read, Schema: "app", Table: "users", Columns: userCols,
		Order: []query.Order{{Column: "name"}, {Column: "age", Desc: true}, {Column: "id"}}}},
	{"read_first_page", &query.Plan{Action: query.Read, Schema: "app", Table: "users", Columns: userCols,
		Limit: 10}},
	{"read_paging", &query.Plan{Action: query.Read, Schema: "app", Table: "users", Columns: userCols,
		Where: cond("age", query.Ge, int64(18)), Order: []query.Order{{Column: "id", Desc: true}}, Limit: 25, Offset: 50}},
	{"read_quoted_identifiers", &query.Plan{Action: query.Read, Schema: "Sales Data", Table: `we"ird`,
		Columns: []string{"order", "MixedCase", `a"b`, "select"},
		Where:   query.And{cond("order", query.Eq, "1; DROP TABLE x"), cond("MixedCase", query.Like, `it''s%`)},
		Order:   []query.Order{{Column: "order", Desc: true}, {Column: `a"b`}}, Limit: 5, Offset: 5}},
	// Aggregate reads: count of rows (ClickHouse's count()), every function,
	// groups ordered and paged (SQL Server pages with OFFSET … FETCH), and
	// having over a group column and aggregates (a derived table).
	{"aggregate_count", &query.Plan{Action: query.Read, Schema: "app", Table: "users",
		Aggregates: []query.Aggregate{{Func: query.AggCount, Alias: "n"}}}},
	{"aggregate_functions", &query.Plan{Action: query.Read, Schema: "app", Table: "users",
		Where: cond("age", query.Ge, int64(18)),
		Aggregates: []query.Aggregate{
			{Func: query.AggCount, Column: "email", Alias: "emails"},
			{Func: query.AggSum, Column: "score", Alias: "total"},
			{Func: query.AggAvg, Column: "age", Alias: "mean age"},
			{Func: query.AggMin, Column: "created", Alias: "first"},
			{Func: query.AggMax, Column: "created", Alias: "last"},
		}}},
	{"aggregate_group_by", &query.Plan{Action: query.Read, Schema: "app", Table: "users",
		GroupBy:    []string{"org", "role"},
		Aggregates: []query.Aggregate{{Func: query.AggCount, Alias: "n"}, {Func: query.AggSum, Column: "score", Alias: "total"}},
		Order:      []query.Order{{Column: "org"}, {Column: "n", Desc: true}}, Limit: 10, Offset: 20}},
	{"aggregate_having", &query.Plan{Action: query.Read, Schema: "app", Table: "users",
		Where:      cond("active", query.IsTrue),
		GroupBy:    []string{"org"},
		Aggregates: []query.Aggregate{{Func: query.AggCount, Alias: "n"}, {Func: query.AggAvg, Column: "score", Alias: "mean"}},
		Having: query.And{
			cond("n", query.Gt, int64(2)),
			query.Not{X: cond("org", query.In, "acme", "initech")},
			cond("mean", query.Between, 1.5, "9.5"),
		},
		Order: []query.Order{{Column: "mean", Desc: true}}}},
	{"insert_single", &query.Plan{Action: query.Insert, Schema: "app", Table: "users",
		Columns: []string{"name", "email"}, Rows: [][]any{{"Ann", "ann@example.com"}}}},
	{"insert_multi_default", &query.Plan{Action: query.Insert, Schema: "app", Table: "users",
		Columns: []string{"id", "name", "email"}, Rows: [][]any{
			{query.Default{}, "Ann", "ann@example.com"},
			{int64(7), "Bob", query.Default{}},
			{query.Default{}, "Cy", nil},
		}}},
	{"insert_default_values", &query.Plan{Action: query.Insert, Schema: "app", Table: "events", Rows: [][]any{{}}}},
	{"insert_default_values_many", &query.Plan{Action: query.Insert, Schema: "app", Table: "events", Rows: [][]any{{}, {}}}},
	{"insert_quoted_identifiers", &query.Plan{Action: query.Insert, Schema: "Sales Data", Table: `we"ird`,
		Columns: []string{"order", "MixedCase"}, Rows: [][]any{{int64(1), `"quoted" 'value'`}}}},
	{"update_filtered", &query.Plan{Action: query.Update, Schema: "app", Table: "users",
		Set: []query.Assign{{Column: "name", Value: "Ann"}, {Column: "age", Value: int64(30)}, {Column: "email", Value: nil},
			{Column: "updated", Value: query.Default{}}},
		Where: query.And{cond("id", query.Eq, int64(1)), cond("org", query.In, "a", "b")}}},
	{"update_all", &query.Plan{Action: query.Update, Schema: "app", Table: "users",
		Set: []query.Assign{{Column: "active", Value: false}}, All: true}},
	{"delete_filtered", &query.Plan{Action: query.Delete, Schema: "app", Table: "users",
		Where: query.Or{cond("id", query.Eq, int64(1)), cond("email", query.IsNull)}}},
	{"delete_all", &query.Plan{Action: query.Delete, Schema: "app", Table: "users", All: true}},
	// REST additions: a nested or/and tree, an upsert that merges within a
	// scope or ignores, and an update and a delete returning their rows.
	{"read_or_and", &query.Plan{Action: query.Read, Schema: "app", Table: "users", Columns: []string{"id"},
		Where: query.And{cond("org", query.Eq, "acme"), query.Or{cond("age", query.Lt, int64(18)), query.And{cond("role", query.In, "a", "b"), query.Not{X: cond("email", query.IsNull)}}}},
		Limit: 10}},
	{"upsert_merge_scoped", &query.Plan{Action: query.Insert, Schema: "app", Table: "users",
		Columns: []string{"email", "id", "org"}, Rows: [][]any{{"a@x", int64(1), "acme"}},
		OnConflict: []string{"id"}, Resolution: query.ResolveMerge, Where: cond("org", query.Eq, "acme")}},
	{"upsert_ignore", &query.Plan{Action: query.Insert, Schema: "app", Table: "users",
		Columns: []string{"email", "id"}, Rows: [][]any{{"a@x", int64(1)}, {"b@x", int64(2)}},
		OnConflict: []string{"id"}, Resolution: query.ResolveIgnore}},
	{"update_returning", &query.Plan{Action: query.Update, Schema: "app", Table: "users",
		Set: []query.Assign{{Column: "age", Value: int64(31)}}, Where: cond("id", query.Eq, int64(7)),
		Return: true, Columns: []string{"id", "age"}}},
	{"delete_returning", &query.Plan{Action: query.Delete, Schema: "app", Table: "users",
		Where: cond("id", query.Eq, int64(7)), Return: true, Columns: []string{"id", "email"}}},
	// More REST shapes: the exact count of an or= tree (count=exact), a
	// four-level tree, an upsert on a composite key with a column NULL in
	// every row and an OR scope, an ignore of several rows, an upsert
	// mixing DEFAULT and values in a column, an update of every row and a
	// delete by a tree returning their rows.
	{"count_exact_or", &query.Plan{Action: query.Read, Schema: "app", Table: "users",
		Where:      query.Or{cond("org", query.Eq, "acme"), query.And{cond("age", query.Ge, int64(18)), cond("email", query.IsNotNull)}},
		Aggregates: []query.Aggregate{{Func: query.AggCount, Alias: "__minimal_total"}}}},
	{"read_or_deep", read(query.And{
		query.Or{
			query.And{query.Or{cond("name", query.Eq, "a"), cond("name", query.Like, "b%")}, cond("age", query.Ge, int64(25))},
			query.Not{X: cond("role", query.In, "x", "y")},
		},
		cond("score", query.IsNotNull),
	}, userCols...)},
	{"upsert_merge_composite", &query.Plan{Action: query.Insert, Schema: "app", Table: "members",
		Columns: []string{"org", "email", "role", "note"}, Rows: [][]any{{"acme", "a@x", "admin", nil}, {"acme", "b@x", nil, nil}},
		OnConflict: []string{"org", "email"}, Resolution: query.ResolveMerge,
		Where: query.Or{cond("role", query.Eq, "user"), cond("role", query.IsNull)}}},
	{"upsert_ignore_many", &query.Plan{Action: query.Insert, Schema: "app", Table: "users",
		Columns: []string{"id", "name", "email"}, Rows: [][]any{{int64(1), "Ann", nil}, {int64(2), "Bob", "b@x"}, {int64(3), "Cy", "c@x"}},
		OnConflict: []string{"id"}, Resolution: query.ResolveIgnore}},
	{"upsert_default_mixed", &query.Plan{Action: query.Insert, Schema: "app", Table: "users",
		Columns: []string{"id", "name"}, Rows: [][]any{{int64(1), query.Default{}}, {int64(2), "Bob"}},
		OnConflict: []string{"id"}, Resolution: query.ResolveMerge}},
	{"update_all_returning", &query.Plan{Action: query.Update, Schema: "app", Table: "users",
		Set: []query.Assign{{Column: "active", Value: false}, {Column: "email", Value: nil}}, All: true,
		Return: true, Columns: []string{"id", "name"}}},
	{"delete_returning_or", &query.Plan{Action: query.Delete, Schema: "app", Table: "users",
		Where:  query.Or{cond("id", query.In, int64(1), int64(2)), query.And{cond("name", query.Like, "x%"), query.Not{X: cond("email", query.IsNull)}}},
		Return: true, Columns: []string{"name"}}},
}
