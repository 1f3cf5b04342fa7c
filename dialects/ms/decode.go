package ms

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
)

// Normalization of SQL Server values, by type (the names the driver reports
// for a result column):
//
//	bit                                      bool
//	tinyint, smallint, int, bigint           int64
//	real                                     float64 via its shortest decimal (1.1 stays 1.1)
//	float                                    float64
//	decimal, numeric, money, smallmoney      json.Number with the exact text
//	char, varchar, nchar, nvarchar,
//	text, ntext, xml                         string
//	uniqueidentifier                         string, canonical lower-case
//	date                                     string "2006-01-02"
//	datetime2, smalldatetime                 string "2006-01-02T15:04:05.9999999" (no zone)
//	datetime                                 string "2006-01-02T15:04:05.999", rounded to the millisecond
//	datetimeoffset                           time.Time in UTC
//	time                                     string "15:04:05.9999999"
//	binary, varbinary, image, rowversion     []byte
//	geometry, geography, hierarchyid (CLR)   []byte, their binary serialization
//	sql_variant                              by the type of the value it holds
//
// SQL Server before 2025 has no JSON type: JSON lives in nvarchar columns
// and is a string here; 2025's json type is sent to this driver as
// nvarchar(max) and is a string too. Its values never need the NaN/Infinity spellings: float
// holds neither.

// A decodeFunc turns one non-NULL value as the driver scanned it into a
// neutral cell value.
type decodeFunc func(v any) (any, error)

// kindOf maps a type name (the base system type, any case) to a Kind.
func kindOf(typ string) dialects.Kind {
	switch strings.ToLower(typ) {
	case "bit":
		return dialects.KindBool
	case "tinyint", "smallint", "int", "bigint":
		return dialects.KindInt
	case "real", "float":
		return dialects.KindFloat
	case "decimal", "numeric", "money", "smallmoney":
		return dialects.KindDecimal
	case "char", "varchar", "text", "nchar", "nvarchar", "ntext", "xml", "sysname":
		return dialects.KindString
	case "json":
		// SQL Server 2025's json type reaches clients that do not ask for
		// it (go-mssqldb does not) as nvarchar(max): text both ways.
		return dialects.KindString
	case "uniqueidentifier":
		return dialects.KindUUID
	case "date":
		return dialects.KindDate
	case "datetime", "datetime2", "smalldatetime":
		return dialects.KindTimestamp
	case "datetimeoffset":
		return dialects.KindTimestampTZ
	case "time":
		return dialects.KindTime
	case "binary", "varbinary", "image", "timestamp", "rowversion",
		"geometry", "geography", "hierarchyid":
		return dialects.KindBytes
	}
	return dialects.KindOther
}

// decoderFor picks a result column's decoder once per query from the type
// name the driver reports (DatabaseTypeName: upper case, decimal and numeric
// both "DECIMAL", CLR types by their own name). guidConv tells whether the
// driver already put uniqueidentifier bytes in canonical order (the DSN's
// "guid conversion" option).
func decoderFor(typ string, guidConv bool) (dialects.Kind, decodeFunc) {
	switch typ {
	case "REAL":
		return dialects.KindFloat, decodeReal
	case "DECIMAL", "NUMERIC", "MONEY", "SMALLMONEY":
		return dialects.KindDecimal, decodeDecimal
	case "UNIQUEIDENTIFIER":
		if guidConv {
			return dialects.KindUUID, decodeGUIDCanonical
		}
		return dialects.KindUUID, decodeGUID
	case "DATE":
		return dialects.KindDate, decodeDate
	case "DATETIME2", "SMALLDATETIME":
		return dialects.KindTimestamp, decodeTimestamp
	case "DATETIME":
		return dialects.KindTimestamp, decodeDatetime
	case "DATETIMEOFFSET":
		return dialects.KindTimestampTZ, decodeTimestampTZ
	case "TIME":
		return dialects.KindTime, decodeTime
	case "SQL_VARIANT":
		return dialects.KindOther, decodeAny
	}
	return kindOf(typ), decodeAny
}

// decodeAny keeps the driver's value where it already is a neutral cell
// type and turns the rest into one.
func decodeAny(v any) (any, error) {
	switch x := v.(type) {
	case bool, int64, float64, string, []byte:
		return x, nil
	case time.Time:
		// Only inside sql_variant: its zone is the driver's setting, not
		// the data's, so it is shown without one.
		return formatTimestamp(x), nil
	}
	return fmt.Sprint(v), nil
}

// decodeReal shows a real (float32) as the float64 of its shortest decimal:
// float64(float32(1.1)) would be 1.100000023841858.
func decodeReal(v any) (any, error) {
	f, ok := v.(float64)
	if !ok {
		return nil, fmt.Errorf("ms: real scanned as %T", v)
	}
	var buf [32]byte
	d, err := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], float64(float32(f)), 'g', -1, 32)), 64)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// decodeDecimal keeps the exact text the driver makes of a decimal or
