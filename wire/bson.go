package wire

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/littlebitlabs/minimal/dialects"
)

// bsonEncoder writes one BSON document per row, {col: value, ...}, one after
// the other like a mongodump .bson file. There is no envelope and no page.
type bsonEncoder struct {
	keys []string // element name of each column, NUL-terminated
}

func newBSONEncoder(cols []dialects.Column) *bsonEncoder {
	e := &bsonEncoder{keys: make([]string, len(cols))}
	for i, c := range cols {
		e.keys[i] = string(appendCString(nil, c.Name))
	}
	return e
}

func (e *bsonEncoder) begin(dst []byte) []byte { return dst }

func (e *bsonEncoder) end(dst []byte, _ int64, _ *Page) []byte { return dst }

func (e *bsonEncoder) row(dst []byte, _ int64, vals []any) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for j, v := range vals {
		typ := len(dst)
		dst = append(dst, 0)
		dst = append(dst, e.keys[j]...)
		var t bsoncore.Type
		dst, t = appendBSONValue(dst, v, 0)
		dst[typ] = byte(t)
	}
	return endBSONDocument(dst, start)
}

// endBSONDocument terminates the document or array begun at start and
// writes its length there.
func endBSONDocument(dst []byte, start int) []byte {
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

// appendCString appends an element name: valid UTF-8 without NUL bytes,
// which a BSON cstring cannot hold (NUL becomes U+FFFD), then the NUL.
func appendCString(dst []byte, s string) []byte {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return append(appendValidUTF8(dst, s), 0)
}

// appendBSONString appends a BSON string: length, valid UTF-8 bytes, NUL.
func appendBSONString[S []byte | string](dst []byte, s S) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = appendValidUTF8(dst, s)
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// appendBSONValue appends the value part of an element and returns its type,
// which the caller writes into the element's header.
func appendBSONValue(dst []byte, v any, depth int) ([]byte, bsoncore.Type) {
	switch v := v.(type) {
	case nil:
		return dst, bsoncore.TypeNull
	case string:
		return appendBSONString(dst, v), bsoncore.TypeString
	case int64:
		return bsoncore.AppendInt64(dst, v), bsoncore.TypeInt64
	case float64:
		return bsoncore.AppendDouble(dst, v), bsoncore.TypeDouble
	case bool:
		return bsoncore.AppendBoolean(dst, v), bsoncore.TypeBoolean
	case json.Number:
		return appendBSONNumber(dst, string(v))
	case time.Time:
		return bsoncore.AppendDateTime(dst, v.UnixMilli()), bsoncore.TypeDateTime
	case []byte:
		return bsoncore.AppendBinary(dst, 0, v), bsoncore.TypeBinary
	case json.RawMessage:
		// Its compact JSON text, as CSV holds it; text that is not JSON as
		// it is.
		start := len(dst)
		if out, ok := appendCompactJSON(append(dst, 0, 0, 0, 0), v); ok {
			out = append(out, 0)
			binary.LittleEndian.PutUint32(out[start:], uint32(len(out)-start-4))
			return out, bsoncore.TypeString
		}
		return appendBSONString(dst[:start], []byte(v)), bsoncore.TypeString
	case []any:
		if depth >= maxDepth {
			return dst, bsoncore.TypeNull
		}
		start := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		for i, e := range v {
			typ := len(dst)
			dst = append(dst, 0)
			dst = strconv.AppendInt(dst, int64(i), 10)
			dst = append(dst, 0)
			var t bsoncore.Type
			dst, t = appendBSONValue(dst, e, depth+1)
			dst[typ] = byte(t)
		}
		return endBSONDocument(dst, start), bsoncore.TypeArray
	case map[string]any:
		if depth >= maxDepth {
			return dst, bsoncore.TypeNull
		}
		start := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		for _, k := range sortedKeys(v) {
			typ := len(dst)
			dst = append(dst, 0)
			dst = appendCString(dst, k)
			var t bsoncore.Type
			dst, t = appendBSONValue(dst, v[k], depth+1)
			dst[typ] = byte(t)
		}
		return endBSONDocument(dst, start), bsoncore.TypeEmbeddedDocument
	case int:
		return bsoncore.AppendInt64(dst, int64(v)), bsoncore.TypeInt64
	case int32:
		return bsoncore.AppendInt32(dst, v), bsoncore.TypeInt32
	case int16:
		return bsoncore.AppendInt32(dst, int32(v)), bsoncore.TypeInt32
	case int8:
		return bsoncore.AppendInt32(dst, int32(v)), bsoncore.TypeInt32
	case uint:
		return appendBSONUint(dst, uint64(v))
	case uint64:
		return appendBSONUint(dst, v)
	case uint32:
		return bsoncore.AppendInt64(dst, int64(v)), bsoncore.TypeInt64
	case uint16:
		return bsoncore.AppendInt32(dst, int32(v)), bsoncore.TypeInt32
	case uint8:
		return bsoncore.AppendInt32(dst, int32(v)), bsoncore.TypeInt32
	case float32:
		return bsoncore.AppendDouble(dst, float64(v)), bsoncore.TypeDouble
	}
	return appendBSONString(dst, fmt.Sprint(v)), bsoncore.TypeString
}

// appendBSONUint writes an unsigned integer as int64 when it fits and as an
// exact decimal128 when it does not.
func appendBSONUint(dst []byte, u uint64) ([]byte, bsoncore.Type) {
	if u <= math.MaxInt64 {
		return bsoncore.AppendInt64(dst, int64(u)), bsoncore.TypeInt64
	}
	return bsoncore.AppendDecimal128(dst, uint64(6176)<<49, u), bsoncore.TypeDecimal128
}

// appendBSONNumber writes an exact decimal literal: an integer that fits as
// int64, anything else (a fraction, an exponent, a larger integer) as
// decimal128. A literal that is not a JSON number, or that decimal128 cannot
// hold exactly, is kept as a string.
func appendBSONNumber(dst []byte, s string) ([]byte, bsoncore.Type) {
	if !isValidNumber(s) {
		return appendBSONString(dst, s), bsoncore.TypeString
	}
	d, ok := parseDecimal(s)
	if ok && d.integer && d.hi == 0 {
		switch {
		case !d.neg && d.lo <= math.MaxInt64:
			return bsoncore.AppendInt64(dst, int64(d.lo)), bsoncore.TypeInt64
		case d.neg && d.lo <= 1<<63:
			return bsoncore.AppendInt64(dst, int64(-d.lo)), bsoncore.TypeInt64
		}
	}
	if ok {
		hi := uint64(d.exp+decimalBias)<<49 | d.hi
		if d.neg {
			hi |= 1 << 63
		}
		return bsoncore.AppendDecimal128(dst, hi, d.lo), bsoncore.TypeDecimal128
	}
	// Too many digits or an exponent out of range: the bson package rounds
	// away trailing zeros and clamps exponents where that is exact.
	if dec, err := bson.ParseDecimal128(s); err == nil {
		hi, lo := dec.GetBytes()
		return bsoncore.AppendDecimal128(dst, hi, lo), bsoncore.TypeDecimal128
	}
	return appendBSONString(dst, s), bsoncore.TypeString
}

// Limits of IEEE 754-2008 decimal128 as BSON stores it (BID encoding).
const (
	decimalDigits = 34
	decimalBias   = 6176 // exponent bias; the exponent ranges over [-6176, 6111]
	decimalMaxExp = 6111
)

// decimal is a decimal literal as significand × 10^exp, the significand
// held in 128 bits (hi, lo).
type decimal struct {
	hi, lo  uint64
	exp     int
	neg     bool
	integer bool // no fraction and no exponent in the literal
}

// parseDecimal parses a valid JSON number literal without allocating. ok is
// false when the significand has more than 34 digits or the exponent is out
// of decimal128's range.
func parseDecimal(s string) (d decimal, ok bool) {
	if s[0] == '-' {
		d.neg = true
		s = s[1:]
	}
	d.integer = true
	digits := 0
	addDigit := func(c byte) bool {
		if d.hi == 0 && d.lo == 0 && c == '0' {
			return true // leading zeros do not count
		}
		if digits++; digits > decimalDigits {
			return false
		}
		carry, lo := bits.Mul64(d.lo, 10)
		lo, c2 := bits.Add64(lo, uint64(c-'0'), 0)
		d.hi = d.hi*10 + carry + c2
		d.lo = lo
		return true
	}
	i := 0
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		if !addDigit(s[i]) {
			return d, false
		}
	}
	if i < len(s) && s[i] == '.' {
		d.integer = false
		for i++; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			if !addDigit(s[i]) {
				return d, false
			}
			d.exp--
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		d.integer = false
		i++
		neg := false
		if s[i] == '+' || s[i] == '-' {
			neg = s[i] == '-'
			i++
		}
		e := 0
		for ; i < len(s); i++ {
			if e = e*10 + int(s[i]-'0'); e > 2*decimalBias {
				return d, false
			}
		}
		if neg {
			e = -e
		}
		d.exp += e
	}
	return d, d.exp >= -decimalBias && d.exp <= decimalMaxExp
}
