package devserver

import (
	"context"
	"errors"
	"log/slog"
	"sync"

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
	log   *slog.Logger
	fatal *fatalRecord // nil: Fatal only logs
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
// process that embeds it. Start's own checks surface the usual fatal causes
// (a taken port, a broken database) as errors, and a Fatal while the server
// is being built fails the build (withFatalRecord).
func (l slogLogger) DPanic(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }
func (l slogLogger) Panic(msg string, tags ...tag.Tag)  { l.emit(slog.LevelError, msg, tags) }
func (l slogLogger) Fatal(msg string, tags ...tag.Tag) {
	if l.fatal != nil {
		l.fatal.record(msg, tags)
	}
	l.emit(slog.LevelError, msg, tags)
}

// withFatalRecord is l also keeping the first Fatal it is given in the
// returned record.
func (l slogLogger) withFatalRecord() (slogLogger, *fatalRecord) {
	l.fatal = &fatalRecord{}
	return l, l.fatal
}

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

// fatalRecord keeps the first Fatal logged through a logger. During the
// Temporal server's build it is the only report of a gRPC listener that could
// not bind: Temporal logs Fatal and carries on with a nil listener, and the
// service serving on it later panics in a goroutine of its own, which would
// end the process.
type fatalRecord struct {
	mu  sync.Mutex
	err error
}

func (r *fatalRecord) record(msg string, tags []tag.Tag) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = fatalLogError{msg: msg, cause: tagError(tags)}
	}
}

// first is the first Fatal recorded, or nil.
func (r *fatalRecord) first() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// fatalLogError is a Fatal log line of Temporal's, with the error it named
// (a bind's "address already in use", say) as its cause.
type fatalLogError struct {
	msg   string
	cause error
}

func (e fatalLogError) Error() string {
	if e.cause == nil {
		return e.msg
	}
	return e.msg + ": " + e.cause.Error()
}

func (e fatalLogError) Unwrap() error { return e.cause }

// tagError is the error a log line's tags carry (tag.Error), or nil.
func tagError(tags []tag.Tag) error {
	var errs []error
	for _, t := range tags {
		if zt, ok := t.(tag.ZapTag); ok {
			if err, ok := zt.Field().Interface.(error); ok {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
