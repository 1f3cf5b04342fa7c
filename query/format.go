package query

import (
	"fmt"
	"strings"
)

// Format renders an expression for people (explanations, logs). It is not
// SQL and never reaches a database.
func Format(e Expr) string {
	var b strings.Builder
	format(&b, e, false)
	return b.String()
}

func format(b *strings.Builder, e Expr, nested bool) {
	switch x := e.(type) {
	case nil:
		b.WriteString("TRUE")
	case *Cond:
		b.WriteString(x.Column)
		b.WriteByte(' ')
		b.WriteString(string(x.Op))
		for i, a := range x.Args {
			if i == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%#v", a)
		}
	case Not:
		b.WriteString("NOT ")
		format(b, x.X, true)
	case And:
		join(b, []Expr(x), " AND ", "TRUE", nested)
	case Or:
		join(b, []Expr(x), " OR ", "FALSE", nested)
	}
}

func join(b *strings.Builder, items []Expr, sep, empty string, nested bool) {
	switch len(items) {
	case 0:
		b.WriteString(empty)
		return
	case 1:
		format(b, items[0], nested)
		return
	}
	if nested {
		b.WriteByte('(')
	}
	for i, it := range items {
		if i > 0 {
			b.WriteString(sep)
		}
		format(b, it, true)
	}
	if nested {
		b.WriteByte(')')
	}
}
