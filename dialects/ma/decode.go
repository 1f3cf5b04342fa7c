package ma

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
)

// A decodeFunc turns one non-NULL value, as the driver hands it to a
// sql.RawBytes, into a neutral cell value (see dialects.Rows). It must copy
// what it keeps: src is only valid until the next row.
type decodeFunc func(src []byte) (any, error)

// Normalization of MariaDB/MySQL values, by type:
//
//	tinyint(1), bool                  bool (any non-zero value is true)
//	tinyint … bigint, year            int64
//	bigint unsigned                   json.Number (exact; it may exceed int64)
//	bit(n)                            int64, json.Number above 2⁶³-1
//	decimal                           json.Number with the exact text
//	float                             float64 of its shortest decimal (1.1 stays 1.1)
//	double                            float64
//	char, varchar, text, enum, set    string
//	uuid (MariaDB 10.7+)              string, canonical lower-case
//	date                              string "2006-01-02"
//	datetime                          string "2006-01-02T15:04:05.999999"
//	timestamp                         time.Time in UTC
//	time                              string "15:04:05.999999" (may be negative or exceed 24h)
//	json (MySQL), MariaDB JSON        json.RawMessage as the server stores it
//	binary, varbinary, blob, geometry []byte
//
// Zero dates ("0000-00-00", allowed by some sql_modes) have no time.Time and
// keep the server's spelling; a zero timestamp is the string
// "0000-00-00T00:00:00".

// pickDecoder chooses a result column's decoder and kind from the type the
// protocol reports (typ, as sql.ColumnType.DatabaseTypeName spells it) and
// the kind introspection found for that column (hint, KindOther when
// unknown). The protocol cannot tell a tinyint(1) from a tinyint, nor
// MariaDB's JSON from longtext; introspection can, but may be stale, so the
// hint only refines a compatible protocol type.
func pickDecoder(typ string, hint dialects.Kind) (decodeFunc, dialects.Kind) {
	switch typ {
	case "TINYINT":
		if hint == dialects.KindBool {
			return decBool, dialects.KindBool
		}
		return decInt, dialects.KindInt
	case "UNSIGNED TINYINT", "SMALLINT", "UNSIGNED SMALLINT", "MEDIUMINT", "UNSIGNED MEDIUMINT",
		"INT", "UNSIGNED INT", "BIGINT", "YEAR":
		if hint == dialects.KindBool { // tinyint(1) unsigned
			return decBool, dialects.KindBool
		}
		return decInt, dialects.KindInt
	case "UNSIGNED BIGINT", "DECIMAL":
		return decNumber, dialects.KindDecimal
	case "BIT":
		return decBit, dialects.KindInt
	case "FLOAT":
		return decFloat32, dialects.KindFloat
	case "DOUBLE":
		return decFloat, dialects.KindFloat
	case "DATE":
		return decString, dialects.KindDate
	case "DATETIME":
		return decDateTime, dialects.KindTimestamp
	case "TIMESTAMP":
		return decTimestamp, dialects.KindTimestampTZ
	case "TIME":
		return decTime, dialects.KindTime
	case "JSON":
		return decJSON, dialects.KindJSON
	case "NULL":
		return decString, dialects.KindOther // every value is NULL
	case "CHAR", "VARCHAR", "TEXT", "MEDIUMTEXT", "LONGTEXT", "TINYTEXT", "ENUM", "SET":
		switch hint {
		case dialects.KindJSON:
			return decJSON, dialects.KindJSON
		case dialects.KindUUID:
			return decUUID, dialects.KindUUID
		}
		return decString, dialects.KindString
	case "BINARY", "VARBINARY", "BLOB", "MEDIUMBLOB", "LONGBLOB", "TINYBLOB", "GEOMETRY":
		if hint == dialects.KindUUID {
			// MariaDB's uuid type travels as a binary-collated string of
			// its text form.
			return decUUID, dialects.KindUUID
		}
		return decBytes, dialects.KindBytes
	}
	switch hint {
	case dialects.KindUUID:
		return decUUID, dialects.KindUUID
	case dialects.KindJSON:
		return decJSON, dialects.KindJSON
	}
	// Types this package does not know (inet6, vector, …): their text.
	return decString, dialects.KindOther
}

