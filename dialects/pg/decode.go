package pg

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/littlebitlabs/minimal/dialects"
)

// A decodeFunc turns one non-NULL wire value into a neutral cell value (see
// dialects.Rows). It must copy what it keeps: src is only valid until the
// next row.
type decodeFunc func(src []byte) (any, error)

// codec is what the package knows about one PostgreSQL type: its kind, its
// name (spelled as format_type does, without modifiers), and how to decode it from the binary and the text format. bin is nil
// for types always fetched as text (their text form is the value we want).
type codec struct {
	name string
	kind dialects.Kind
	bin  decodeFunc
	text decodeFunc
	// copied tells how rows.Values takes the text form, when it is the
	// value itself (text types, numeric): into the row's one copy of its
	// text rather than a copy of its own (see cellText).
	copied cellText
}

// cellText is how a cell sent as text is taken as is (rows.Values): not
// (its decoder), as a string, or as numeric's json.Number.
type cellText uint8

const (
	decoded cellText = iota
	asString
	asNumber
)

// Normalization of PostgreSQL values, by type:
//
//	int2, int4, int8                 int64
//	float4, float8                   float64 (float4 via its shortest decimal); NaN, ±Infinity as string
//	numeric                          json.Number with the exact text; NaN, ±Infinity as string
//	bool                             bool
//	text, varchar, bpchar, name, …   string
//	uuid                             string, canonical lower-case
//	date                             string "2006-01-02"
//	timestamp                        string "2006-01-02T15:04:05.999999"
//	timestamptz                      time.Time in UTC
//	time                             string "15:04:05.999999"
//	json, jsonb                      json.RawMessage as the server prints it
//	bytea                            []byte
//	arrays                           []any of elements normalized alike (nested per dimension)
//	anything else                    string of its text form
//
// Dates and timestamps outside years 1-9999 keep PostgreSQL's spelling
// (" BC" suffix, more year digits), and infinity stays "infinity".
var codecs = map[uint32]*codec{}

// arrayInfo describes an array type: its element type and delimiter.
type arrayInfo struct {
	elem  uint32
	delim byte
}

// arrays maps the array types we know to their element types.
var arrays = map[uint32]arrayInfo{}

// resultFormats asks the server for binary only where we decode binary
// natively (fixed-size numbers, uuid, bytea, dates and times, and arrays of
// these); everything else comes as text, which is already the value we want
// (numeric, json, text types) or the fallback for other types.
var resultFormats = pgx.QueryResultFormatsByOID{}

