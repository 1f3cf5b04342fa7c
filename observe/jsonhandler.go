package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// JSONHandler is a slog.Handler that writes every record as one line of
// JSON, byte for byte what slog.JSONHandler writes for the same records
// with the same level (it has no ReplaceAttr and no AddSource), but with
// less work: it appends straight into a pooled buffer and writes the kinds
// the gateway logs (strings, numbers, booleans, durations, times, groups
// and []string) without reflection. Other values of kind slog.KindAny are
// written as slog.JSONHandler writes them: an error by its Error text,
// anything else as encoding/json marshals it without HTML escaping.
//
// The one place the output can differ is a LogValuer that panics: slog
// logs the panic with a stack whose frames name the handler's functions.
//
// Each Handle makes one Write to the writer, serialized by the handler
// (or by the writer itself when it is a *LogWriter).
type JSONHandler struct {
	w     io.Writer
	mu    *sync.Mutex // nil when w serializes its own writes (*LogWriter)
	level slog.Leveler

	// As slog's commonHandler: the attributes of WithAttrs formatted once,
	// the groups of WithGroup, and how many of them pre has opened.
	pre    []byte
	groups []string
	nOpen  int
}

// NewJSONHandler returns a JSONHandler writing to w records at level and
// above (slog.LevelInfo when level is nil).
func NewJSONHandler(w io.Writer, level slog.Leveler) *JSONHandler {
	h := &JSONHandler{w: w, level: level}
	if _, ok := w.(*LogWriter); !ok {
		h.mu = &sync.Mutex{}
	}
	return h
}

// Enabled reports whether level is at or above the handler's level.
func (h *JSONHandler) Enabled(_ context.Context, level slog.Level) bool {
	minLevel := slog.LevelInfo
	if h.level != nil {
		minLevel = h.level.Level()
	}
	return level >= minLevel
}

func (h *JSONHandler) clone() *JSONHandler {
	return &JSONHandler{
		w: h.w, mu: h.mu, level: h.level,
		pre:    h.pre[:len(h.pre):len(h.pre)],
		groups: h.groups[:len(h.groups):len(h.groups)],
		nOpen:  h.nOpen,
	}
}

// WithAttrs returns a handler whose lines carry attrs after the built-in
// attributes, in the groups opened so far.
func (h *JSONHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	empty := 0
	for _, a := range attrs {
		if isEmptyGroup(a.Value) {
			empty++
		}
	}
	if empty == len(attrs) {
		return h
	}
	h2 := h.clone()
	s := jsonState{h: h2}
	b := h2.pre
	if len(b) > 0 {
		s.sep = b[len(b)-1] != '{'
	}
	pos := len(b)
	b, ok := s.appendAttrs(s.openGroups(b), attrs)
	if !ok {
		b = b[:pos]
	} else {
		h2.nOpen = len(h2.groups)
	}
	h2.pre = b
	return h2
}

// WithGroup returns a handler that puts later attributes in group name.
func (h *JSONHandler) WithGroup(name string) slog.Handler {
	h2 := h.clone()
	h2.groups = append(h2.groups, name)
	return h2
}

// lineBufferMax is the largest buffer kept for the next line.
const lineBufferMax = 16 << 10

var linePool = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

// Handle writes r as one line.
func (h *JSONHandler) Handle(_ context.Context, r slog.Record) error {
	bp := linePool.Get().(*[]byte)
	s := jsonState{h: h}
	b := append((*bp)[:0], '{')
	if !r.Time.IsZero() {
		b = append(b, `"time":`...)
		s.sep = true
		b = appendTime(b, r.Time.Round(0))
	}
	b = s.appendKey(b, "level")
	b = appendString(b, r.Level.String())
	b = s.appendKey(b, "msg")
	b = appendString(b, r.Message)
	b = s.appendNonBuiltIns(b, r)
	b = append(b, '\n')

	var err error
	if h.mu != nil {
		h.mu.Lock()
		_, err = h.w.Write(b)
		h.mu.Unlock()
	} else {
		_, err = h.w.Write(b)
	}
	if cap(b) <= lineBufferMax {
		*bp = b[:0]
		linePool.Put(bp)
	}
	return err
}

