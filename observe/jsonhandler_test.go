package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// pair is slog.JSONHandler and JSONHandler over their own buffers, built
// by the same chain of WithAttrs and WithGroup.
type pair struct {
	want, got   slog.Handler
	wbuf, gbuf  bytes.Buffer
	description string
}

func newPair(level slog.Leveler, chain func(slog.Handler) slog.Handler, description string) *pair {
	p := &pair{description: description}
	p.want = slog.NewJSONHandler(&p.wbuf, &slog.HandlerOptions{Level: level})
	p.got = NewJSONHandler(&p.gbuf, level)
	if chain != nil {
		p.want, p.got = chain(p.want), chain(p.got)
	}
	return p
}

// check handles r with both handlers and fails t unless the lines (and
// Enabled) are the same bytes.
func (p *pair) check(t *testing.T, r slog.Record) {
	t.Helper()
	ctx := context.Background()
	if we, ge := p.want.Enabled(ctx, r.Level), p.got.Enabled(ctx, r.Level); we != ge {
		t.Fatalf("%s: Enabled(%v) = %v, slog says %v", p.description, r.Level, ge, we)
	}
	p.wbuf.Reset()
	p.gbuf.Reset()
	werr := p.want.Handle(ctx, r.Clone())
	gerr := p.got.Handle(ctx, r.Clone())
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: Handle error %v, slog's %v", p.description, gerr, werr)
	}
	if !bytes.Equal(p.wbuf.Bytes(), p.gbuf.Bytes()) {
		t.Fatalf("%s: lines differ\n got: %q\nwant: %q", p.description, p.gbuf.Bytes(), p.wbuf.Bytes())
	}
}

func record(t time.Time, level slog.Level, msg string, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(t, level, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

type testErr struct{ msg string }

func (e *testErr) Error() string { return e.msg }

// marshalErr is an error that marshals itself: slog marshals it.
type marshalErr struct{}

func (marshalErr) Error() string                { return "not this" }
func (marshalErr) MarshalJSON() ([]byte, error) { return []byte(`{"marshaled" : true}`), nil }

type badMarshal struct{}

func (badMarshal) MarshalJSON() ([]byte, error) { return []byte(`{nope`), nil }

type panicMarshal struct{ p *int }

func (m panicMarshal) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprint(*m.p)), nil }

type groupValuer struct{}

func (groupValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("inner", "x"), slog.Int("n", 2))
}

type chainValuer int

func (c chainValuer) LogValue() slog.Value {
	if c == 0 {
		return slog.StringValue("end")
	}
	return slog.AnyValue(c - 1)
}

type loopValuer struct{}

func (l loopValuer) LogValue() slog.Value { return slog.AnyValue(l) }

type emptyValuer struct{}

func (emptyValuer) LogValue() slog.Value { return slog.Value{} }

