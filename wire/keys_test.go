package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestJSONKeysEveryWidth: the member names of a JSON row are each name
// quoted as encoding/json quotes it, at every width, the empty result and
// ndjson too, and still after wider and narrower results (the encoders
// and their keys are reused).
func TestJSONKeysEveryWidth(t *testing.T) {
	for _, width := range []int{0, 1, 2, 15, 16, 17, 48, 17, 2, 0, 1, 16} {
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

// TestJSONEncodersConcurrent: streams running at once, each of its own
// width, each answer its own keys (an encoder is reused only once put
// back); run with -race.
func TestJSONEncodersConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			names := make([]string, g+1)
			row := make([]any, g+1)
			for i := range names {
				names[i] = fmt.Sprintf("g%dc%d", g, i)
				row[i] = int64(i)
			}
			for range 200 {
				got := stream(t, NDJSON, newRows(names, row), nil)
				var m map[string]int64
				if err := json.Unmarshal([]byte(got), &m); err != nil || len(m) != len(names) {
					t.Errorf("width %d: %q", g+1, got)
					return
				}
				for i, n := range names {
					if m[n] != int64(i) {
						t.Errorf("width %d: %q", g+1, got)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
