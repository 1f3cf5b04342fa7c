package dialecttest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
)

func TestHarnessCheck(t *testing.T) {
	h := Harness{Type: "none", Config: dialects.Config{DSN: "x"}}
	err := h.check()
	if err == nil {
		t.Fatal("an empty harness passed")
	}
	for _, want := range []string{"not registered", "Schema is empty", "NullOrder is not declared", "ViaProxy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("check does not say %q: %v", want, err)
		}
	}
}

func TestSameCell(t *testing.T) {
	at := time.Date(2024, 2, 29, 21, 59, 59, 0, time.UTC)
	plus2 := at.In(time.FixedZone("", 2*3600))
	tests := []struct {
		kind      dialects.Kind
		got, want any
		same      bool
	}{
		{dialects.KindInt, int64(5), int64(5), true},
		{dialects.KindInt, 5.0, int64(5), false}, // must be int64
		{dialects.KindFloat, json.Number("0.1"), 0.1, true},
		{dialects.KindDecimal, json.Number("1.500000"), "1.5", true},
		{dialects.KindDecimal, json.Number("0.1000000000000000055"), "0.1", false},
		{dialects.KindDecimal, "1.5", "1.5", false}, // must be json.Number
		{dialects.KindUUID, "abc", "ABC", true},
		{dialects.KindUUID, "ABC", "ABC", false},
		{dialects.KindTimestampTZ, plus2, at, true},
		{dialects.KindTimestampTZ, at.Add(time.Microsecond), at, false},
		{dialects.KindJSON, json.RawMessage(`{"b": 1.0, "a": [1]}`), json.RawMessage(`{"a":[1],"b":1}`), true},
		{dialects.KindJSON, json.RawMessage(`{"a":9007199254740992}`), json.RawMessage(`{"a":9007199254740993}`), false},
		{dialects.KindBytes, []byte{}, []byte{}, true},
		{dialects.KindBytes, nil, []byte{}, false},
		{dialects.KindArray, []any{json.Number("1"), int64(2)}, []any{int64(1), int64(2)}, true},
		{dialects.KindString, nil, nil, true},
		{dialects.KindString, "", nil, false},
	}
	for i, tt := range tests {
		if why := sameCell(tt.kind, tt.got, tt.want); (why == "") != tt.same {
			t.Errorf("%d: sameCell(%s, %#v, %#v) = %q, want same=%v", i, tt.kind, tt.got, tt.want, why, tt.same)
		}
	}
}