func init() {
	str := textString
	add := func(oid uint32, name string, kind dialects.Kind, bin, text decodeFunc) {
		codecs[oid] = &codec{name: name, kind: kind, bin: bin, text: text}
	}
	add(pgtype.BoolOID, "boolean", dialects.KindBool, binBool, textBool)
	add(pgtype.Int2OID, "smallint", dialects.KindInt, binInt2, textInt)
	add(pgtype.Int4OID, "integer", dialects.KindInt, binInt4, textInt)
	add(pgtype.Int8OID, "bigint", dialects.KindInt, binInt8, textInt)
	add(pgtype.Float4OID, "real", dialects.KindFloat, binFloat4, textFloat)
	add(pgtype.Float8OID, "double precision", dialects.KindFloat, binFloat8, textFloat)
	add(pgtype.NumericOID, "numeric", dialects.KindDecimal, nil, textNumeric)
	codecs[pgtype.NumericOID].copied = asNumber
	add(pgtype.TextOID, "text", dialects.KindString, nil, str)
	add(pgtype.VarcharOID, "character varying", dialects.KindString, nil, str)
	add(pgtype.BPCharOID, "character", dialects.KindString, nil, str)
	add(pgtype.NameOID, "name", dialects.KindString, nil, str)
	add(pgtype.QCharOID, `"char"`, dialects.KindString, nil, str)
	add(pgtype.UUIDOID, "uuid", dialects.KindUUID, binUUID, str)
	add(pgtype.DateOID, "date", dialects.KindDate, binDate, str)
	add(pgtype.TimeOID, "time without time zone", dialects.KindTime, binTime, str)
	add(pgtype.TimetzOID, "time with time zone", dialects.KindTime, nil, str)
	add(pgtype.TimestampOID, "timestamp without time zone", dialects.KindTimestamp, binTimestamp, textTimestamp)
	add(pgtype.TimestamptzOID, "timestamp with time zone", dialects.KindTimestampTZ, binTimestamptz, textTimestamptz)
	add(pgtype.JSONOID, "json", dialects.KindJSON, nil, textJSON)
	add(pgtype.JSONBOID, "jsonb", dialects.KindJSON, nil, textJSON)
	add(pgtype.ByteaOID, "bytea", dialects.KindBytes, binBytea, textBytea)
	add(pgtype.IntervalOID, "interval", dialects.KindOther, nil, str)
	add(pgtype.OIDOID, "oid", dialects.KindOther, nil, str)
	add(pgtype.XMLOID, "xml", dialects.KindOther, nil, str)
	add(pgtype.InetOID, "inet", dialects.KindOther, nil, str)
	add(pgtype.CIDROID, "cidr", dialects.KindOther, nil, str)
	add(pgtype.MacaddrOID, "macaddr", dialects.KindOther, nil, str)
	for _, oid := range []uint32{pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.QCharOID,
		pgtype.UUIDOID, pgtype.DateOID, pgtype.TimeOID, pgtype.TimetzOID, pgtype.IntervalOID, pgtype.OIDOID,
		pgtype.XMLOID, pgtype.InetOID, pgtype.CIDROID, pgtype.MacaddrOID} {
		codecs[oid].copied = asString // their text decoder is str
	}

	// Array type → element type, for the arrays PostgreSQL ships.
	for arr, elem := range map[uint32]uint32{
		pgtype.BoolArrayOID:        pgtype.BoolOID,
		pgtype.Int2ArrayOID:        pgtype.Int2OID,
		pgtype.Int4ArrayOID:        pgtype.Int4OID,
		pgtype.Int8ArrayOID:        pgtype.Int8OID,
		pgtype.Float4ArrayOID:      pgtype.Float4OID,
		pgtype.Float8ArrayOID:      pgtype.Float8OID,
		pgtype.NumericArrayOID:     pgtype.NumericOID,
		pgtype.TextArrayOID:        pgtype.TextOID,
		pgtype.VarcharArrayOID:     pgtype.VarcharOID,
		pgtype.BPCharArrayOID:      pgtype.BPCharOID,
		pgtype.NameArrayOID:        pgtype.NameOID,
		pgtype.QCharArrayOID:       pgtype.QCharOID,
		pgtype.UUIDArrayOID:        pgtype.UUIDOID,
		pgtype.DateArrayOID:        pgtype.DateOID,
		pgtype.TimeArrayOID:        pgtype.TimeOID,
		pgtype.TimetzArrayOID:      pgtype.TimetzOID,
		pgtype.TimestampArrayOID:   pgtype.TimestampOID,
		pgtype.TimestamptzArrayOID: pgtype.TimestamptzOID,
		pgtype.JSONArrayOID:        pgtype.JSONOID,
		pgtype.JSONBArrayOID:       pgtype.JSONBOID,
		pgtype.ByteaArrayOID:       pgtype.ByteaOID,
		pgtype.IntervalArrayOID:    pgtype.IntervalOID,
		pgtype.OIDArrayOID:         pgtype.OIDOID,
		pgtype.XMLArrayOID:         pgtype.XMLOID,
		pgtype.InetArrayOID:        pgtype.InetOID,
		pgtype.CIDRArrayOID:        pgtype.CIDROID,
		pgtype.MacaddrArrayOID:     pgtype.MacaddrOID,
		pgtype.PointArrayOID:       pgtype.PointOID,
		pgtype.LsegArrayOID:        pgtype.LsegOID,
		pgtype.PathArrayOID:        pgtype.PathOID,
		pgtype.PolygonArrayOID:     pgtype.PolygonOID,
		pgtype.LineArrayOID:        pgtype.LineOID,
		pgtype.CircleArrayOID:      pgtype.CircleOID,
		pgtype.BoxArrayOID:         pgtype.BoxOID,
		pgtype.BitArrayOID:         pgtype.BitOID,
		pgtype.VarbitArrayOID:      pgtype.VarbitOID,
	} {
		delim := byte(',')
		if elem == pgtype.BoxOID {
			delim = ';' // the only built-in type with another delimiter
		}
		arrays[arr] = arrayInfo{elem: elem, delim: delim}
	}
	for arr, info := range arrays {
		ec := codecs[info.elem]
		c := &codec{kind: dialects.KindArray, text: textArray(elemText(ec), info.delim)}
		if ec != nil {
			c.name = ec.name + "[]"
			if ec.bin != nil {
				c.bin = binArray(ec.bin)
			}
		}
		codecs[arr] = c
	}
	for oid, c := range codecs {
		if c.bin != nil {
			resultFormats[oid] = pgx.BinaryFormatCode
		}
	}
}