// jsonState is one line (or WithAttrs' attributes) being formatted. The
// line itself is passed from function to function and returned, as
// append does, not kept here: a slice kept behind a pointer costs a write
// barrier on every append while the collector marks.
type jsonState struct {
	h   *JSONHandler
	sep bool // a comma goes before the next key
}

func (s *jsonState) appendNonBuiltIns(b []byte, r slog.Record) []byte {
	h := s.h
	if len(h.pre) > 0 {
		if s.sep {
			b = append(b, ',')
		}
		b = append(b, h.pre...)
		s.sep = h.pre[len(h.pre)-1] != '{'
	}
	nOpen := h.nOpen
	if r.NumAttrs() > 0 {
		pos := len(b)
		b = s.openGroups(b)
		nOpen = len(h.groups)
		empty := true
		r.Attrs(func(a slog.Attr) bool {
			var ok bool
			if b, ok = s.appendAttr(b, a); ok {
				empty = false
			}
			return true
		})
		if empty {
			b = b[:pos]
			nOpen = h.nOpen
		}
	}
	for range nOpen {
		b = append(b, '}')
	}
	return append(b, '}')
}

func (s *jsonState) openGroups(b []byte) []byte {
	for _, n := range s.h.groups[s.h.nOpen:] {
		b = s.openGroup(b, n)
	}
	return b
}

func (s *jsonState) openGroup(b []byte, name string) []byte {
	b = s.appendKey(b, name)
	s.sep = false
	return append(b, '{')
}

func (s *jsonState) appendAttrs(b []byte, as []slog.Attr) ([]byte, bool) {
	nonEmpty := false
	for _, a := range as {
		var ok bool
		if b, ok = s.appendAttr(b, a); ok {
			nonEmpty = true
		}
	}
	return b, nonEmpty
}

// appendAttr follows slog's handleState.appendAttr, quirks included (a
// keyed group whose attributes are all elided leaves no comma for the
// next key), and reports whether it appended something.
func (s *jsonState) appendAttr(b []byte, a slog.Attr) ([]byte, bool) {
	v := a.Value
	k := v.Kind()
	if k == slog.KindLogValuer {
		if l, ok := v.Any().(*requestLine); ok && a.Key == "" {
			return s.appendRequestLine(b, l), true
		}
		v = v.Resolve()
		k = v.Kind()
	}
	if k == slog.KindAny {
		x := v.Any()
		if x == nil && a.Key == "" {
			return b, false // slog's empty Attr
		}
		if src, ok := x.(*slog.Source); ok {
			if src == nil || *src == (slog.Source{}) {
				return b, false
			}
			v, k = sourceGroup(src), slog.KindGroup
		}
	}
	if k != slog.KindGroup {
		b = s.appendKey(b, a.Key)
		return appendValue(b, v, k), true
	}
	attrs := v.Group()
	if len(attrs) > 0 {
		pos := len(b)
		if a.Key != "" {
			b = s.openGroup(b, a.Key)
		}
		var ok bool
		if b, ok = s.appendAttrs(b, attrs); !ok {
			return b[:pos], false
		}
		if a.Key != "" {
			b = append(b, '}')
			s.sep = true
		}
		return b, true
	}
	return b, true
}

// appendRequestLine writes l's attributes as appendAttrs writes those of
// l.LogValue(), without making them; the keys after the first are
// written as they come out of appendKey (they need no escaping).
func (s *jsonState) appendRequestLine(b []byte, l *requestLine) []byte {
	b = appendString(s.appendKey(b, "face"), l.face)
	b = appendString(append(b, `,"method":`...), l.method)
	b = appendString(append(b, `,"route":`...), l.route)
	b = appendString(append(b, `,"path":`...), l.path)
	b = strconv.AppendInt(append(b, `,"status":`...), int64(l.status), 10)
	b = strconv.AppendInt(append(b, `,"bytes":`...), int64(l.bytes), 10)
	b = appendJSONFloat(append(b, `,"duration_ms":`...), l.durationMS()) // finite: whole microseconds
	return appendString(append(b, `,"remote":`...), l.remote)
}

// sourceGroup is slog's Source.group.
func sourceGroup(src *slog.Source) slog.Value {
	var as []slog.Attr
	if src.Function != "" {
		as = append(as, slog.String("function", src.Function))
	}
	if src.File != "" {
		as = append(as, slog.String("file", src.File))
	}
	if src.Line != 0 {
		as = append(as, slog.Int("line", src.Line))
	}
	return slog.GroupValue(as...)
}

