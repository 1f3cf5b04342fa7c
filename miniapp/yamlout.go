package miniapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// YAML as mini-app-mcp writes it. Upstream serializes with serde_yaml_bw
// 2.5 (serde_yaml's serializer over libyaml's emitter: block style, indent
// 2, no line width, unicode output, implicit document start). This file
// writes the same bytes for JSON values so that row_materialize's yaml
// files (and their sha256) and the schema.yaml files of the schema tools
// match upstream's. Reading YAML stays with gopkg.in/yaml.v3.
//
// The rules, from serde_yaml's serializer and libyaml's emitter:
//   - serde_json maps are sorted by key (a BTreeMap); orderedMap keeps the
//     order of a Rust struct's fields.
//   - A string holding "\n" asks for a literal block (`|`, `|-`, `|+`); a
//     string that would read back as null, a bool, an int or a float, or
//     digits with a leading zero, asks for single quotes; any other string
//     lets the emitter choose. The emitter then picks plain, single or double
//     quotes from what the text holds (indicators, leading or trailing
//     space, characters it cannot print such as tabs or emoji).
//   - A block sequence inside a mapping is not indented (`key:\n- a`);
//     empty collections are flow (`[]`, `{}`).
//   - Floats print in their shortest form with a `.0` or an exponent sign
//     added (`5.0`, `1.0e+20`, `.inf`, `.nan`).
//   - A document whose last block scalar keeps trailing newlines (`|+`)
//     ends with `...`.

// orderedMap is a YAML mapping written in the order given.
type orderedMap []yamlPair

type yamlPair struct {
	Key   string
	Value any
}

// yamlStyle is the scalar style asked of the emitter.
type yamlStyle int

const (
	styleAny yamlStyle = iota
	stylePlain
	styleSingle
	styleDouble
	styleLiteral
)

// upstreamYAML encodes v, a JSON value (nil, bool, string, json.Number,
// float64, int, int64, []any, map[string]any, orderedMap or
// json.RawMessage), as one YAML document the way serde_yaml_bw writes it.
func upstreamYAML(v any) ([]byte, error) {
	e := &yamlEmitter{indent: -1, whitespace: true, indention: true}
	if err := e.node(v, true, false, false, false); err != nil {
		return nil, err
	}
	// Document end (implicit), then stream end.
	e.writeIndent()
	if e.openEnded == 2 {
		e.writeIndicator("...", true, false, false)
		e.openEnded = 0
		e.writeIndent()
	}
	return e.buf.Bytes(), nil
}

type yamlEmitter struct {
	buf              bytes.Buffer
	column           int
	whitespace       bool
	indention        bool
	indent           int
	indents          []int
	openEnded        int
	flowLevel        int
	mappingContext   bool
	simpleKeyContext bool
}

func (e *yamlEmitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	if e.indent < 0 {
		if flow {
			e.indent = 2
		} else {
			e.indent = 0
		}
	} else if !indentless {
		e.indent += 2
	}
}

func (e *yamlEmitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *yamlEmitter) putBreak() {
	e.buf.WriteByte('\n')
	e.column = 0
}

func (e *yamlEmitter) put(b byte) {
	e.buf.WriteByte(b)
	e.column++
}

// writeRune copies one character.
func (e *yamlEmitter) writeRune(s string) {
	e.buf.WriteString(s)
	e.column++
}

func (e *yamlEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.putBreak()
	}
	for e.column < indent {
		e.put(' ')
	}
	e.whitespace = true
	e.indention = true
}