// binFallback decodes a binary value of a type without a native decoder
// through pgx's type map and returns its text form: the value "anything
// else" normalizes to. m belongs to the connection the rows come from.
func binFallback(m *pgtype.Map, oid uint32) decodeFunc {
	return func(src []byte) (any, error) {
		t, ok := m.TypeForOID(oid)
		if !ok {
			return nil, fmt.Errorf("pg: cannot decode binary value of type %d", oid)
		}
		v, err := t.Codec.DecodeValue(m, oid, pgtype.BinaryFormatCode, src)
		if err != nil {
			return nil, err
		}
		text, err := m.Encode(oid, pgtype.TextFormatCode, v, nil)
		if err != nil {
			return nil, err
		}
		return string(text), nil
	}
}

// elemText is the text decoder of an array element type; elements of types
// we do not know are kept as their text.
func elemText(c *codec) decodeFunc {
	if c == nil {
		return textString
	}
	return c.text
}

// kindOfOID maps a result column's type to a Kind for Rows.Columns.
func kindOfOID(oid uint32) dialects.Kind {
	if c, ok := codecs[oid]; ok {
		return c.kind
	}
	return dialects.KindOther
}

var errShort = errors.New("pg: malformed binary value")

// --- binary decoders ---

func binBool(src []byte) (any, error) {
	if len(src) != 1 {
		return nil, errShort
	}
	return src[0] != 0, nil
}

func binInt2(src []byte) (any, error) {
	if len(src) != 2 {
		return nil, errShort
	}
	return int64(int16(binary.BigEndian.Uint16(src))), nil
}

func binInt4(src []byte) (any, error) {
	if len(src) != 4 {
		return nil, errShort
	}
	return int64(int32(binary.BigEndian.Uint32(src))), nil
}

func binInt8(src []byte) (any, error) {
	if len(src) != 8 {
		return nil, errShort
	}
	return int64(binary.BigEndian.Uint64(src)), nil
}

// specialFloat spells NaN and infinities as PostgreSQL does; JSON has no
// numbers for them.
func specialFloat(f float64) (string, bool) {
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "Infinity", true
	case math.IsInf(f, -1):
		return "-Infinity", true
	}
	return "", false
}

func binFloat4(src []byte) (any, error) {
	if len(src) != 4 {
		return nil, errShort
	}
	f := math.Float32frombits(binary.BigEndian.Uint32(src))
	if s, ok := specialFloat(float64(f)); ok {
		return s, nil
	}
	// float64(f) would show 1.1 as 1.100000023841858; going through the
	// shortest decimal gives the float64 PostgreSQL's text form names.
	var buf [32]byte
	d, err := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], float64(f), 'g', -1, 32)), 64)
	if err != nil {
		return nil, err
	}
	return d, nil
}

func binFloat8(src []byte) (any, error) {
	if len(src) != 8 {
		return nil, errShort
	}
	f := math.Float64frombits(binary.BigEndian.Uint64(src))
	if s, ok := specialFloat(f); ok {
		return s, nil
	}
	return f, nil
}

