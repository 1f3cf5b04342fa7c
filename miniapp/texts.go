package miniapp

// The validation reasons mini-app-mcp words, in one table: each is the
// reason of a `validation error on field '<f>': <reason>` (validationErr),
// a format taking the arguments its comment names. Clients match these
// texts, so they are kept word for word; tests match them from here.
const (
	// reasonUnknownFilterField: the field.
	reasonUnknownFilterField = "unknown field '%s' — only schema-registered fields are allowed in filter"
	// reasonFilterNull: the field.
	reasonFilterNull = "filter value for field '%s' must not be null"
	// reasonFilterNotScalar: the field.
	reasonFilterNotScalar = "filter value for field '%s' must be a scalar (string, number, or boolean), got an object or array"
	// reasonFilterTypeMismatch: the field, its schema type, the value's
	// JSON type.
	reasonFilterTypeMismatch = "filter value for field '%s' has type mismatch: expected %s, got %s"
	// reasonInEmpty: on the in filter's field.
	reasonInEmpty = "In.values must not be empty"
	// reasonOrEmpty and reasonAndEmpty: on field "filters".
	reasonOrEmpty  = "Or.filters must not be empty"
	reasonAndEmpty = "And.filters must not be empty"
	// reasonLikeNotString: the field, its schema type.
	reasonLikeNotString = "like filter is only supported on string fields, but field '%s' has type %s"
	// reasonBatchTables: on field "ops".
	reasonBatchTables = "all ops in a batch must target the same table"
	// reasonMatchEmpty and reasonMatchString: a replace op's match, on
	// field "match" (before any SQL runs).
	reasonMatchEmpty  = "match must be a non-empty object"
	reasonMatchString = "match values must be strings"
)

// The texts of query_aggregate and the alias tools, as mini-app-mcp words
// them; tests match them from here. An aggregator error is shown as
// "aggregator error: <text>" (aggregatorErr), a validation reason inside
// validationErr; the plain texts are answered as they are.
const (
	// aggSourcesEmpty: sources naming no table (an empty multi, or a
	// pattern given to query_aggregate).
	aggSourcesEmpty = "sources must contain at least one table"
	// aggTooManySources: how many sources, and the limit.
	aggTooManySources = "too many sources: %d (SQLITE_MAX_ATTACHED = %d)"
	// aggNestedGroupBy: a group_by whose inner aggregator is a group_by.
	aggNestedGroupBy = "nested GroupBy is not supported in Phase 1"
	// aggPatternEmpty: an alias's pattern source that is "".
	aggPatternEmpty = "SourceSpec::Pattern must not be empty"
	// aggPatternMeta: the pattern and the character (?, [ or ]) it may
	// not use.
	aggPatternMeta = "SourceSpec::Pattern('%s') uses unsupported metachar '%c' (only '*' is supported in Phase 2)"
	// aggPatternZero: the pattern.
	aggPatternZero = "SourceSpec::Pattern('%s') matched zero tables"
	// aggResolvedZero: an aggregating alias whose multi source is empty.
	aggResolvedZero = "alias sources resolved to zero tables"
	// aggRowsNeedAggregator: alias_run of a multi or pattern alias with
	// no aggregator.
	aggRowsNeedAggregator = "Multi/Pattern source aliases require an aggregator (Phase 2 limitation)"

	// reasonIdentEmpty: the label (source_table, aggregator_field,
	// group_by_field), on the field of that name.
	reasonIdentEmpty = "%s must not be empty"
	// reasonIdentStart and reasonIdentChars: the label and the name, on
	// the field named by the label.
	reasonIdentStart = "%s '%s' must start with [A-Za-z_]"
	reasonIdentChars = "%s '%s' must contain only [A-Za-z0-9_]"
	// reasonNotDeclared: the role (aggregator field, group_by field) and
	// the field, on that field.
	reasonNotDeclared = "%s '%s' is not declared in schema"

	// textSourcesAndTable, textFilterAndTemplate, textFilterOrTemplate:
	// alias_create's argument rules.
	textSourcesAndTable   = "`sources` and `table` are mutually exclusive (provide one only)"
	textFilterAndTemplate = "filter and filter_template are mutually exclusive"
	textFilterOrTemplate  = "either filter or filter_template is required"
	// textScopeNotMounted: the scope asked for (Project or User).
	textScopeNotMounted = "alias_create: requested scope %s is not mounted on this server. Either omit the `scope` argument (the server will auto-select a mounted scope) or configure the corresponding directory (MINI_APP_PROJECT_DIR / MINI_APP_USER_DIR)."

	// textAliasNotFound, textAliasExists, textAliasParamsRequired: the
	// alias name. textAliasTemplate: what went wrong.
	textAliasNotFound       = "alias not found: %s"
	textAliasExists         = "alias already exists: %s"
	textAliasParamsRequired = "alias '%s' requires params but none were provided"
	textAliasTemplate       = "alias template render error: %s"
	// reasonParamsString: alias_run's params given as a string that is
	// not JSON; the parse error (ALIAS_TEMPLATE_ERROR).
	reasonParamsString = "params arrived as a string but failed JSON parse: %s"
	// reasonRenderedFilter: the rendered template is not a ListFilter;
	// the parse error (SCHEMA_ERROR).
	reasonRenderedFilter = "rendered filter parse error: %s"
	// reasonFilterParse: a stored plain filter that is not a ListFilter;
	// the parse error (SCHEMA_ERROR).
	reasonFilterParse = "filter parse error: %s"

	// The arguments that do not deserialize (-32602), after
	// "invalid params: ": the value given.
	argsSourcesKind    = "sources: unknown variant `%s`, expected one of `single`, `multi`, `pattern`"
	argsAggregatorKind = "aggregator: unknown variant `%s`, expected one of `count`, `sum`, `avg`, `min`, `max`, `group_by`"
	argsScope          = "scope: unknown variant `%s`, expected `project` or `user`"
	// argsMissing: the argument and its missing member.
	argsMissing = "%s: missing field `%s`"
)