func isEmptyGroup(v slog.Value) bool {
	return v.Kind() == slog.KindGroup && len(v.Group()) == 0
}

func (s *jsonState) appendKey(b []byte, key string) []byte {
	if s.sep {
		b = append(b, ',', '"')
	} else {
		b = append(b, '"')
	}
	s.sep = true
	b = appendEscaped(b, key, false)
	return append(b, '"', ':')
}

func appendString(b []byte, str string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, str, false)
	return append(b, '"')
}

func appendValue(b []byte, v slog.Value, k slog.Kind) []byte {
	switch k {
	case slog.KindString:
		return appendString(b, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		f := v.Float64()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return appendAny(b, f) // encoding/json's error
		}
		return appendJSONFloat(b, f)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		return strconv.AppendInt(b, int64(v.Duration()), 10)
	case slog.KindTime:
		return appendTime(b, v.Time())
	default: // slog.KindAny
		x := v.Any()
		if ss, ok := x.([]string); ok {
			return appendStrings(b, ss)
		}
		return appendAny(b, x)
	}
}

// appendAny writes a value of kind slog.KindAny as slog.JSONHandler does,
// recovering from a panic of its methods the same way.
func appendAny(b []byte, x any) (out []byte) {
	pos := len(b)
	defer func() {
		if r := recover(); r != nil {
			if v := reflect.ValueOf(x); v.Kind() == reflect.Pointer && v.IsNil() {
				out = appendString(b[:pos], "<nil>")
				return
			}
			out = appendString(b[:pos], fmt.Sprintf("!PANIC: %v", r))
		}
	}()
	_, jm := x.(json.Marshaler)
	if err, ok := x.(error); ok && !jm {
		return appendString(b, err.Error())
	}
	out, err := appendMarshal(b, x)
	if err != nil {
		return appendString(b, fmt.Sprintf("!ERROR:%v", err))
	}
	return out
}

