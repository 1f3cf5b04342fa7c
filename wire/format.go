package wire

import (
	"strings"

	"github.com/littlebitlabs/minimal/fault"
)

// Format is a response format, as named by the format query parameter.
type Format string

// The response formats.
const (
	JSON   Format = "json"   // {"data":[...],"page":{...}}
	NDJSON Format = "ndjson" // one JSON object per line
	CSV    Format = "csv"    // header line, then one record per row
	XML    Format = "xml"    // <response><data><row>...</row></data></response>
	YAML   Format = "yaml"   // data: [...] and page: {...} in block style
	BSON   Format = "bson"   // one BSON document per row, like a .bson dump
)

// allowed lists the formats in the order error messages name them.
const allowed = "json, ndjson, csv, xml, yaml, bson"

// ParseFormat reads the value of the format query parameter. The empty
// string means JSON; names are matched without regard to case. An unknown
// name is a *fault.Error of kind Invalid naming the parameter and the
// allowed values.
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return JSON, nil
	}
	for _, f := range [...]Format{JSON, NDJSON, CSV, XML, YAML, BSON} {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	return "", fault.New(fault.Invalid, "invalid value %q for parameter format: allowed values are %s", s, allowed)
}

// ContentType is the media type of the format for the Content-Type header.
// The zero Format is JSON; an unknown format is application/octet-stream.
func (f Format) ContentType() string {
	switch f {
	case JSON, "":
		return "application/json"
	case NDJSON:
		return "application/x-ndjson"
	case CSV:
		return "text/csv; charset=utf-8"
	case XML:
		return "application/xml"
	case YAML:
		return "application/yaml"
	case BSON:
		return "application/bson"
	}
	return "application/octet-stream"
}

// Page is the page a read answered: its 0-based Number and its Size, as
// given by the pg and ps parameters. Formats with an envelope (json, xml,
// yaml) write it after the rows; the others have nowhere to put it.
type Page struct {
	Number, Size int64
	// Total, when not nil, is the count of the read's rows over every
	// page (count=exact|planned|estimated), written as "total".
	Total *int64
}
