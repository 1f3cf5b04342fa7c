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
