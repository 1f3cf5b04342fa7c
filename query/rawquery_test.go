package query

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// rawQueries are query strings FromQuery and FirstValue must read as
// (*url.URL).Query does: repeated keys, escapes good and bad, '+',
// semicolons, empty pairs and keys, keys without '=', more pairs than
// the quick road takes.
var rawQueries = []string{
	"",
	"ps=1&pg=0&id=eq.7",
	"ps=1&pg=0&id=eq.7&format=csv",
	"format=csv&format=json&ps=1&pg=0",
	"format&ps=1&pg=0",
	"ps=1&pg=0&id=eq.7&id=gt.2&id=lt.9",
	"ps=5&pg=0&b=eq.2&a=eq.1&b=eq.3&a=in.4,5",
	"ps=1&pg=0&na%6De=eq.%41b+c",
	"ps=1&pg=0&name=eq.%zz&other=eq.1",
	"ps=1&pg=0&na%zzme=eq.1",
	"ps=1&pg=0;id=eq.7",
	"ps=1&pg=0&id=eq.7;x",
	"ps=1&&pg=0&&&id=eq.7&",
	"=eq.1&ps=1&pg=0",
	"ps=1&pg=0&id",
	"ps=1&pg=0&id=",
	"ps=2&ps=1&pg=0&pg=",
	"ps=1&pg=0&pg=3",
	"ps=1&pg=0&fc=id,name&oy=id.ds&count=exact",
	"ps=1&pg=0&or=(a.eq.1,b.eq.2)&and=(c.gt.1)",
	"ps=1&pg=0&all=true&set=a.1",
	"ps=1&pg=0&" + strings.Repeat("c=eq.1&", 13),
	"ps=1&pg=0&" + strings.Repeat("c=eq.1&", 14),
	"ps=1&pg=0&" + strings.Repeat("c=eq.1&", 40) + "format=csv",
	"ps=1&pg=0&x%3Dy=eq.1&x=eq.%3D",
	"ps=%31&pg=%30&id=eq.%37",
	"ps=1&pg=0&%E2%82%AC=eq.%E2%82%AC",
	"ps=1&pg=0&id=eq.7#frag",
	"ps=1&pg=0&form%61t=csv",
	"ps=1&pg=0&a+b=eq.1&a%20b=eq.2",
	"ps=1&pg=0&formatx=csv&xformat=json",
}

// TestFromQueryIsFromParams: FromQuery and FirstValue read a query string
// as FromParams over (*url.URL).Query and url.Values.Get do: the same plan
// or the same refusal, for every action.
func TestFromQueryIsFromParams(t *testing.T) {
	for _, raw := range rawQueries {
		sameAsParams(t, raw)
	}
}

func sameAsParams(t *testing.T, raw string) {
	t.Helper()
	v, _ := url.ParseQuery(raw)
	for _, action := range []Action{Read, Insert, Update, Delete} {
		lim := Limits{MaxPageSize: 100}
		want, wantErr := FromParams(action, v, lim)
		got, err := FromQuery(action, raw, lim)
		if !reflect.DeepEqual(err, wantErr) {
			t.Fatalf("%q %v: error %v, want %v", raw, action, err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q %v: plan %+v, want %+v", raw, action, got, want)
		}
	}
	for _, name := range []string{ParamFormat, "id", "", "ps", "x=y", "na%6De", "name", "€", "a b", "form"} {
		if got, want := FirstValue(raw, name), v.Get(name); got != want {
			t.Fatalf("%q: FirstValue %q = %q, want %q", raw, name, got, want)
		}
	}
}

func FuzzFromQuery(f *testing.F) {
	for _, raw := range rawQueries {
		f.Add(raw)
	}
	f.Fuzz(sameAsParams)
}

// BenchmarkFromQuery parses the query string of a read of one row by key.
func BenchmarkFromQuery(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FromQuery(Read, "ps=1&pg=0&id=eq.7", Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstValueAbsent is the read handler's look for "format" in
// the bench's 1-row GET, which has none.
func BenchmarkFirstValueAbsent(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if FirstValue("ps=1&pg=0&id=eq.7", ParamFormat) != "" {
			b.Fatal("found")
		}
	}
}