// specialStrings are strings whose escaping can go wrong.
func specialStrings() []string {
	ss := []string{
		"", "plain", `"quoted"`, `back\slash`, "<script>&amp;</script>", "tab\there", "nl\ncr\r",
		"\u2028", "a\u2029b", "\ufffd", "é日本語🙂", "\xff", "\xc0\x80", "\xed\xa0\x80", "\xe2\x80",
		"ok\xe2\x80", "\xf0\x9f\x99", "\x7f", "\x00\x01\x1f", "\b\f", "x\u2028\u2029y\xfez",
	}
	var all []byte
	for c := range 256 {
		ss = append(ss, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
		all = append(all, byte(c))
	}
	return append(ss, string(all))
}

var zone = time.FixedZone("X", 5*3600+1800)

func TestJSONHandlerMatchesSlog(t *testing.T) {
	now := time.Now() // with a monotonic reading
	three := 3
	times := []time.Time{
		now, now.Round(0), now.In(zone), now.In(time.UTC), time.Time{},
		time.Date(2026, 12, 1, 22, 19, 52, 903348643, time.UTC),
		time.Date(2026, 12, 1, 22, 19, 52, 900000000, zone),
		time.Date(2026, 12, 1, 22, 19, 52, 0, time.FixedZone("W", -8*3600)),
		time.Date(1500, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(2500, 6, 1, 0, 0, 0, 0, zone),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	floats := []float64{
		0, math.Copysign(0, -1), 1, -1, 1.5, 3.486, 0.001, 1e20, 1e21, -1e21, 123456789.125, 1e-6, 1e-7,
		9.999999e-7, -1e-7, 5e-324, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1), 1.0 / 3, 2e-308, 1e100,
	}
	for range 200 {
		floats = append(floats, math.Float64frombits(rand.Uint64()), rand.NormFloat64()*math.Pow(10, float64(rand.IntN(60)-30)))
	}
	var attrs []slog.Attr
	for i, s := range specialStrings() {
		attrs = append(attrs, slog.String("s", s), slog.String(s, "key"), slog.Any("ss", []string{s, "x"}))
		_ = i
	}
	for _, f := range floats {
		attrs = append(attrs, slog.Float64("f", f))
	}
	for _, tm := range times {
		attrs = append(attrs, slog.Time("t", tm))
	}
	attrs = append(attrs,
		slog.Int64("min", math.MinInt64), slog.Int64("max", math.MaxInt64), slog.Int("zero", 0), slog.Int("neg", -1),
		slog.Uint64("umax", math.MaxUint64), slog.Uint64("u0", 0), slog.Bool("t", true), slog.Bool("f", false),
		slog.Duration("d0", 0), slog.Duration("dneg", -1), slog.Duration("dmax", math.MaxInt64), slog.Duration("d", 3500*time.Microsecond),
		slog.Any("nil", nil), slog.Any("", nil), slog.Attr{}, slog.String("", "keyless"), slog.Int("", 0),
		slog.Any("err", errors.New("boom \"x\"\n")), slog.Any("werr", fmt.Errorf("wrapped: %w", &testErr{"inner\u2028"})),
		slog.Any("nilerr", (*testErr)(nil)), slog.Any("merr", marshalErr{}), slog.Any("bad", badMarshal{}),
		slog.Any("panic", panicMarshal{}), slog.Any("panic2", panicMarshal{p: &three}),
		slog.Any("map", map[string]any{"b": 1, "a": []int{1, 2}, "<&>": "\b\f\u2028", "n": nil}),
		slog.Any("struct", struct {
			A string
			B float64 `json:"b,omitempty"`
		}{"x\xff", 1e21}),
		slog.Any("bytes", []byte("hi")), slog.Any("ints", []int{1, 2}), slog.Any("nilss", []string(nil)),
		slog.Any("emptyss", []string{}), slog.Any("ch", make(chan int)), slog.Any("func", func() {}),
		slog.Any("kind", slog.KindInt64), slog.Any("level", slog.LevelWarn), slog.Any("dur", time.Second),
		slog.Any("src", &slog.Source{}), slog.Any("nilsrc", (*slog.Source)(nil)),
		slog.Any("fullsrc", &slog.Source{Function: "f", File: "a.go", Line: 3}), slog.Any("filesrc", &slog.Source{File: "b.go"}),
		slog.Any("gv", groupValuer{}), slog.Any("chain", chainValuer(5)), slog.Any("loop", loopValuer{}),
		slog.Any("", emptyValuer{}), slog.Any("ev", emptyValuer{}), slog.Any("float32", float32(0.1)),
		slog.Any("time", now), slog.Any("rawtime", struct{ T time.Time }{now.In(zone)}),
	)

	groups := [][]slog.Attr{
		{slog.Group("g", slog.Int("a", 1), slog.Group("h", slog.String("b", "c")))},
		{slog.Group("", slog.Int("a", 1), slog.Group("", slog.String("b", "c")), slog.Int("d", 4))},
		{slog.Group("g"), slog.Int("after", 1)},
		{slog.Group("g", slog.Attr{}), slog.Int("after", 1)}, // slog drops the comma here
		{slog.Group("", slog.Attr{}), slog.Int("after", 1)},
		{slog.Attr{}, slog.Int("after", 1)},
		{slog.Attr{}},
		{slog.Group("g", slog.Attr{})},
		{slog.Group("g", slog.Group("h", slog.Attr{})), slog.Int("after", 1)},
		{slog.Int("before", 1), slog.Group("g", slog.Any("", emptyValuer{})), slog.Int("after", 1)},
		{slog.Attr{Key: "raw", Value: slog.GroupValue()}, slog.Int("after", 1)},
		{slog.Group("g\"\n", slog.Int("k\u2028", 1))},
		{slog.Any("gv", groupValuer{}), slog.Group("", slog.Any("", groupValuer{}))},
		// the gateway's request line
		{slog.Attr{Value: slog.GroupValue(
			slog.String("face", "rest"), slog.String("method", "GET"), slog.String("route", "/minimal/api/rest/auto/v1/{org}/{project}/{type}/{schema}/{table}"),
			slog.String("path", "/minimal/api/rest/auto/v1/demo/demo/pg/minimal_bench/items"), slog.Int("status", 200), slog.Int("bytes", 203),
			slog.Float64("duration_ms", 3.5), slog.String("remote", "127.0.0.1:48838"))},
			slog.String("request_id", "e8d4777795503827"),
			slog.Attr{Value: slog.GroupValue(slog.String("action", "read"), slog.String("object", "pg/minimal_bench/items"), slog.Int64("rows", 1),
				slog.Float64("op_ms", 3.486), slog.String("outcome", "ok"), slog.String("identity", "admin"), slog.Any("roles", []string{"admin"}),
				slog.String("project", "demo"))}},
	}

	chains := map[string]func(slog.Handler) slog.Handler{
		"plain":     nil,
		"group":     func(h slog.Handler) slog.Handler { return h.WithGroup("g") },
		"emptyname": func(h slog.Handler) slog.Handler { return h.WithGroup("") },
		"attrs": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("app", "minimal"), slog.Int("pid", 7)})
		},
		"attrs-empty": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.Group("e")}).WithAttrs(nil).WithAttrs([]slog.Attr{{}})
		},
		"group-attrs-group": func(h slog.Handler) slog.Handler {
			return h.WithGroup("a").WithAttrs([]slog.Attr{slog.Int("x", 1), slog.Group("", slog.String("y", "\n"))}).WithGroup("b")
		},
		"group-emptyattrs": func(h slog.Handler) slog.Handler {
			return h.WithGroup("a").WithAttrs([]slog.Attr{{}}).WithGroup("b").WithAttrs([]slog.Attr{slog.Int("z", 1)})
		},
		"deep": func(h slog.Handler) slog.Handler {
			h = h.WithAttrs([]slog.Attr{slog.String("top", "1")}).WithGroup("a").WithGroup("b")
			h = h.WithAttrs([]slog.Attr{slog.Group("g", slog.Attr{}), slog.Float64("f", 1e-7)})
			return h.WithGroup("c\u2028").WithAttrs([]slog.Attr{slog.Group("g2"), slog.Bool("ok", true)}).WithGroup("d")
		},
		"branches": func(h slog.Handler) slog.Handler {
			base := h.WithGroup("base").WithAttrs([]slog.Attr{slog.Int("n", 1)})
			_ = base.WithAttrs([]slog.Attr{slog.Int("other", 2)}) // must not leak into the next
			return base.WithAttrs([]slog.Attr{slog.Int("mine", 3)})
		},
		"valuer-attrs": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.Any("gv", groupValuer{}), slog.Any("", emptyValuer{})})
		},
	}

	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2, slog.Level(-10), slog.LevelError + 8}
	tmsg := time.Date(2026, 12, 1, 22, 19, 52, 903348643, time.UTC)
	for name, chain := range chains {
		for _, lv := range []slog.Leveler{nil, slog.LevelDebug, slog.LevelWarn, slog.Level(-10)} {
			p := newPair(lv, chain, fmt.Sprintf("%s/%v", name, lv))
			for _, l := range levels {
				if !p.want.Enabled(context.Background(), l) {
					continue
				}
				p.check(t, record(tmsg, l, "msg"))
				p.check(t, record(time.Time{}, l, ""))
			}
			l := slog.LevelError + 8
			for _, m := range specialStrings() {
				p.check(t, record(now, l, m))
			}
			for _, tm := range times {
				p.check(t, record(tm, l, "time"))
			}
			for _, a := range attrs {
				p.check(t, record(tmsg, l, "one", a))
			}
			p.check(t, record(tmsg, l, "all", attrs...))
			for _, g := range groups {
				p.check(t, record(tmsg, l, "group", g...))
				p.check(t, record(tmsg, l, "group", append([]slog.Attr{slog.Int("first", 1)}, g...)...))
				p.check(t, record(tmsg, l, "group", append(append([]slog.Attr{}, g...), slog.Int("last", 1))...))
			}
			// more than a record keeps in place
			many := record(tmsg, l, "many")
			for i := range 12 {
				many.AddAttrs(slog.Int(fmt.Sprint("k", i), i), slog.Group("", slog.String("s", "v")))
			}
			p.check(t, many)
		}
	}
}