func binBytea(src []byte) (any, error) {
	out := make([]byte, len(src))
	copy(out, src)
	return out, nil
}

func binUUID(src []byte) (any, error) {
	if len(src) != 16 {
		return nil, errShort
	}
	var buf [36]byte
	hex.Encode(buf[0:8], src[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], src[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], src[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], src[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], src[10:16])
	return string(buf[:]), nil
}

// PostgreSQL's epoch for dates and timestamps is 2000-01-01.
const (
	pgEpochUnixMicro = 946684800 * 1000000
	microsPerDay     = 86400 * 1000000
)

func binDate(src []byte) (any, error) {
	if len(src) != 4 {
		return nil, errShort
	}
	days := int32(binary.BigEndian.Uint32(src))
	switch days {
	case math.MaxInt32:
		return "infinity", nil
	case math.MinInt32:
		return "-infinity", nil
	}
	var buf [24]byte
	b, bc := appendDate(buf[:0], time.Date(2000, 1, 1+int(days), 0, 0, 0, 0, time.UTC))
	if bc {
		b = append(b, " BC"...)
	}
	return string(b), nil
}

func binTimestamp(src []byte) (any, error) {
	if len(src) != 8 {
		return nil, errShort
	}
	us := int64(binary.BigEndian.Uint64(src))
	switch us {
	case math.MaxInt64:
		return "infinity", nil
	case math.MinInt64:
		return "-infinity", nil
	}
	days, rem := us/microsPerDay, us%microsPerDay
	if rem < 0 {
		days--
		rem += microsPerDay
	}
	var buf [40]byte
	b, bc := appendDate(buf[:0], time.Date(2000, 1, 1+int(days), 0, 0, 0, 0, time.UTC))
	b = append(b, 'T')
	b = appendClock(b, rem)
	if bc {
		b = append(b, " BC"...)
	}
	return string(b), nil
}

func binTimestamptz(src []byte) (any, error) {
	if len(src) != 8 {
		return nil, errShort
	}
	us := int64(binary.BigEndian.Uint64(src))
	switch us {
	case math.MaxInt64:
		return "infinity", nil
	case math.MinInt64:
		return "-infinity", nil
	}
	return time.UnixMicro(us + pgEpochUnixMicro).UTC(), nil
}

func binTime(src []byte) (any, error) {
	if len(src) != 8 {
		return nil, errShort
	}
	var buf [16]byte
	return string(appendClock(buf[:0], int64(binary.BigEndian.Uint64(src)))), nil
}

// appendDate writes YYYY-MM-DD and reports whether the date is BC, in which
// case the year written is the BC year (PostgreSQL's spelling).
func appendDate(b []byte, t time.Time) ([]byte, bool) {
	y, m, d := t.Date()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	b = appendPadded(b, int64(y), 4)
	b = append(b, '-')
	b = appendPadded(b, int64(m), 2)
	b = append(b, '-')
	b = appendPadded(b, int64(d), 2)
	return b, bc
}

// appendClock writes HH:MM:SS with a fraction trimmed of trailing zeros,
// from microseconds since midnight (24:00:00 included).
func appendClock(b []byte, us int64) []byte {
	secs, frac := us/1000000, us%1000000
	b = appendPadded(b, secs/3600, 2)
	b = append(b, ':')
	b = appendPadded(b, secs/60%60, 2)
	b = append(b, ':')
	b = appendPadded(b, secs%60, 2)
	if frac != 0 {
		var f [6]byte
		for i := 5; i >= 0; i-- {
			f[i] = byte('0' + frac%10)
			frac /= 10
		}
		n := 6
		for f[n-1] == '0' {
			n--
		}
		b = append(b, '.')
		b = append(b, f[:n]...)
	}
	return b
}