// money value ("-0.50", "12.3400").
func decodeDecimal(v any) (any, error) {
	switch x := v.(type) {
	case []byte:
		return json.Number(x), nil
	case string:
		return json.Number(x), nil
	}
	return nil, fmt.Errorf("ms: decimal scanned as %T", v)
}

// decodeGUID turns the 16 bytes of a uniqueidentifier, as SQL Server sends
// and the driver returns them, into the canonical string. SQL Server stores
// a GUID as Windows' struct: the first three groups (4, 2 and 2 bytes) are
// little-endian, the last two (2 and 6 bytes) in order, so
// 6F9619FF-8B86-D011-B42D-00C04FC964FF arrives as
// FF 19 96 6F 86 8B 11 D0 B4 2D 00 C0 4F C9 64 FF.
func decodeGUID(v any) (any, error) {
	b, ok := v.([]byte)
	if !ok || len(b) != 16 {
		return nil, fmt.Errorf("ms: malformed uniqueidentifier %T of %d bytes", v, len(b))
	}
	return GUIDString(b), nil
}

// decodeGUIDCanonical formats bytes the driver has already reordered.
func decodeGUIDCanonical(v any) (any, error) {
	b, ok := v.([]byte)
	if !ok || len(b) != 16 {
		return nil, fmt.Errorf("ms: malformed uniqueidentifier %T of %d bytes", v, len(b))
	}
	return formatUUID([16]byte(b)), nil
}

// GUIDString converts the 16 bytes of a SQL Server uniqueidentifier in wire
// and storage order (first three groups little-endian) into the canonical
// lower-case form "6f9619ff-8b86-d011-b42d-00c04fc964ff". It panics if b is
// not 16 bytes long.
func GUIDString(b []byte) string {
	u := [16]byte{
		b[3], b[2], b[1], b[0],
		b[5], b[4],
		b[7], b[6],
		b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15],
	}
	return formatUUID(u)
}

func formatUUID(u [16]byte) string {
	var buf [36]byte
	hex.Encode(buf[0:8], u[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], u[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], u[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], u[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], u[10:16])
	return string(buf[:])
}

// The driver decodes date and time types into time.Time values whose wall
// clock is the stored value (in the DSN's "timezone", UTC by default); the
// zone is not part of the data, so it is dropped.

func decodeDate(v any) (any, error) {
	t, ok := v.(time.Time)
	if !ok {
		return nil, fmt.Errorf("ms: date scanned as %T", v)
	}
	return t.Format("2006-01-02"), nil
}

func decodeTimestamp(v any) (any, error) {
	t, ok := v.(time.Time)
	if !ok {
		return nil, fmt.Errorf("ms: datetime scanned as %T", v)
	}
	return formatTimestamp(t), nil
}

// decodeDatetime shows a datetime as SQL Server does, to the millisecond:
// it counts in 1/300 s, which the driver turns into nanoseconds
// (.003 arrives as .0033333).
func decodeDatetime(v any) (any, error) {
	t, ok := v.(time.Time)
	if !ok {
		return nil, fmt.Errorf("ms: datetime scanned as %T", v)
	}
	return t.Round(time.Millisecond).Format("2006-01-02T15:04:05.999"), nil
}

func formatTimestamp(t time.Time) string {
	return t.Format("2006-01-02T15:04:05.9999999")
}

func decodeTime(v any) (any, error) {
	t, ok := v.(time.Time)
	if !ok {
		return nil, fmt.Errorf("ms: time scanned as %T", v)
	}
	return t.Format("15:04:05.9999999"), nil
}

// decodeTimestampTZ gives a datetimeoffset as the instant it names, in UTC
// like PostgreSQL's timestamptz.
func decodeTimestampTZ(v any) (any, error) {
	t, ok := v.(time.Time)
	if !ok {
		return nil, fmt.Errorf("ms: datetimeoffset scanned as %T", v)
	}
	return t.UTC(), nil
}

// dbType spells a column's type as SQL Server's DDL does, from sys.columns
// and sys.types: "nvarchar(20)", "varbinary(max)", "decimal(10,2)",
// "datetime2(3)". typ is the base system type, declared the alias or CLR
// type name when it differs. maxLen is in bytes (-1 for max).
func dbType(declared, typ string, maxLen int, precision, scale int) string {
	if declared != "" && !strings.EqualFold(declared, typ) {
		return declared
	}
	length := func(unit int) string {
		if maxLen < 0 {
			return "(max)"
		}
		return "(" + strconv.Itoa(maxLen/unit) + ")"
	}
	switch t := strings.ToLower(typ); t {
	case "char", "varchar", "binary", "varbinary":
		return t + length(1)
	case "nchar", "nvarchar":
		return t + length(2)
	case "decimal", "numeric":
		return t + "(" + strconv.Itoa(precision) + "," + strconv.Itoa(scale) + ")"
	case "datetime2", "datetimeoffset", "time":
		return t + "(" + strconv.Itoa(scale) + ")"
	default:
		return t
	}
}
