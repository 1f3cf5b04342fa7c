package auth

import (
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// ParseTTL reads a token lifetime: a Go duration (90m, 720h) or a whole
// number of days (30d). It must be positive; a malformed one is
// fault.Invalid naming the forms accepted. Mint caps it at MaxTTL.
func ParseTTL(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		n, nerr := strconv.ParseInt(days, 10, 32)
		if nerr == nil && n > 0 && n <= 100000 { // past ~270 years a Duration overflows
			d, err = time.Duration(n)*24*time.Hour, nil
		}
	}
	if err != nil || d <= 0 {
		return 0, fault.New(fault.Invalid, "ttl %q must be a positive duration such as 30m, 720h or 30d", s)
	}
	return d, nil
}
