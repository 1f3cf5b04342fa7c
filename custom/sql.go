package custom

import (
	"strings"

	"github.com/littlebitlabs/minimal/fault"
)

// The lexical rules a statement is read with are PostgreSQL's, whatever
// the database type runs it (the other types' own quoting is not modelled;
// their drivers bind the values all the same):
//
//   - '…' strings ('' is a quote), E'…' strings (backslash escapes),
//     $tag$…$tag$ dollar-quoted strings and "…" quoted names are opaque;
//   - -- line comments and /* … */ block comments (nested) are opaque;
//   - :name, a colon directly followed by a letter or '_', is a parameter
//     outside those; '::' is PostgreSQL's cast and not a parameter;
//   - $1-style positional placeholders are refused: name every parameter;
//   - ';' may only end the statement (one statement per entry).
//
// A declared parameter's :name inside a string, a quoted name or a dollar
// quote is refused rather than left as text: the author almost certainly
// meant a value there, and it would never be bound.

// tokKind is the class of a token.
type tokKind uint8

const (
	tWord   tokKind = iota // keyword, name or number
	tQuoted                // "quoted name" (text holds the name, unquoted)
	tString                // a string literal of any form
	tParam                 // :name (text holds name)
	tSymbol                // any other character, or "::"
)

type token struct {
	kind       tokKind
	text       string
	start, end int // byte offsets in the statement
}

// statement is one SQL text cut at its parameters: parts[0] names[0]
// parts[1] … names[n-1] parts[n].
type statement struct {
	parts []string
	names []string
	// verb is the first keyword, lower-case: select, with, values, table,
	// insert, update or delete.
	verb string
	// target is the table an insert, update or delete writes (a plain name
	// folded to lower case, as PostgreSQL does; a quoted one as written).
	target string
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '$'
}

// isParamStart is the first byte of a parameter name: an ASCII letter or
// '_'.
func isParamStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isParamChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= '0' && c <= '9'
}

// lexer walks one statement. declared holds the parameter names, to refuse
// them inside quotes.
type lexer struct {
	src      string
	pos      int
	declared map[string]bool
	toks     []token
	// semi is the offset of a final ';', or -1.
	semi int
}

func lexErr(format string, args ...any) error { return fault.New(fault.Invalid, format, args...) }

// lex splits src into tokens, skipping blanks and comments.
func lex(src string, declared map[string]bool) (*lexer, error) {
	l := &lexer{src: src, declared: declared, semi: -1}
	for {
		if err := l.skip(); err != nil {
			return nil, err
		}
		if l.pos >= len(l.src) {
			return l, nil
		}
		if l.semi >= 0 {
			return nil, lexErr("';' ends the statement but more follows: give one statement per entry (several go in statements:)")
		}
		if err := l.token(); err != nil {
			return nil, err
		}
	}
}

// skip passes blanks and comments.
func (l *lexer) skip() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case strings.HasPrefix(l.src[l.pos:], "--"):
			if i := strings.IndexByte(l.src[l.pos:], '\n'); i >= 0 {
				l.pos += i + 1
			} else {
				l.pos = len(l.src)
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			depth, i := 1, l.pos+2
			for depth > 0 {
				switch {
				case i+1 >= len(l.src):
					return lexErr("a /* comment is not closed")
				case l.src[i] == '/' && l.src[i+1] == '*':
					depth, i = depth+1, i+2
				case l.src[i] == '*' && l.src[i+1] == '/':
					depth, i = depth-1, i+2
				default:
					i++
				}
			}
			l.pos = i
		default:
			return nil
		}
	}
	return nil
}

func (l *lexer) emit(kind tokKind, text string, start int) {
	l.toks = append(l.toks, token{kind: kind, text: text, start: start, end: l.pos})
}

// token reads one token at l.pos, which is not blank.
func (l *lexer) token() error {
	s, start := l.src, l.pos
	c := s[start]
	switch {
	case c == '\'':
		escapes := start > 0 && (s[start-1] == 'E' || s[start-1] == 'e') && (start < 2 || !isIdentChar(s[start-2]))
		body, err := l.quoted('\'', escapes, "a string literal")
		if err != nil {
			return err
		}
		if err := l.noParamIn(body, "a string literal"); err != nil {
			return err
		}
		l.emit(tString, body, start)
	case c == '"':
		body, err := l.quoted('"', false, "a quoted name")
		if err != nil {
			return err
		}
		if err := l.noParamIn(body, "a quoted name"); err != nil {
			return err
		}
		l.emit(tQuoted, strings.ReplaceAll(body, `""`, `"`), start)
	case c == '$':
		j := start + 1
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			return lexErr("positional placeholder $%c: name parameters as :name", s[j])
		}
		for j < len(s) && isIdentChar(s[j]) && s[j] != '$' {
			j++
		}
		if j >= len(s) || s[j] != '$' {
			return lexErr("unexpected '$' (dollar quotes are $tag$…$tag$)")
		}
		tag := s[start : j+1]
		end := strings.Index(s[j+1:], tag)
		if end < 0 {
			return lexErr("dollar quote %s is not closed", tag)
		}
		body := s[j+1 : j+1+end]
		l.pos = j + 1 + end + len(tag)
		if err := l.noParamIn(body, "a dollar-quoted string"); err != nil {
			return err
		}
		l.emit(tString, body, start)
	case c == ':':
		switch {
		case start+1 < len(s) && s[start+1] == ':':
			l.pos += 2
			l.emit(tSymbol, "::", start)
		case start+1 < len(s) && isParamStart(s[start+1]):
			j := start + 1
			for j < len(s) && isParamChar(s[j]) {
				j++
			}
			l.pos = j
			l.emit(tParam, s[start+1:j], start)
		default:
			l.pos++
			l.emit(tSymbol, ":", start)
		}
	case c == ';':
		l.semi = start
		l.pos++
	case isIdentChar(c):
		j := start
		for j < len(s) && isIdentChar(s[j]) {
			j++
		}
		l.pos = j
		l.emit(tWord, s[start:j], start)
	default:
		l.pos++
		l.emit(tSymbol, s[start:l.pos], start)
	}
	return nil
}