func (e *yamlEmitter) writeIndicator(ind string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	e.buf.WriteString(ind)
	e.column += utf8.RuneCountInString(ind)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

// node is libyaml's emit_node: the contexts, then the node by kind.
func (e *yamlEmitter) node(v any, root, sequence, mapping, simpleKey bool) error {
	e.mappingContext = mapping
	e.simpleKeyContext = simpleKey
	switch x := v.(type) {
	case json.RawMessage:
		d := json.NewDecoder(bytes.NewReader(x))
		d.UseNumber()
		var inner any
		if err := d.Decode(&inner); err != nil {
			return err
		}
		return e.node(inner, root, sequence, mapping, simpleKey)
	case []any:
		if len(x) == 0 {
			e.writeIndicator("[", true, true, false)
			e.increaseIndent(true, false)
			e.popIndent()
			e.writeIndicator("]", false, false, false)
			return nil
		}
		e.increaseIndent(false, e.mappingContext && !e.indention)
		for _, item := range x {
			e.writeIndent()
			e.writeIndicator("-", true, false, true)
			if err := e.node(item, false, true, false, false); err != nil {
				return err
			}
		}
		e.popIndent()
		return nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // serde_json's BTreeMap order (bytewise)
		m := make(orderedMap, len(keys))
		for i, k := range keys {
			m[i] = yamlPair{k, x[k]}
		}
		return e.mapping(m)
	case orderedMap:
		return e.mapping(x)
	}
	text, style, err := scalarOf(v)
	if err != nil {
		return err
	}
	e.scalar(text, style)
	return nil
}

func (e *yamlEmitter) mapping(m orderedMap) error {
	if len(m) == 0 {
		e.writeIndicator("{", true, true, false)
		e.increaseIndent(true, false)
		e.popIndent()
		e.writeIndicator("}", false, false, false)
		return nil
	}
	e.increaseIndent(false, false)
	for _, p := range m {
		e.writeIndent()
		keyStyle := stringStyle(p.Key)
		a := analyzeScalar(p.Key)
		// check_simple_key: one line and at most 128 bytes.
		if !a.multiline && len(p.Key) <= 128 {
			e.mappingContext, e.simpleKeyContext = true, true
			e.scalar(p.Key, keyStyle)
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, true)
			e.mappingContext, e.simpleKeyContext = true, false
			e.scalar(p.Key, keyStyle)
			e.writeIndent()
			e.writeIndicator(":", true, false, true)
		}
		if err := e.node(p.Value, false, false, true, false); err != nil {
			return err
		}
	}
	e.popIndent()
	return nil
}

// scalarOf is a scalar JSON value's text and the style serde_yaml asks for.
func scalarOf(v any) (string, yamlStyle, error) {
	switch x := v.(type) {
	case nil:
		return "null", stylePlain, nil
	case bool:
		if x {
			return "true", stylePlain, nil
		}
		return "false", stylePlain, nil
	case string:
		return x, stringStyle(x), nil
	case json.Number:
		return numberText(string(x))
	case float64:
		return floatText(x), stylePlain, nil
	case float32:
		return floatText(float64(x)), stylePlain, nil
	case int:
		return strconv.Itoa(x), stylePlain, nil
	case int64:
		return strconv.FormatInt(x, 10), stylePlain, nil
	case uint64:
		return strconv.FormatUint(x, 10), stylePlain, nil
	}
	return "", 0, fmt.Errorf("yaml: unsupported value of type %T", v)
}

