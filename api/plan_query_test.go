package api

import (
	"net/http/httptest"
	"reflect"
	"testing"
)

// TestPlanFromRawQuery: a plan read from the raw query string is the plan
// of the request's url.Values, refusals alike.
func TestPlanFromRawQuery(t *testing.T) {
	for _, q := range []string{"ps=1&pg=0&id=eq.7", "ps=1&pg=0&id=eq.%zz&id=gt.1", "ps=1;pg=0", "pg=0&ps=0", "ps=1&pg=0&b=eq.1&a=eq.2&b=lt.3&format=csv"} {
		r := httptest.NewRequest("GET", AutoPrefix+"/org/proj/pg/public/items?"+q, nil)
		want, wantErr := planFromRequest(nil, r, Config{}, r.URL.Query())
		got, err := PlanFromRequest(nil, r, Config{})
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(err, wantErr) {
			t.Errorf("%q: %+v %v, want %+v %v", q, got, err, want, wantErr)
		}
	}
}

// BenchmarkPlanFromRawQuery plans the REST read of one row by key as the
// read handler does, from the raw query string.
func BenchmarkPlanFromRawQuery(b *testing.B) {
	r := httptest.NewRequest("GET", AutoPrefix+"/org/proj/pg/public/items?ps=1&pg=0&id=eq.7", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PlanFromRequest(nil, r, Config{}); err != nil {
			b.Fatal(err)
		}
	}
}
