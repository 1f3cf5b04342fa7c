package query

import (
	"math/big"
	"strings"
	"unicode/utf8"
)

// Tri is a three-valued truth: SQL's TRUE, FALSE and UNKNOWN.
type Tri int8

// Truth values.
const (
	Unknown Tri = iota
	True
	False
)

func not(t Tri) Tri {
	switch t {
	case True:
		return False
	case False:
		return True
	}
	return Unknown
}

// Lookup gives the value of a column and whether it is known. Values are
// coerced like filter arguments (int64, float64, bool, string, decimal
// strings); nil is SQL NULL; Default{} is unknown.
type Lookup func(column string) (any, bool)

// Residual folds the conditions whose columns are known and returns what
// is left: (nil, True|False) when fully decided, or (expr, Unknown) with
// only the undecided conditions. It evaluates like SQL would, so a
// comparison with NULL is UNKNOWN, and an undecidable value comparison
// stays in the residual.
func Residual(e Expr, look Lookup) (Expr, Tri) {
	return Fold(e, func(c *Cond) (Tri, bool) {
		v, ok := look(c.Column)
		if !ok {
			return Unknown, false
		}
		if _, isDef := v.(Default); isDef {
			return Unknown, false
		}
		t, decided := evalCond(c, v)
		if !decided {
			return Unknown, false
		}
		if t == Unknown {
			// NULL comparison: never satisfied in a WHERE clause.
			return False, true
		}
		return t, true
	})
}

// Decide tells whether a condition is known to be True or False (decided
// true), or must stay in the residual (decided false).
type Decide func(c *Cond) (t Tri, decided bool)

// Fold folds the conditions decide decides and returns what is left, like
// Residual: (nil, True|False) when e is fully decided, or (expr, Unknown)
// with only the undecided conditions. Whoever decides (Go for Residual, the
// database for a row scope on written values) Fold only does the logic.
func Fold(e Expr, decide Decide) (Expr, Tri) {
	switch x := e.(type) {
	case nil:
		return nil, True
	case *Cond:
		t, ok := decide(x)
		if !ok || t == Unknown {
			return x, Unknown
		}
		return nil, t
	case Not:
		r, t := Fold(x.X, decide)
		if t != Unknown {
			return nil, not(t)
		}
		return Not{X: r}, Unknown
	case And:
		var rest And
		for _, it := range x {
			r, t := Fold(it, decide)
			switch t {
			case False:
				return nil, False
			case Unknown:
				rest = append(rest, r)
			}
		}
		if len(rest) == 0 {
			return nil, True
		}
		return rest, Unknown
	case Or:
		var rest Or
		for _, it := range x {
			r, t := Fold(it, decide)
			switch t {
			case True:
				return nil, True
			case Unknown:
				rest = append(rest, r)
			}
		}
		if len(rest) == 0 {
			return nil, False
		}
		return rest, Unknown
	}
	return e, Unknown
}

// evalCond evaluates one condition on a value. decided is false when the
// values cannot be compared here (the database must decide).
func evalCond(c *Cond, v any) (t Tri, decided bool) {
	switch c.Op {
	case IsNull:
		return boolTri(v == nil), true
	case IsNotNull:
		return boolTri(v != nil), true
	case IsTrue, IsFalse:
		if v == nil {
			return False, true
		}
		b, ok := v.(bool)
		if !ok {
			return Unknown, false
		}
		return boolTri(b == (c.Op == IsTrue)), true
	}
	if v == nil {
		return Unknown, true
	}
	switch c.Op {
	case Eq, Ne, Gt, Ge, Lt, Le:
		if len(c.Args) != 1 {
			return Unknown, false
		}
		cmp, ok := compare(v, c.Args[0])
		if !ok {
			return Unknown, false
		}
		var r bool
		switch c.Op {
		case Eq:
			r = cmp == 0
		case Ne:
			r = cmp != 0
		case Gt:
			r = cmp > 0
		case Ge:
			r = cmp >= 0
		case Lt:
			r = cmp < 0
		case Le:
			r = cmp <= 0
		}
		return boolTri(r), true
	case In, NotIn:
		for _, a := range c.Args {
			cmp, ok := compare(v, a)
			if !ok {
				return Unknown, false
			}
			if cmp == 0 {
				return boolTri(c.Op == In), true
			}
		}
		return boolTri(c.Op == NotIn), true
	case Between:
		if len(c.Args) != 2 {
			return Unknown, false
		}
		lo, ok1 := compare(v, c.Args[0])
		hi, ok2 := compare(v, c.Args[1])
		if !ok1 || !ok2 {
			return Unknown, false
		}
		return boolTri(lo >= 0 && hi <= 0), true
	case Like, ILike:
		s, ok := v.(string)
		if !ok || len(c.Args) != 1 {
			return Unknown, false
		}
		p, ok := c.Args[0].(string)
		if !ok {
			return Unknown, false
		}
		if c.Op == ILike {
			s, p = strings.ToLower(s), strings.ToLower(p)
		}
		return boolTri(likeMatch(s, p)), true
	}
	return Unknown, false
}

func boolTri(b bool) Tri {
	if b {
		return True
	}
	return False
}

// compare orders two coerced values of the same kind.
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpOrdered(x, y), true
		case float64:
			return cmpOrdered(float64(x), y), true
		case string:
			return cmpDecimal(big.NewRat(x, 1), y)
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmpOrdered(x, y), true
		case int64:
			return cmpOrdered(x, float64(y)), true
		}
	case bool:
		if y, ok := b.(bool); ok {
			if x == y {
				return 0, true
			}
			if !x {
				return -1, true
			}
			return 1, true
		}
	case string:
		switch y := b.(type) {
		case string:
			// Decimal strings compare as numbers; other text byte-wise.
			if rx, ok := new(big.Rat).SetString(x); ok {
				if ry, ok := new(big.Rat).SetString(y); ok {
					return rx.Cmp(ry), true
				}
			}
			return strings.Compare(x, y), true
		case int64:
			c, ok := cmpDecimal(big.NewRat(y, 1), x)
			return -c, ok
		}
	}
	return 0, false
}

func cmpDecimal(a *big.Rat, s string) (int, bool) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, false
	}
	return a.Cmp(r), true
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// likeMatch matches s against a SQL LIKE pattern escaped with backslash.
func likeMatch(s, p string) bool {
	if p == "" {
		return s == ""
	}
	switch p[0] {
	case '%':
		for i := 0; i <= len(s); i++ {
			if likeMatch(s[i:], p[1:]) {
				return true
			}
		}
		return false
	case '_':
		if s == "" {
			return false
		}
		_, n := utf8.DecodeRuneInString(s)
		return likeMatch(s[n:], p[1:])
	case '\\':
		if len(p) > 1 {
			p = p[1:]
		}
	}
	if s == "" || s[0] != p[0] {
		return false
	}
	return likeMatch(s[1:], p[1:])
}