// numberText is a JSON number as serde_json reads it (u64, i64, else f64;
// "-0" is the float -0.0) and serde_yaml writes it.
func numberText(n string) (string, yamlStyle, error) {
	if !strings.ContainsAny(n, ".eE") {
		if strings.HasPrefix(n, "-") {
			if u, err := strconv.ParseUint(n[1:], 10, 64); err == nil && u != 0 && u <= 1<<63 {
				return n, stylePlain, nil
			}
		} else if _, err := strconv.ParseUint(n, 10, 64); err == nil {
			return n, stylePlain, nil
		}
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil && !math.IsInf(f, 0) {
		return "", 0, fmt.Errorf("yaml: bad number %q", n)
	}
	return floatText(f), stylePlain, nil
}

// floatText is the shortest form of f as ryu and zmij lay it out, with the
// decimal point and exponent sign serde_yaml_bw adds.
func floatText(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
		f = -f
	}
	if f == 0 {
		return sign + "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e10, _ := strconv.Atoi(exp)
	length := len(digits)
	k := e10 - (length - 1) // value = digits × 10^k
	kk := length + k        // position of the decimal point
	var out string
	switch {
	case k >= 0 && kk <= 16:
		out = digits + strings.Repeat("0", k) + ".0"
	case kk > 0 && kk <= 16:
		out = digits[:kk] + "." + digits[kk:]
	case kk > -5 && kk <= 0:
		out = "0." + strings.Repeat("0", -kk) + digits
	default:
		m := digits[:1]
		if length > 1 {
			m += "." + digits[1:]
		} else {
			m += ".0"
		}
		x := kk - 1
		if x < 0 {
			out = m + "e-" + strconv.Itoa(-x)
		} else {
			out = m + "e+" + strconv.Itoa(x)
		}
	}
	return sign + out
}

// stringStyle is serde_yaml's choice for a string: a literal block when it
// holds a newline, single quotes when it would read back as another type.
func stringStyle(s string) yamlStyle {
	if strings.Contains(s, "\n") {
		return styleLiteral
	}
	if resolvesNonString(s) || digitsButNotNumber(s) {
		return styleSingle
	}
	return styleAny
}

var rustFloat = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// resolvesNonString reports whether a plain scalar s reads back as null, a
// bool, an int or a finite float in serde_yaml_bw.
func resolvesNonString(s string) bool {
	switch s {
	case "", "null", "Null", "NULL", "~":
		return true
	}
	if strings.EqualFold(s, "true") || strings.EqualFold(s, "false") {
		return true
	}
	if isYAMLInt(s) {
		return true
	}
	if digitsButNotNumber(s) {
		return false
	}
	unpositive := s
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		if strings.HasPrefix(rest, "+") || strings.HasPrefix(rest, "-") {
			return false
		}
		unpositive = rest
	}
	switch unpositive {
	case ".inf", ".Inf", ".INF":
		return true
	}
	switch s {
	case "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
		return true
	}
	if !rustFloat.MatchString(unpositive) {
		return false
	}
	f, err := strconv.ParseFloat(unpositive, 64)
	return err == nil && !math.IsInf(f, 0)
}

// isYAMLInt: decimal, 0x, 0o or 0b integers with an optional sign, as
// serde_yaml_bw's parse_unsigned_int and parse_negative_int take them
// (up to 128 bits).
func isYAMLInt(s string) bool {
	body := s
	neg := false
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		body = rest
	} else if rest, ok := strings.CutPrefix(s, "-"); ok {
		body, neg = rest, true
	}
	if body == "" || strings.ContainsAny(body, "+-") {
		return false
	}
	base, digits := 10, body
	switch {
	case strings.HasPrefix(body, "0x"):
		base, digits = 16, body[2:]
	case strings.HasPrefix(body, "0o"):
		base, digits = 8, body[2:]
	case strings.HasPrefix(body, "0b"):
		base, digits = 2, body[2:]
	}
	if digits == "" {
		return false
	}
	if base == 10 && digitsButNotNumber(s) {
		return false
	}
	for _, c := range digits {
		d, ok := digitValue(c)
		if !ok || d >= base {
			return false
		}
	}
	// Within 128 bits (u128 unsigned, i128 negative).
	bits := 0
	trimmed := strings.TrimLeft(digits, "0")
	switch base {
	case 2:
		bits = len(trimmed)
	case 8:
		bits = len(trimmed) * 3
	case 16:
		bits = len(trimmed) * 4
	default:
		if len(trimmed) < 39 {
			return true
		}
		if len(trimmed) > 39 {
			return false
		}
		limit := "340282366920938463463374607431768211455" // u128 max
		if neg {
			limit = "170141183460469231731687303715884105728" // -i128 min
		}
		return trimmed <= limit
	}
	if bits <= 127 {
		return true
	}
	if neg {
		return false // close to the i128 bound: rare, counted as a string
	}
	return bits <= 128
}

func digitValue(c rune) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