func appendPadded(b []byte, v int64, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// binArray decodes PostgreSQL's binary array format: ndim, flags, element
// OID, (length, lower bound) per dimension, then length-prefixed elements.
// Several dimensions become nested []any.
func binArray(elem decodeFunc) decodeFunc {
	return func(src []byte) (any, error) {
		if len(src) < 12 {
			return nil, errShort
		}
		ndim := int(int32(binary.BigEndian.Uint32(src)))
		if ndim == 0 {
			return []any{}, nil
		}
		if ndim < 0 || len(src) < 12+8*ndim {
			return nil, errShort
		}
		dims := make([]int, ndim)
		total := 1
		for i := range dims {
			n := int(int32(binary.BigEndian.Uint32(src[12+8*i:])))
			if n < 0 {
				return nil, errShort
			}
			dims[i] = n
			total *= n
		}
		if total > len(src) { // every element takes at least 4 bytes
			return nil, errShort
		}
		d := arrayDecoder{src: src, pos: 12 + 8*ndim, elem: elem}
		return d.dim(dims)
	}
}

type arrayDecoder struct {
	src  []byte
	pos  int
	elem decodeFunc
}

func (d *arrayDecoder) dim(dims []int) (any, error) {
	out := make([]any, dims[0])
	for i := range out {
		if len(dims) > 1 {
			v, err := d.dim(dims[1:])
			if err != nil {
				return nil, err
			}
			out[i] = v
			continue
		}
		if len(d.src) < d.pos+4 {
			return nil, errShort
		}
		n := int(int32(binary.BigEndian.Uint32(d.src[d.pos:])))
		d.pos += 4
		if n < 0 {
			continue // NULL
		}
		if len(d.src) < d.pos+n {
			return nil, errShort
		}
		v, err := d.elem(d.src[d.pos : d.pos+n])
		if err != nil {
			return nil, err
		}
		d.pos += n
		out[i] = v
	}
	return out, nil
}

// --- text decoders (the text format, also what the simple protocol gives) ---

func textString(src []byte) (any, error) { return string(src), nil }

func textBool(src []byte) (any, error) {
	switch string(src) {
	case "t", "true":
		return true, nil
	case "f", "false":
		return false, nil
	}
	return nil, fmt.Errorf("pg: malformed boolean %q", src)
}

func textInt(src []byte) (any, error) {
	n, err := strconv.ParseInt(string(src), 10, 64)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func textFloat(src []byte) (any, error) {
	switch string(src) {
	case "NaN", "Infinity", "-Infinity":
		return string(src), nil
	}
	f, err := strconv.ParseFloat(string(src), 64)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func textNumeric(src []byte) (any, error) {
	switch string(src) {
	case "NaN", "Infinity", "-Infinity":
		return string(src), nil
	}
	return json.Number(src), nil
}

func textJSON(src []byte) (any, error) {
	out := make(json.RawMessage, len(src))
	copy(out, src)
	return out, nil
}

// textBytea decodes bytea's text output: hex ("\x0a0b") or the older escape
// format.
func textBytea(src []byte) (any, error) {
	if len(src) >= 2 && src[0] == '\\' && src[1] == 'x' {
		out := make([]byte, hex.DecodedLen(len(src)-2))
		if _, err := hex.Decode(out, src[2:]); err != nil {
			return nil, err
		}
		return out, nil
	}
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		switch {
		case i+1 < len(src) && src[i+1] == '\\':
			out = append(out, '\\')
			i++
		case i+3 < len(src):
			v, err := strconv.ParseUint(string(src[i+1:i+4]), 8, 8)
			if err != nil {
				return nil, err
			}
			out = append(out, byte(v))
			i += 3
		default:
			return nil, errors.New("pg: malformed bytea")
		}
	}
	return out, nil
}

// textTimestamp turns "2006-01-02 15:04:05.999999" (DateStyle ISO) into the
// T-separated form the binary decoder gives.
func textTimestamp(src []byte) (any, error) {
	var buf [64]byte
	s := append(buf[:0], src...)
	if i := bytes.IndexByte(s, ' '); i >= 0 { // "infinity" has none
		s[i] = 'T'
	}
	return string(s), nil
}

// textTimestamptz parses "2006-01-02 15:04:05.999999+07[:00[:00]]"
// (DateStyle ISO, which Open sets).
func textTimestamptz(src []byte) (any, error) {
	s := string(src)
	switch s {
	case "infinity", "-infinity":
		return s, nil
	}
	bc := false
	if len(s) > 3 && s[len(s)-3:] == " BC" {
		bc = true
		s = s[:len(s)-3]
	}
	// The zone is the last + or - after the time of day.
	z := -1
	for i := len(s) - 1; i > 10; i-- {
		if s[i] == '+' || s[i] == '-' {
			z = i
			break
		}
	}
	layout := "2006-01-02 15:04:05"
	switch len(s) - z {
	case 3:
		layout += "-07"
	case 6:
		layout += "-07:00"
	case 9:
		layout += "-07:00:00"
	default:
		return nil, fmt.Errorf("pg: malformed timestamptz %q", src)
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return nil, err
	}
	if bc {
		t = t.AddDate(1-2*t.Year(), 0, 0)
	}
	return t.UTC(), nil
}

// textArray parses PostgreSQL's array literal: an optional dimension
// decoration "[1:2]=", braces per dimension, elements quoted with "…" and
// backslash escapes or bare, and bare NULL for a missing element.
func textArray(elem decodeFunc, delim byte) decodeFunc {
	return func(src []byte) (any, error) {
		p := arrayParser{src: src, delim: delim, elem: elem}
		if len(src) > 0 && src[0] == '[' {
			for p.pos < len(src) && src[p.pos] != '=' {
				p.pos++
			}
			p.pos++
		}
		v, err := p.array()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos != len(src) {
			return nil, fmt.Errorf("pg: malformed array %q", src)
		}
		return v, nil
	}
}

type arrayParser struct {
	src   []byte
	pos   int
	delim byte
	elem  decodeFunc
	buf   []byte
}

func (p *arrayParser) space() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			p.pos++
		default:
			return
		}
	}
}

