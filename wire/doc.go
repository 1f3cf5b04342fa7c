// Package wire is what every face of the gateway puts on the wire: the
// response encoders (json, ndjson, csv, xml, yaml, bson) and the one table
// from an error kind (package fault) to an HTTP status and its headers.
// The REST face (api) and the MCP face (mcp) both use it and never import
// each other, so a result is encoded, and an error answered, the same way
// on both. wire imports fault and dialects (the Rows it streams) only.
//
// # Errors
//
// Status gives the HTTP status of a fault.Kind; SetErrorHeaders adds what
// an error answer of that kind carries (Retry-After on 503, the Bearer
// challenge on 401); WriteError writes the error envelope
// {"error":{"code","message","request_id"}}.
//
// # Encoders
//
// Stream writes the read results in the response formats the gateway
// offers: json, ndjson, csv, xml, yaml and bson.
//
// Stream is the hot path of every read, so the encoders avoid reflection:
// each cell is switched on its concrete type (the set documented by
// dialects.Rows) and appended with strconv-style Append functions into one
// reusable byte buffer. The buffer is handed to the writer whenever it holds
// more than about 32 KiB, so memory stays flat however many rows a result
// has, and a row costs no allocation in the common case.
//
// Cell values map onto the formats as follows:
//
//   - nil is null (json, yaml, bson), an empty unquoted field (csv) or an
//     empty element with the attribute null="true" (xml).
//   - Integers of every size keep their exact digits; float64 and float32
//     are written like encoding/json writes them. NaN and ±Inf, which JSON
//     cannot hold, become the strings "NaN", "Infinity" and "-Infinity"
//     (yaml writes .nan, .inf and -.inf).
//   - json.Number is an exact decimal and is written as its literal; a
//     literal that is not a valid JSON number is written as a string.
//   - time.Time is written in RFC 3339 with trimmed nanoseconds
//     (time.RFC3339Nano); bson writes a UTC datetime in milliseconds.
//   - []byte is standard base64 text; bson writes binary subtype 0.
//   - json.RawMessage is inserted as compact JSON in json and ndjson and as
//     compact JSON text in csv; xml, yaml and bson write its text as a string.
//     Raw JSON that is not valid is written as a string.
//   - []any is an array and map[string]any an object with sorted keys.
//   - Anything else is written as the string fmt.Sprint gives.
//
// The shapes of the formats:
//
//   - json: {"data":[{"col":v,...},...],"page":{"number":N,"size":S}} and a
//     newline; columns in the order of Rows.Columns, page left out when nil.
//   - ndjson: one JSON object per row, each ended by a newline.
//   - csv: a header line of column names, then one record per row, quoted
//     by the rules of encoding/csv, lines ended by "\n". As in PostgreSQL's
//     CSV, null is an empty unquoted field and the empty string is "".
//   - xml: <response><data><row><col>v</col>...</row>...</data>
//     <page number="N" size="S"/></response> after an XML declaration.
//   - yaml: "data:" with one block mapping per row ("data: []" when there
//     are none), then "page:"; strings are always double-quoted.
//   - bson: one document per row, concatenated like a mongodump .bson file.
//
// Every text format produces valid UTF-8: a byte that is not valid UTF-8 is
// replaced by U+FFFD, one replacement per byte, as encoding/json does.
package wire
