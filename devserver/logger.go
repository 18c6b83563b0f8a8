package devserver

import (
	"context"
	"log/slog"

	temporallog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// Lowest levels of Temporal's own logs that reach the caller's logger in each
// phase of the server's life. Below warnings the server is far too chatty for
// a console; while starting, services warn about dialling each other before
// all of them listen; while stopping, every in-flight call fails on purpose.
const (
	runningLogLevel  = slog.LevelWarn
	startingLogLevel = slog.LevelError
	stoppingLogLevel = slog.LevelError + 4 // above every level: nothing passes
)

// minLevelHandler drops records below min before they reach the wrapped handler.
type minLevelHandler struct {
	min  slog.Leveler
	next slog.Handler
}

func (h minLevelHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.min.Level() && h.next.Enabled(ctx, level)
}

func (h minLevelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}

func (h minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevelHandler{min: h.min, next: h.next.WithAttrs(attrs)}
}

func (h minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{min: h.min, next: h.next.WithGroup(name)}
}

// slogLogger is a Temporal server logger writing to slog.
type slogLogger struct {
	log *slog.Logger
}

var (
	_ temporallog.Logger      = slogLogger{}
	_ temporallog.SLogWrapper = slogLogger{}
)

// newTemporalLogger routes Temporal's logs at min or above to base.
func newTemporalLogger(base *slog.Logger, min slog.Leveler) slogLogger {
	filtered := slog.New(minLevelHandler{min: min, next: base.Handler()})
	return slogLogger{log: filtered.With("component", "temporal")}
}

func (l slogLogger) Debug(msg string, tags ...tag.Tag) { l.emit(slog.LevelDebug, msg, tags) }
func (l slogLogger) Info(msg string, tags ...tag.Tag)  { l.emit(slog.LevelInfo, msg, tags) }
func (l slogLogger) Warn(msg string, tags ...tag.Tag)  { l.emit(slog.LevelWarn, msg, tags) }
func (l slogLogger) Error(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }

// DPanic, Panic and Fatal only log: a library must not panic in or exit the
// process that embeds it; Start's own checks surface the usual fatal causes
// (a taken port, a broken database) as errors.
func (l slogLogger) DPanic(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }
func (l slogLogger) Panic(msg string, tags ...tag.Tag)  { l.emit(slog.LevelError, msg, tags) }
func (l slogLogger) Fatal(msg string, tags ...tag.Tag)  { l.emit(slog.LevelError, msg, tags) }

// SLog hands the same filtered logger to server components that log through slog.
func (l slogLogger) SLog() *slog.Logger { return l.log }

func (l slogLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if !l.log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	l.log.LogAttrs(ctx, level, msg, attrs...)
}