// jsonEncoder is a json.Encoder without HTML escaping over its buffer.
type jsonEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonEncoderPool = sync.Pool{New: func() any {
	e := &jsonEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

func appendMarshal(b []byte, x any) ([]byte, error) {
	e := jsonEncoderPool.Get().(*jsonEncoder)
	defer func() {
		if e.buf.Cap() <= lineBufferMax {
			e.buf.Reset()
			jsonEncoderPool.Put(e)
		}
	}()
	if err := e.enc.Encode(x); err != nil {
		return b, err
	}
	m := e.buf.Bytes()
	return append(b, m[:len(m)-1]...), nil // without Encode's newline
}

var errYearRange = errors.New("time.Time year outside of range [0,9999]")

// appendTime is slog's appendJSONTime: RFC 3339 with nanoseconds, after an
// error string for a year RFC 3339 cannot write.
//
// The second of the last time written, and its zone, are kept formatted
// (lastSecond): lines come many a second, and a time of that second in the
// same location only adds its nanoseconds.
func appendTime(b []byte, t time.Time) []byte {
	sec, loc := t.Unix(), t.Location()
	if p := lastSecond.Load(); p != nil && p.sec == sec && p.loc == loc {
		b = append(b, '"')
		b = append(b, p.date[:]...)
		b = appendNanos(b, t.Nanosecond())
		b = append(b, p.zone...)
		return append(b, '"')
	}
	y := t.Year()
	if y < 0 || y >= 10000 {
		b = appendString(b, fmt.Sprintf("!ERROR:%v", errYearRange))
	}
	b = append(b, '"')
	start := len(b)
	b = t.AppendFormat(b, time.RFC3339Nano)
	if y >= 0 && y < 10000 {
		p := &formattedSecond{sec: sec, loc: loc}
		f := b[start:]
		copy(p.date[:], f)
		p.zone = string(f[len(p.date)+len(appendNanos(nil, t.Nanosecond())):])
		lastSecond.Store(p)
	}
	return append(b, '"')
}

// formattedSecond is a second of a location in RFC 3339: its date and
// clock ("2006-01-02T15:04:05") and its zone ("Z", "+05:30"), which
// time's layout writes around the nanoseconds. Both depend only on the
// second and the location: a location does not change once made.
type formattedSecond struct {
	sec  int64
	loc  *time.Location
	date [19]byte
	zone string
}

// lastSecond is the second appendTime wrote last, nil before one.
var lastSecond atomic.Pointer[formattedSecond]

// appendNanos writes ns (under a second) as RFC3339Nano does: nothing
// for 0, else a dot and the nine digits without trailing zeros.
func appendNanos(b []byte, ns int) []byte {
	if ns == 0 {
		return b
	}
	var d [10]byte
	d[0] = '.'
	for i := 9; i >= 1; i-- {
		d[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := 10
	for d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...)
}

// millisMax bounds the floats appendJSONFloat writes as thousandths: below
// it a float's spacing (under 2^-23) is far finer than 0.001.
const millisMax = 1e9

// appendJSONFloat writes a finite f as encoding/json does (ES6 number to
// string: %f, or %e between 1e-6 and 1e21 exclusive, exponent unpadded).
//
// A float that is a whole number of thousandths (m/1000, as the request
// line's milliseconds are made) is written as that decimal without
// strconv's search for the shortest: below millisMax the decimal is the
// shortest that reads back as f. Every other decimal of at most as many
// digits is a multiple of 10^-k (k < 3 the decimal's fraction digits), at
// least 0.001 away from it, so outside the half-spacing of f around it.
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	if abs < millisMax && abs != 0 {
		if m := math.Round(f * 1000); m/1000 == f {
			return appendMillis(b, int64(m))
		}
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendMillis writes m/1000 in decimal, without trailing zeros in its
// fraction (m is not 0).
func appendMillis(b []byte, m int64) []byte {
	if m < 0 {
		b = append(b, '-')
		m = -m
	}
	b = strconv.AppendInt(b, m/1000, 10)
	r := m % 1000
	if r == 0 {
		return b
	}
	d := [4]byte{'.', byte('0' + r/100), byte('0' + r/10%10), byte('0' + r%10)}
	n := 4
	for d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...)
}

// appendStrings writes ss as encoding/json marshals a []string.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = appendEscaped(b, x, true)
		b = append(b, '"')
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// safeASCII marks the bytes a JSON string holds as they are: printable
// ASCII but the quote and the backslash. Bytes from 0x80 are not marked:
// they are checked as UTF-8.
var safeASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// safe8 reports whether the 8 bytes of x are all in safeASCII: none has
// the high bit, none is below 0x20, none is '"' or '\\' (the zero-byte
// tests of "Bit Twiddling Hacks", exact about presence).
func safe8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	bad := x&highs | (x-0x20*ones)&^x&highs | hasZero(x^('"'*ones)) | hasZero(x^('\\'*ones))
	return bad == 0
}

// load8 is the 8 bytes of s from i, the first the lowest.
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// load4 is the 4 bytes of s from i, the first the lowest.
func load4(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// appendEscaped appends s escaped for a JSON string, without the quotes:
// slog's escaping when marshal is false (control bytes as \u00XX but \n,
// \r and \t), encoding/json's when it is true (\b and \f too). Both write
// invalid UTF-8 as \ufffd and escape U+2028 and U+2029; neither escapes
// HTML.
func appendEscaped(b []byte, s string, marshal bool) []byte {
	i := 0
	if n := len(s); n >= 8 {
		for ; i+8 <= n; i += 8 {
			if !safe8(load8(s, i)) {
				break
			}
		}
		// the last 8 bytes, overlapping those checked
		if i < n && i+8 > n && safe8(load8(s, n-8)) {
			i = n
		}
	} else if n >= 4 {
		// the first and the last 4 bytes, overlapping: most keys and
		// many values are this short
		if safe8(uint64(load4(s, 0)) | uint64(load4(s, n-4))<<32) {
			i = n
		}
	}
	for i < len(s) && safeASCII[s[i]] {
		i++
	}
	if i == len(s) {
		return append(b, s...)
	}
	start := 0
	for i < len(s) {
		c := s[i]
		if safeASCII[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				if marshal {
					b = append(b, '\\', 'b')
				} else {
					b = append(b, '\\', 'u', '0', '0', '0', '8')
				}
			case '\f':
				if marshal {
					b = append(b, '\\', 'f')
				} else {
					b = append(b, '\\', 'u', '0', '0', '0', 'c')
				}
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

var _ slog.Handler = (*JSONHandler)(nil)