var errMalformed = errors.New("ma: malformed value")

func decString(src []byte) (any, error) { return string(src), nil }

func decUUID(src []byte) (any, error) { return strings.ToLower(string(src)), nil }

func decBytes(src []byte) (any, error) {
	out := make([]byte, len(src))
	copy(out, src)
	return out, nil
}

func decJSON(src []byte) (any, error) {
	out := make(json.RawMessage, len(src))
	copy(out, src)
	return out, nil
}

func decNumber(src []byte) (any, error) { return json.Number(src), nil }

func decInt(src []byte) (any, error) {
	n, err := strconv.ParseInt(string(src), 10, 64)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func decBool(src []byte) (any, error) {
	switch string(src) {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	// tinyint(1) holds -128…127; anything but 0 is true, as in SQL.
	n, err := strconv.ParseInt(string(src), 10, 64)
	if err != nil {
		return nil, err
	}
	return n != 0, nil
}

// decBit reads BIT(n), sent as big-endian bytes in both protocols.
func decBit(src []byte) (any, error) {
	if len(src) > 8 {
		return nil, errMalformed
	}
	var u uint64
	for _, c := range src {
		u = u<<8 | uint64(c)
	}
	if u > math.MaxInt64 {
		return json.Number(strconv.FormatUint(u, 10)), nil
	}
	return int64(u), nil
}

func decFloat(src []byte) (any, error) {
	f, err := strconv.ParseFloat(string(src), 64)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// decFloat32 reads FLOAT. Both protocols give its shortest decimal (the
// binary one through database/sql's formatting of a float32), whose float64
// is the value a reader expects: 1.1, not 1.100000023841858.
func decFloat32(src []byte) (any, error) { return decFloat(src) }

// decDateTime turns "2006-01-02 15:04:05.000000" into
// "2006-01-02T15:04:05", the fraction trimmed of trailing zeros.
func decDateTime(src []byte) (any, error) {
	var buf [32]byte
	b := append(buf[:0], src...)
	if len(b) > 10 && b[10] == ' ' {
		b[10] = 'T'
	}
	return string(trimFraction(b)), nil
}

func decTime(src []byte) (any, error) {
	var buf [24]byte
	return string(trimFraction(append(buf[:0], src...))), nil
}

// trimFraction drops trailing zeros of a fractional second, and the point
// when nothing is left of it.
func trimFraction(b []byte) []byte {
	dot := -1
	for i := len(b) - 1; i >= 0 && i >= len(b)-7; i-- {
		if b[i] == '.' {
			dot = i
			break
		}
	}
	if dot < 0 {
		return b
	}
	n := len(b)
	for n > dot+1 && b[n-1] == '0' {
		n--
	}
	if n == dot+1 {
		n = dot
	}
	return b[:n]
}

// decTimestamp reads a TIMESTAMP, which the session shows in UTC (Source
// sets time_zone to '+00:00' on every connection).
func decTimestamp(src []byte) (any, error) {
	t, ok := parseDateTime(src)
	if !ok {
		if isZeroDate(src) {
			return decDateTime(src)
		}
		return nil, fmt.Errorf("ma: malformed timestamp %q", src)
	}
	return t, nil
}

// parseDateTime parses "2006-01-02 15:04:05[.ffffff]" as UTC without
// going through time.Parse's layout machinery.
func parseDateTime(s []byte) (time.Time, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(b []byte) (int, bool) {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(s[0:4])
	mo, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	h, ok4 := num(s[11:13])
	mi, ok5 := num(s[14:16])
	sec, ok6 := num(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	ns := 0
	if len(s) > 19 {
		frac := s[20:]
		if s[19] != '.' || len(frac) == 0 || len(frac) > 9 {
			return time.Time{}, false
		}
		f, ok := num(frac)
		if !ok {
			return time.Time{}, false
		}
		for i := len(frac); i < 9; i++ {
			f *= 10
		}
		ns = f
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC), true
}

func isZeroDate(s []byte) bool {
	return len(s) >= 10 && string(s[:10]) == "0000-00-00"
}
