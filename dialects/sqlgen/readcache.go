package sqlgen

import (
	"encoding/binary"
	"sync"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// The text of a plain read — its columns, its table, at most one
// comparison of a column with one value, its order and whether it has a
// limit and an offset — is kept once written, under a key that holds
// every input of that text: those parts of the plan and the Syntax fields
// that such a read's text depends on (readKey). A read of the same key
// takes the text and binds its values through the same code that wrote
// it, with the text muted, so its values, their order and the errors are
// those of a fresh render. The identifiers are checked again on every
// read, so two syntaxes alike but for CheckIdent share nothing they
// should not.
const (
	// readKeyRoom is the longest key kept (and the room made for it on
	// the stack); a read of a longer key is rendered each time.
	readKeyRoom = 1024
	// readTextsMax bounds the texts kept; the cache starts again empty
	// when it is full.
	readTextsMax = 512
)

// readText is a kept read's text and how many values it binds.
type readText struct {
	sql  string
	args int
}

var readTexts struct {
	mu sync.RWMutex
	m  map[string]readText
}

// renderRead is Render of a read.
func (b *Builder) renderRead(p *query.Plan) (dialects.Stmt, error) {
	if !b.fresh() || p.IsAggregate() || !b.plainRead(p) || readKeyLen(b.s, p) > readKeyRoom {
		b.Read(p)
		return b.Stmt()
	}
	var room [readKeyRoom]byte
	key := readKey(room[:0], b.s, p)
	readTexts.mu.RLock()
	t, ok := readTexts.m[string(key)]
	readTexts.mu.RUnlock()
	if ok && b.identsPass(p) {
		b.mute = true
		b.args = make([]any, 0, t.args)
		b.Where(p.Where)
		b.orderPage(p)
		b.mute = false
		return b.stmt(t.sql)
	}
	b.Read(p)
	st, err := b.Stmt()
	if err == nil && !ok {
		readTexts.mu.Lock()
		if readTexts.m == nil || len(readTexts.m) >= readTextsMax {
			readTexts.m = make(map[string]readText)
		}
		readTexts.m[string(key)] = readText{sql: st.SQL, args: len(st.Args)}
		readTexts.mu.Unlock()
	}
	return st, err
}

// fresh reports whether nothing was written to b yet.
func (b *Builder) fresh() bool {
	return b.sb.Len() == 0 && len(b.args) == 0 && b.err == nil && b.qualify == nil && !b.mute
}

// plainRead reports whether p, not an aggregate, has a kept text's shape:
// no filter or one comparison of a column with one value written by the
// standard writer, and a page of no negative size or number.
func (b *Builder) plainRead(p *query.Plan) bool {
	if p.Limit < 0 || p.Offset < 0 {
		return false
	}
	switch x := p.Where.(type) {
	case nil:
		return true
	case *query.Cond:
		if x == nil || len(x.Args) != 1 {
			return false
		}
		if _, ok := comparisons[x.Op]; !ok {
			return false
		}
		_, own := b.ext.(CondWriter)
		return !own
	}
	return false
}

// identsPass reports whether every identifier of a plain read passes the
// syntax's check.
func (b *Builder) identsPass(p *query.Plan) bool {
	if p.Schema != "" && b.checkIdent(p.Schema) != nil {
		return false
	}
	if b.checkIdent(p.Table) != nil {
		return false
	}
	for _, c := range p.Columns {
		if b.checkIdent(c) != nil {
			return false
		}
	}
	if c, _ := p.Where.(*query.Cond); c != nil && b.checkIdent(c.Column) != nil {
		return false
	}
	for _, o := range p.Order {
		if b.checkIdent(o.Column) != nil {
			return false
		}
	}
	return true
}

// The flags of a read's key.
const (
	keyNumbered = 1 << iota
	keyNullsLargest
	keyOffsetFetch
	keyNoLimitArg
	keyLimit
	keyOffset
	keyWhere
)

// readKey appends to dst the key of a plain read's text in syntax s:
// every Syntax field the text depends on (the others concern writes,
// aggregates, conditions other than a comparison, or the values bound,
// not the text; TestReadKeyFields lists them), and the plan's schema,
// table, columns, condition, order, and whether it has a limit and an
// offset. Each string is written after its length, so no two keys of
// different inputs are equal.
func readKey(dst []byte, s *Syntax, p *query.Plan) []byte {
	var flags byte
	set := func(on bool, f byte) {
		if on {
			flags |= f
		}
	}
	set(s.Numbered, keyNumbered)
	set(s.NullsLargest, keyNullsLargest)
	set(s.OffsetFetch, keyOffsetFetch)
	set(s.NoLimitArg != nil, keyNoLimitArg)
	set(p.Limit > 0, keyLimit)
	set(p.Offset > 0, keyOffset)
	c, _ := p.Where.(*query.Cond)
	set(c != nil, keyWhere)
	dst = append(dst, flags, s.QuoteOpen, s.QuoteClose, s.QuoteEscape)
	dst = keyString(dst, s.Placeholder)
	dst = keyString(dst, s.NoLimit)
	dst = keyString(dst, p.Schema)
	dst = keyString(dst, p.Table)
	dst = binary.AppendUvarint(dst, uint64(len(p.Columns)))
	for _, col := range p.Columns {
		dst = keyString(dst, col)
	}
	if c != nil {
		dst = keyString(dst, c.Column)
		dst = keyString(dst, string(c.Op))
	}
	dst = binary.AppendUvarint(dst, uint64(len(p.Order)))
	for _, o := range p.Order {
		desc := byte(0)
		if o.Desc {
			desc = 1
		}
		dst = append(dst, desc)
		dst = keyString(dst, o.Column)
	}
	return dst
}

// readKeyLen is at least the length of readKey's key.
func readKeyLen(s *Syntax, p *query.Plan) int {
	const n = binary.MaxVarintLen64
	l := 4 + n + len(s.Placeholder) + n + len(s.NoLimit) + n + len(p.Schema) + n + len(p.Table) + n
	for _, c := range p.Columns {
		l += n + len(c)
	}
	if c, _ := p.Where.(*query.Cond); c != nil {
		l += n + len(c.Column) + n + len(c.Op)
	}
	l += n
	for _, o := range p.Order {
		l += 1 + n + len(o.Column)
	}
	return l
}

// keyString appends v after its length.
func keyString(dst []byte, v string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	return append(dst, v...)
}
