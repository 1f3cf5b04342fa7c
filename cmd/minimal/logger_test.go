package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/observe"
)

// TestNewLoggerJSONAsSlog: the process's JSON lines (observe.JSONHandler
// under the request id and the flush) are the bytes slog.JSONHandler
// wrote before, at the same level; text stays slog's TextHandler.
func TestNewLoggerJSONAsSlog(t *testing.T) {
	ctx := observe.WithRequestID(context.Background(), "req-1")
	tm := time.Date(2026, 12, 1, 22, 19, 52, 903348643, time.UTC)
	recs := []slog.Record{
		slog.NewRecord(tm, slog.LevelInfo, "request", 0),
		slog.NewRecord(tm, slog.LevelWarn, "slow \"x\"\n", 0),
		slog.NewRecord(tm, slog.LevelDebug, "hidden", 0),
	}
	recs[0].AddAttrs(slog.Group("", slog.String("face", "rest"), slog.Float64("duration_ms", 3.5)),
		slog.Any("roles", []string{"admin", "\b"}), slog.Any("err", errors.New("boom")))
	recs[1].AddAttrs(slog.Group("g", slog.Duration("d", time.Second)), slog.Time("at", tm.In(time.FixedZone("X", 3600))))
	defer slog.SetDefault(slog.Default())
	for _, format := range []string{"json", "text"} {
		var got, want bytes.Buffer
		l, closeLog := newLogger(&got, format, slog.LevelInfo)
		base := func() slog.Handler {
			opts := &slog.HandlerOptions{Level: slog.LevelInfo}
			if format == "text" {
				return observe.LogHandler(slog.NewTextHandler(&want, opts))
			}
			return observe.LogHandler(slog.NewJSONHandler(&want, opts))
		}()
		pairs := [][2]slog.Handler{
			{l.Handler(), base},
			{l.With("pid", 7).WithGroup("grp").Handler(), base.WithAttrs([]slog.Attr{slog.Int("pid", 7)}).WithGroup("grp")},
		}
		for _, p := range pairs {
			h, ref := p[0], p[1]
			for _, r := range recs {
				if h.Enabled(ctx, r.Level) != ref.Enabled(ctx, r.Level) {
					t.Fatalf("%s: Enabled(%v) differs", format, r.Level)
				}
				if h.Enabled(ctx, r.Level) {
					_ = h.Handle(ctx, r.Clone())
					_ = ref.Handle(ctx, r.Clone())
				}
			}
		}
		closeLog()
		if got.String() != want.String() {
			t.Fatalf("%s:\n got %s\nwant %s", format, got.String(), want.String())
		}
	}
}