// TestJSONHandlerEscapesEveryPosition puts every byte at every place of
// strings longer than the 8 bytes escaping looks at in one go.
func TestJSONHandlerEscapesEveryPosition(t *testing.T) {
	p := newPair(nil, nil, "position")
	tm := time.Unix(1, 0)
	for c := range 256 {
		for _, n := range []int{7, 8, 12, 18} {
			for pos := range n {
				b := bytes.Repeat([]byte("abcdefgh"), 3)[:n]
				b[pos] = byte(c)
				s := string(b)
				p.check(t, record(tm, slog.LevelInfo, s, slog.String(s, s), slog.Any("ss", []string{s})))
			}
		}
	}
}

// TestJSONHandlerOnLogWriter: without a mutex of its own, concurrent lines
// still reach the LogWriter whole.
func TestJSONHandlerOnLogWriter(t *testing.T) {
	var out bytes.Buffer
	lw := NewLogWriter(&out, time.Hour)
	log := slog.New(NewJSONHandler(lw, nil))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				log.Info("line", "g", g, "i", i, "pad", strings.Repeat("x", 100))
			}
		})
	}
	wg.Wait()
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1600 {
		t.Fatalf("%d lines, want 1600", len(lines))
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
	}
}

func FuzzJSONHandlerStrings(f *testing.F) {
	for _, s := range specialStrings()[:24] {
		f.Add(s, "k", s, "g")
	}
	f.Add("\u2028", "\xff", "\b\f", "")
	f.Fuzz(func(t *testing.T, msg, key, val, group string) {
		p := newPair(nil, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String(key, val)}).WithGroup(group)
		}, "fuzz")
		p.check(t, record(time.Unix(1, 2), slog.LevelInfo, msg,
			slog.String(key, val), slog.Any(val, []string{key, val, msg}), slog.Group(group, slog.String(val, key)),
			slog.Any("err", errors.New(val))))
	})
}