// digitsButNotNumber: a leading zero followed by digits is a string (YAML
// 1.2), and serde_yaml quotes it.
func digitsButNotNumber(s string) bool {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if len(s) <= 1 || s[0] != '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// scalarAnalysis is libyaml's analyze_scalar.
type scalarAnalysis struct {
	multiline, flowPlain, blockPlain, single, block bool
}

func isBreakRune(r rune) bool {
	return r == '\r' || r == '\n' || r == 0x85 || r == 0x2028 || r == 0x2029
}

// isBlankz: space, tab, a break, or the end of the text (NUL).
func isBlankz(r rune) bool { return r == ' ' || r == '\t' || r == 0 || isBreakRune(r) }

// isPrintable is libyaml's IS_PRINTABLE: tab, CR and 4-byte characters
// (emoji) are not.
func isPrintable(r rune) bool {
	switch {
	case r == 0x0A:
		return true
	case r >= 0x20 && r <= 0x7E:
		return true
	case r >= 0xA0 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return r != 0xFEFF
	}
	return false
}

func analyzeScalar(s string) scalarAnalysis {
	if s == "" {
		return scalarAnalysis{blockPlain: true, single: true}
	}
	var flowInd, blockInd, special, lineBreaks bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	var prevSpace, prevBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd, flowInd = true, true
	}
	runes := []rune(s)
	at := func(i int) rune {
		if i < len(runes) {
			return runes[i]
		}
		return 0
	}
	preceded := true
	followed := isBlankz(at(1))
	for i, c := range runes {
		first, last := i == 0, i == len(runes)-1
		if first {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", c) {
				flowInd, blockInd = true, true
			}
			if c == '?' || c == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if c == '-' && followed {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", c) {
				flowInd = true
			}
			if c == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if c == '#' && preceded {
				flowInd, blockInd = true, true
			}
		}
		if !isPrintable(c) {
			special = true
		}
		if isBreakRune(c) {
			lineBreaks = true
		}
		switch {
		case c == ' ':
			if first {
				leadingSpace = true
			}
			if last {
				trailingSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case isBreakRune(c):
			if first {
				leadingBreak = true
			}
			if last {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevBreak, prevSpace = true, false
		default:
			prevSpace, prevBreak = false, false
		}
		preceded = isBlankz(c)
		if i+1 < len(runes) {
			followed = isBlankz(at(i + 2))
		}
	}
	a := scalarAnalysis{multiline: lineBreaks, flowPlain: true, blockPlain: true, single: true, block: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.flowPlain, a.blockPlain = false, false
	}
	if trailingSpace {
		a.block = false
	}
	if breakSpace {
		a.flowPlain, a.blockPlain, a.single = false, false, false
	}
	if spaceBreak || special {
		a.flowPlain, a.blockPlain, a.single, a.block = false, false, false, false
	}
	if lineBreaks {
		a.flowPlain, a.blockPlain = false, false
	}
	if flowInd {
		a.flowPlain = false
	}
	if blockInd {
		a.blockPlain = false
	}
	return a
}

// scalar is libyaml's emit_scalar: choose the style, then write.
func (e *yamlEmitter) scalar(value string, style yamlStyle) {
	a := analyzeScalar(value)
	if style == styleAny {
		style = stylePlain
	}
	if e.simpleKeyContext && a.multiline {
		style = styleDouble
	}
	if style == stylePlain {
		if (e.flowLevel > 0 && !a.flowPlain) || (e.flowLevel == 0 && !a.blockPlain) {
			style = styleSingle
		}
		if value == "" && (e.flowLevel > 0 || e.simpleKeyContext) {
			style = styleSingle
		}
	}
	if style == styleSingle && !a.single {
		style = styleDouble
	}
	if style == styleLiteral && (!a.block || e.flowLevel > 0 || e.simpleKeyContext) {
		style = styleDouble
	}
	e.increaseIndent(true, false)
	breaksAllowed := !e.simpleKeyContext
	switch style {
	case stylePlain:
		e.writePlain(value, breaksAllowed)
	case styleSingle:
		e.writeSingle(value)
	case styleDouble:
		e.writeDouble(value)
	case styleLiteral:
		e.writeLiteral(value)
	}
	e.popIndent()
}

// writeBreak is WRITE_BREAK: "\n" as a line break, another break
// character copied as it is.
func (e *yamlEmitter) writeBreak(r rune) {
	if r == '\n' {
		e.putBreak()
		return
	}
	e.buf.WriteRune(r)
	e.column = 0
}

func (e *yamlEmitter) writePlain(s string, _ bool) {
	if !e.whitespace && (s != "" || e.flowLevel > 0) {
		e.put(' ')
	}
	breaks := false
	for _, r := range s {
		switch {
		case isBreakRune(r):
			if !breaks && r == '\n' {
				e.putBreak()
			}
			e.writeBreak(r)
			e.indention = true
			breaks = true
		default:
			if breaks {
				e.writeIndent()
			}
			e.writeRune(string(r))
			if r != ' ' {
				e.indention = false
			}
			breaks = false
		}
	}
	e.whitespace = false
	e.indention = false
}

func (e *yamlEmitter) writeSingle(s string) {
	e.writeIndicator("'", true, false, false)
	breaks := false
	for _, r := range s {
		switch {
		case r == ' ':
			e.writeRune(" ")
		case isBreakRune(r):
			if !breaks && r == '\n' {
				e.putBreak()
			}
			e.writeBreak(r)
			e.indention = true
			breaks = true
		default:
			if breaks {
				e.writeIndent()
			}
			if r == '\'' {
				e.put('\'')
			}
			e.writeRune(string(r))
			e.indention = false
			breaks = false
		}
	}
	if breaks {
		e.writeIndent()
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace = false
	e.indention = false
}

func (e *yamlEmitter) writeDouble(s string) {
	e.writeIndicator("\"", true, false, false)
	for _, r := range s {
		if !isPrintable(r) || r == 0xFEFF || isBreakRune(r) || r == '"' || r == '\\' {
			e.put('\\')
			switch r {
			case 0x00:
				e.put('0')
			case 0x07:
				e.put('a')
			case 0x08:
				e.put('b')
			case 0x09:
				e.put('t')
			case 0x0A:
				e.put('n')
			case 0x0B:
				e.put('v')
			case 0x0C:
				e.put('f')
			case 0x0D:
				e.put('r')
			case 0x1B:
				e.put('e')
			case '"':
				e.put('"')
			case '\\':
				e.put('\\')
			case 0x85:
				e.put('N')
			case 0xA0:
				e.put('_')
			case 0x2028:
				e.put('L')
			case 0x2029:
				e.put('P')
			default:
				var h string
				switch {
				case r <= 0xFF:
					h = fmt.Sprintf("x%02X", r)
				case r <= 0xFFFF:
					h = fmt.Sprintf("u%04X", r)
				default:
					h = fmt.Sprintf("U%08X", r)
				}
				e.buf.WriteString(h)
				e.column += len(h)
			}
			continue
		}
		e.writeRune(string(r))
	}
	e.writeIndicator("\"", false, false, false)
	e.whitespace = false
	e.indention = false
}

func (e *yamlEmitter) writeLiteral(s string) {
	e.writeIndicator("|", true, false, false)
	// Block scalar hints: an indentation digit when the text starts with a
	// space or a break; "-" strips a missing final break, "+" keeps extra
	// ones (and leaves the document open-ended).
	if r, _ := utf8.DecodeRuneInString(s); r == ' ' || isBreakRune(r) {
		e.writeIndicator("2", false, false, false)
	}
	e.openEnded = 0
	chomp := ""
	last, n := utf8.DecodeLastRuneInString(s)
	switch {
	case s == "" || !isBreakRune(last):
		chomp = "-"
	case len(s) == n:
		chomp = "+"
		e.openEnded = 2
	default:
		if prev, _ := utf8.DecodeLastRuneInString(s[:len(s)-n]); isBreakRune(prev) {
			chomp = "+"
			e.openEnded = 2
		}
	}
	if chomp != "" {
		e.writeIndicator(chomp, false, false, false)
	}
	e.putBreak()
	e.indention = true
	e.whitespace = true
	breaks := true
	for _, r := range s {
		if isBreakRune(r) {
			e.writeBreak(r)
			e.indention = true
			breaks = true
			continue
		}
		if breaks {
			e.writeIndent()
		}
		e.writeRune(string(r))
		e.indention = false
		breaks = false
	}
}
