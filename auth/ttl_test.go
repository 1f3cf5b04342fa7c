package auth

import (
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

func TestParseTTL(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30d": 30 * 24 * time.Hour, "1d": 24 * time.Hour, "90m": 90 * time.Minute, "720h": 720 * time.Hour, "1h30m": 90 * time.Minute,
	} {
		if got, err := ParseTTL(in); err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "0d", "-1d", "1.5d", "30days", "0", "-5m", "1e9d", "ten"} {
		if _, err := ParseTTL(in); fault.KindOf(err) != fault.Invalid {
			t.Errorf("ParseTTL(%q): %v, want an Invalid fault", in, err)
		}
	}
}