// quoted reads a literal or name closed by q, where a doubled q stands for
// one, and returns its body as written (escapes kept).
func (l *lexer) quoted(q byte, backslash bool, what string) (string, error) {
	s := l.src
	i := l.pos + 1
	for i < len(s) {
		switch {
		case backslash && s[i] == '\\':
			i += 2
		case s[i] == q && i+1 < len(s) && s[i+1] == q:
			i += 2
		case s[i] == q:
			body := s[l.pos+1 : i]
			l.pos = i + 1
			return body, nil
		default:
			i++
		}
	}
	return "", lexErr("%s is not closed", what)
}

// noParamIn refuses a declared parameter written inside quotes.
func (l *lexer) noParamIn(body, what string) error {
	for i := 0; i < len(body); i++ {
		if body[i] != ':' || i+1 >= len(body) || !isParamStart(body[i+1]) || (i > 0 && body[i-1] == ':') {
			continue
		}
		j := i + 1
		for j < len(body) && isParamChar(body[j]) {
			j++
		}
		if name := body[i+1 : j]; l.declared[name] {
			return lexErr(":%s inside %s is text, not the parameter: write :%s outside the quotes (e.g. '%%' || :%s || '%%' to build a pattern)", name, what, name, name)
		}
		i = j - 1
	}
	return nil
}

// parseStatement reads one statement: its parameters (each must be
// declared), its verb and, for a write, its target table, which must be in
// schema when qualified.
func parseStatement(src string, declared map[string]bool, schema string) (*statement, error) {
	l, err := lex(src, declared)
	if err != nil {
		return nil, err
	}
	if len(l.toks) == 0 {
		return nil, lexErr("the statement is empty")
	}
	end := len(src)
	if l.semi >= 0 {
		end = l.semi
	}
	st := &statement{}
	at := 0
	for _, t := range l.toks {
		if t.kind != tParam {
			continue
		}
		if !declared[t.text] {
			return nil, lexErr(":%s is not a declared parameter (declare it under params, or write '::' for a cast)", t.text)
		}
		st.parts = append(st.parts, src[at:t.start])
		st.names = append(st.names, t.text)
		at = t.end
	}
	st.parts = append(st.parts, src[at:end])

	// The verb is the first word; a read may open with parentheses.
	i := 0
	for i < len(l.toks) && l.toks[i].kind == tSymbol && l.toks[i].text == "(" {
		i++
	}
	if i == len(l.toks) || l.toks[i].kind != tWord {
		return nil, lexErr("a statement must begin with SELECT, WITH, VALUES, TABLE, INSERT, UPDATE or DELETE")
	}
	st.verb = strings.ToLower(l.toks[i].text)
	rest := l.toks[i+1:]
	switch st.verb {
	case "select", "with", "values", "table":
		return st, nil
	case "insert":
		rest, err = keyword(rest, "into", "INSERT")
	case "delete":
		rest, err = keyword(rest, "from", "DELETE")
	case "update":
	default:
		return nil, lexErr("a statement must begin with SELECT, WITH, VALUES, TABLE, INSERT, UPDATE or DELETE, not %s", strings.ToUpper(st.verb))
	}
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 && rest[0].kind == tWord && strings.EqualFold(rest[0].text, "only") {
		rest = rest[1:]
	}
	name, rest, ok := readName(rest)
	if !ok {
		return nil, lexErr("cannot read the table %s writes", strings.ToUpper(st.verb))
	}
	if len(rest) >= 2 && rest[0].kind == tSymbol && rest[0].text == "." {
		table, _, ok := readName(rest[1:])
		if !ok {
			return nil, lexErr("cannot read the table %s writes", strings.ToUpper(st.verb))
		}
		if name != schema {
			return nil, lexErr("%s writes %s.%s: a custom API writes only tables of its own schema %q", strings.ToUpper(st.verb), name, table, schema)
		}
		name = table
	}
	st.target = name
	return st, nil
}

// keyword consumes the word kw (case-insensitive) that must follow verb.
func keyword(toks []token, kw, verb string) ([]token, error) {
	if len(toks) == 0 || toks[0].kind != tWord || !strings.EqualFold(toks[0].text, kw) {
		return nil, lexErr("%s must be followed by %s", verb, strings.ToUpper(kw))
	}
	return toks[1:], nil
}

// readName reads a plain name (folded to lower case) or a quoted one.
func readName(toks []token) (string, []token, bool) {
	if len(toks) == 0 {
		return "", nil, false
	}
	switch t := toks[0]; t.kind {
	case tWord:
		if !isIdentStart(t.text[0]) {
			return "", nil, false
		}
		return asciiLower(t.text), toks[1:], true
	case tQuoted:
		return t.text, toks[1:], true
	}
	return "", nil, false
}

// asciiLower folds ASCII letters only, as PostgreSQL folds plain names.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