func (p *arrayParser) malformed() error {
	return fmt.Errorf("pg: malformed array %q", p.src)
}

func (p *arrayParser) array() ([]any, error) {
	p.space()
	if p.pos >= len(p.src) || p.src[p.pos] != '{' {
		return nil, p.malformed()
	}
	p.pos++
	out := []any{}
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		return out, nil
	}
	for {
		p.space()
		if p.pos >= len(p.src) {
			return nil, p.malformed()
		}
		var v any
		var err error
		if p.src[p.pos] == '{' {
			v, err = p.array()
		} else {
			v, err = p.element()
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.pos >= len(p.src) {
			return nil, p.malformed()
		}
		switch p.src[p.pos] {
		case p.delim:
			p.pos++
		case '}':
			p.pos++
			return out, nil
		default:
			return nil, p.malformed()
		}
	}
}

func (p *arrayParser) element() (any, error) {
	p.buf = p.buf[:0]
	if p.src[p.pos] == '"' {
		p.pos++
		for {
			if p.pos >= len(p.src) {
				return nil, p.malformed()
			}
			c := p.src[p.pos]
			p.pos++
			switch c {
			case '"':
				return p.elem(p.buf)
			case '\\':
				if p.pos >= len(p.src) {
					return nil, p.malformed()
				}
				c = p.src[p.pos]
				p.pos++
			}
			p.buf = append(p.buf, c)
		}
	}
	escaped := false
	trail := 0 // length of buf up to the last non-space byte
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == p.delim || c == '}' {
			break
		}
		p.pos++
		if c == '\\' {
			if p.pos >= len(p.src) {
				return nil, p.malformed()
			}
			c = p.src[p.pos]
			p.pos++
			escaped = true
			p.buf = append(p.buf, c)
			trail = len(p.buf)
			continue
		}
		p.buf = append(p.buf, c)
		switch c {
		case ' ', '\t', '\n', '\r', '\v', '\f':
		default:
			trail = len(p.buf)
		}
	}
	p.buf = p.buf[:trail]
	if !escaped && trail == 0 {
		return nil, p.malformed() // an empty element must be quoted
	}
	if !escaped && bytes.EqualFold(p.buf, []byte("NULL")) {
		return nil, nil
	}
	return p.elem(p.buf)
}
