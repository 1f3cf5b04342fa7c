package query

import "github.com/littlebitlabs/minimal/fault"

// Mask is a CRUD permission mask: a token's key_type or an operator's lock.
// Its text form has four characters in create-read-update-delete order, each
// the letter or '-': "crud" allows everything, "-r--" only reads.
type Mask uint8

// Mask bits.
const (
	MaskCreate Mask = 1 << iota
	MaskRead
	MaskUpdate
	MaskDelete

	MaskAll Mask = MaskCreate | MaskRead | MaskUpdate | MaskDelete
)

const maskLetters = "crud"

// ParseMask parses a four-character mask such as "crud" or "-r--".
func ParseMask(s string) (Mask, error) {
	if len(s) != 4 {
		return 0, fault.New(fault.Invalid, "mask %q must have four characters in c-r-u-d order, e.g. crud or -r--", s)
	}
	var m Mask
	for i := 0; i < 4; i++ {
		switch s[i] {
		case maskLetters[i], maskLetters[i] - 'a' + 'A':
			m |= 1 << i
		case '-':
		default:
			return 0, fault.New(fault.Invalid, "mask %q: position %d must be %q or '-'", s, i+1, maskLetters[i])
		}
	}
	return m, nil
}

// String renders the mask in its four-character form.
func (m Mask) String() string {
	b := []byte("----")
	for i := 0; i < 4; i++ {
		if m&(1<<i) != 0 {
			b[i] = maskLetters[i]
		}
	}
	return string(b)
}

// Allows reports whether the mask permits an action.
func (m Mask) Allows(a Action) bool { return m&a.Bit() != 0 }

// Covers reports whether m holds every bit of o.
func (m Mask) Covers(o Mask) bool { return m&o == o }

// Bit is the mask bit of an action.
func (a Action) Bit() Mask {
	switch a {
	case Insert:
		return MaskCreate
	case Read:
		return MaskRead
	case Update:
		return MaskUpdate
	case Delete:
		return MaskDelete
	}
	return 0
}
