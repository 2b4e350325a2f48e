package logline

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
)

// withoutTime drops the time, the one member two calls cannot share.
func withoutTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func TestALineWrittenHereIsTheLineLogAttrsWrites(t *testing.T) {
	attrs := []slog.Attr{
		slog.String("decision_id", "d-1"), slog.String("namespace", "team-a"), slog.Bool("dry_run", false),
		slog.Int("patch_ops", 7), slog.Float64("duration_ms", 0.25), slog.Any("stores", []string{"consul", "vault"}),
		slog.String("trace_id", ""),
	}
	cases := []struct {
		name   string
		format func(*bytes.Buffer) slog.Handler
		level  slog.Level
	}{
		{"a JSON line at info", func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{ReplaceAttr: withoutTime})
		}, slog.LevelInfo},
		{"a text line at warn", func(b *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(b, &slog.HandlerOptions{ReplaceAttr: withoutTime})
		}, slog.LevelWarn},
		{"a JSON line of a logger with fields of its own", func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{ReplaceAttr: withoutTime}).WithAttrs([]slog.Attr{slog.String("component", "decider")})
		}, slog.LevelError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want, got bytes.Buffer
			slog.New(c.format(&want)).LogAttrs(context.Background(), c.level, "decision", attrs...)
			Write(context.Background(), slog.New(c.format(&got)), c.level, "decision", attrs...)
			if got.String() != want.String() {
				t.Fatalf("the line differs from LogAttrs':\n got %s\nwant %s", got.String(), want.String())
			}
			if got.Len() == 0 {
				t.Fatal("nothing was written")
			}
		})
	}
}
