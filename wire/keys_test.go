package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestJSONKeysEveryWidth: the member names of a JSON row are the same
// bytes whether the encoder keeps them in itself (up to smallCols columns)
// or apart (more), and equal to each name quoted as encoding/json quotes
// it; the empty result and ndjson too.
func TestJSONKeysEveryWidth(t *testing.T) {
	for _, width := range []int{0, 1, 2, smallCols - 1, smallCols, smallCols + 1, 3 * smallCols} {
		names := make([]string, width)
		row := make([]any, width)
		for i := range names {
			names[i] = fmt.Sprintf("c%d \"q\" é\n", i)
			row[i] = int64(i)
		}
		var want strings.Builder
		want.WriteString("{")
		for i, n := range names {
			k, _ := json.Marshal(n)
			if i > 0 {
				want.WriteString(",")
			}
			fmt.Fprintf(&want, "%s:%d", k, i)
		}
		want.WriteString("}")
		if got, w := stream(t, JSON, newRows(names, row, row), nil), `{"data":[`+want.String()+","+want.String()+"]}\n"; got != w {
			t.Errorf("%d columns: json\n%s\nwant\n%s", width, got, w)
		}
		if got, w := stream(t, NDJSON, newRows(names, row), nil), want.String()+"\n"; got != w {
			t.Errorf("%d columns: ndjson\n%s\nwant\n%s", width, got, w)
		}
	}
}
