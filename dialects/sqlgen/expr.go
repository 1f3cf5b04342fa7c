package sqlgen

import (
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Where writes " WHERE " and the filter e; nothing when e is nil.
func (b *Builder) Where(e query.Expr) {
	if e == nil {
		return
	}
	b.Str(" WHERE ")
	b.Expr(e, false, true)
}

// Expr writes a condition. neg tells whether e is under an odd number of
// NOTs, which only Syntax.PushNot leaves for the comparisons to apply; top
// is true where no parentheses are needed around an AND/OR list (the WHERE
// clause itself, or inside NOT (…)).
func (b *Builder) Expr(e query.Expr, neg, top bool) {
	switch x := e.(type) {
	case *query.Cond:
		if x == nil {
			b.Fail(errEmptyCond())
		} else if w, ok := b.ext.(CondWriter); ok {
			w.WriteCond(x, neg, top)
		} else {
			b.cond(x, neg)
		}
	case query.And:
		b.list(x, true, neg, top)
	case query.Or:
		b.list(x, false, neg, top)
	case query.Not:
		b.not(x.X, neg, top)
	case *query.And:
		deref(b, x, neg, top)
	case *query.Or:
		deref(b, x, neg, top)
	case *query.Not:
		deref(b, x, neg, top)
	default:
		b.Fail(fault.New(fault.Invalid, "empty or unknown condition in filter"))
	}
}

// deref writes the expression x points to; a nil x is an empty condition.
func deref[T query.Expr](b *Builder, x *T, neg, top bool) {
	if x == nil {
		b.Fail(errEmptyCond())
		return
	}
	b.Expr(*x, neg, top)
}

func errEmptyCond() error { return fault.New(fault.Invalid, "empty condition in filter") }

// not writes NOT (x), or with Syntax.PushNot hands the negation down to x.
func (b *Builder) not(x query.Expr, neg, top bool) {
	if b.s.PushNot {
		b.Expr(x, !neg, top)
		return
	}
	b.Str("NOT (")
	b.Expr(x, neg, true)
	b.Str(")")
}

// list writes items joined by AND (and is true) or OR; negated, an AND is
// an OR of the negated items and the other way round. An empty AND is true,
// an empty OR false.
func (b *Builder) list(items []query.Expr, and, neg, top bool) {
	if neg {
		and = !and
	}
	sep, empty := " OR ", b.s.False
	if and {
		sep, empty = " AND ", b.s.True
	}
	switch len(items) {
	case 0:
		b.Str(empty)
		return
	case 1:
		b.Expr(items[0], neg, top)
		return
	}
	b.Open(top)
	for i, it := range items {
		if i > 0 {
			b.Str(sep)
		}
		b.Expr(it, neg, false)
	}
	b.Close(top)
}

// Open writes the "(" of a compound condition unless it is top, the whole
// filter or the whole of a NOT (…).
func (b *Builder) Open(top bool) {
	if !top {
		b.Str("(")
	}
}

// Close writes the ")" Open wrote.
func (b *Builder) Close(top bool) {
	if !top {
		b.Str(")")
	}
}

// Need reports whether c has n values, and fails if not.
func (b *Builder) Need(c *query.Cond, n int) bool {
	if len(c.Args) != n {
		b.Fail(fault.New(fault.Invalid, "operator %s on %q needs %d value(s), got %d", c.Op, c.Column, n, len(c.Args)))
		return false
	}
	return true
}

// comparisons are the operators that compare a column with one value.
var comparisons = map[query.Op]string{
	query.Eq: " = ",
	query.Ne: " <> ",
	query.Gt: " > ",
	query.Ge: " >= ",
	query.Lt: " < ",
	query.Le: " <= ",
}

// Comparison returns how op is written between a column and one value
// (" = ", " <> ", …), and false if op is not such a comparison.
func Comparison(op query.Op) (sym string, ok bool) {
	sym, ok = comparisons[op]
	return sym, ok
}

// cond writes one comparison in the standard form.
func (b *Builder) cond(c *query.Cond, neg bool) {
	if neg {
		// Only PushNot leaves a NOT to the comparison, for a CondWriter.
		b.Fail(fault.New(fault.Internal, "a negated condition needs the dialect's own CondWriter"))
		return
	}
	if sym, ok := comparisons[c.Op]; ok {
		if b.Need(c, 1) {
			b.Col(c.Column)
			b.Str(sym)
			b.Arg(c.Args[0])
		}
		return
	}
	switch c.Op {
	case query.IsNull, query.IsNotNull:
		if b.Need(c, 0) {
			b.Col(c.Column)
			if c.Op == query.IsNull {
				b.Str(" IS NULL")
			} else {
				b.Str(" IS NOT NULL")
			}
		}
	case query.IsTrue, query.IsFalse:
		if b.Need(c, 0) {
			b.boolTest(c)
		}
	case query.Like, query.ILike:
		if b.Need(c, 1) {
			b.like(c)
		}
	case query.In, query.NotIn:
		b.in(c)
	case query.Between:
		if b.Need(c, 2) {
			b.Col(c.Column)
			b.Str(" BETWEEN ")
			b.Arg(c.Args[0])
			b.Str(" AND ")
			b.Arg(c.Args[1])
		}
	default:
		b.Fail(fault.New(fault.Unsupported, "operator %q is not supported", string(c.Op)))
	}
}

// boolTest writes IS TRUE or IS FALSE, or its Syntax.BitBooleans form.
func (b *Builder) boolTest(c *query.Cond) {
	isTrue := c.Op == query.IsTrue
	if !b.s.BitBooleans {
		b.Col(c.Column)
		if isTrue {
			b.Str(" IS TRUE")
		} else {
			b.Str(" IS FALSE")
		}
		return
	}
	// "= 1" alone would be UNKNOWN on NULL, and NOT (…) of it would drop
	// the NULL rows that NOT (x IS TRUE) keeps; the IS NOT NULL term makes
	// the test two-valued like IS TRUE, and still lets an index on the
	// column be used.
	b.Str("(")
	b.Col(c.Column)
	if isTrue {
		b.Str(" = 1 AND ")
	} else {
		b.Str(" = 0 AND ")
	}
	b.Col(c.Column)
	b.Str(" IS NOT NULL)")
}

// like writes LIKE or ILIKE with Syntax.LikeTail, ILIKE as LOWER() on both
// sides where the engine has no ILIKE.
func (b *Builder) like(c *query.Cond) {
	pat := c.Args[0]
	if b.s.LikeArg != nil {
		pat = b.s.LikeArg(pat)
	}
	if c.Op == query.ILike && b.s.ILike == "" {
		b.Str("LOWER(")
		b.Col(c.Column)
		b.Str(") LIKE LOWER(")
		b.Arg(pat)
		b.Str(")")
		b.Str(b.s.LikeTail)
		return
	}
	b.Col(c.Column)
	if c.Op == query.Like {
		b.Str(" LIKE ")
	} else {
		b.Str(b.s.ILike)
	}
	b.Arg(pat)
	b.Str(b.s.LikeTail)
}

// in writes IN or NOT IN.
func (b *Builder) in(c *query.Cond) {
	if len(c.Args) == 0 {
		// x IN () is a syntax error; its meaning is constant.
		if c.Op == query.In {
			b.Str(b.s.False)
		} else {
			b.Str(b.s.True)
		}
		return
	}
	b.InList(c, c.Op == query.In, b.Arg)
}

// InList writes c's column IN (in is true) or NOT IN the list of c's
// values, each written by value; c has at least one value.
func (b *Builder) InList(c *query.Cond, in bool, value func(v any)) {
	b.Col(c.Column)
	if in {
		b.Str(" IN (")
	} else {
		b.Str(" NOT IN (")
	}
	b.List(len(c.Args), func(i int) { value(c.Args[i]) })
	b.Str(")")
}