// requestRecord is the gateway's request line as Middleware builds it.
func requestRecord() slog.Record {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.Attr{Value: slog.AnyValue(&requestLine{face: "rest", method: "GET",
		route: "/minimal/api/rest/auto/v1/{org}/{project}/{type}/{schema}/{table}",
		path:  "/minimal/api/rest/auto/v1/demo/demo/pg/minimal_bench/items", status: 200, bytes: 203,
		d: 3500 * time.Microsecond, remote: "127.0.0.1:48838"})},
		slog.String("request_id", "e8d4777795503827"),
		slog.Attr{Value: slog.GroupValue(slog.String("action", "read"), slog.String("object", "pg/minimal_bench/items"), slog.Int64("rows", 1),
			slog.Float64("op_ms", 3.486), slog.String("outcome", "ok"), slog.String("identity", "admin"), slog.Any("roles", []string{"admin"}),
			slog.String("project", "demo"))})
	return r
}

func BenchmarkRequestLine(b *testing.B) {
	for _, c := range []struct {
		name string
		h    slog.Handler
	}{
		{"slog", slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})},
		{"observe", NewJSONHandler(io.Discard, slog.LevelInfo)},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := LogHandler(c.h)
			ctx := WithRequestID(context.Background(), "e8d4777795503827")
			r := requestRecord()
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				_ = h.Handle(ctx, r)
			}
			reportCPU(b, start)
		})
	}
}
