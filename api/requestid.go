package api

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"

	"github.com/expd/expd/telemetry"
)

const requestIDHeader = "X-Request-Id"

// withRequestID gives every request an id (the caller's X-Request-Id when it
// is sane, else a fresh one), echoes it, counts the request in the HTTP
// metrics and logs it as policy says (RequestLogging).
func withRequestID(log *slog.Logger, policy RequestLogging) gin.HandlerFunc {
	var seen atomic.Uint64
	return func(c *gin.Context) {
		id := c.GetHeader(requestIDHeader)
		if !saneRequestID(id) {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		c.Set(requestIDHeader, id)
		c.Header(requestIDHeader, id)
		start := time.Now()
		c.Next()
		elapsed := time.Since(start)
		route, status := c.FullPath(), c.Writer.Status()
		if route == "" {
			route = "unmatched" // never the raw path: it is caller data
		}
		telemetry.HTTPRequests.WithLabelValues(route, c.Request.Method, strconv.Itoa(status)).Observe(elapsed.Seconds())
		if !policy.logs(route, status, elapsed, &seen) {
			return
		}
		// Never log headers or query strings: they may carry credentials.
		attrs := []slog.Attr{
			slog.String("request_id", id),
			slog.String("method", c.Request.Method),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Duration("duration", elapsed),
			slog.String("org_id", c.GetString(ctxOrgID)),
		}
		if sc := trace.SpanContextFromContext(c.Request.Context()); sc.IsValid() {
			attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
		log.LogAttrs(c.Request.Context(), slog.LevelInfo, "request", attrs...)
	}
}

// RequestLogging decides which requests get a log line. Dashboard, webhook
// and health routes always do. The SDK hot routes (hotRoutes), which carry
// nearly all traffic, log only server errors, requests slower than Slow,
// and one in SampleHot of the rest (0: none); the HTTP metrics count them
// all.
type RequestLogging struct {
	Slow      time.Duration // EXPD_LOG_SLOW_REQUEST; 0: DefaultSlowRequest
	SampleHot uint64        // EXPD_LOG_SAMPLE_HOT
}

// DefaultSlowRequest is the slow-request threshold of the hot routes.
const DefaultSlowRequest = 500 * time.Millisecond

var hotRoutes = map[string]bool{"/v1/config": true, "/v1/assign": true, "/v1/events": true}

func (p RequestLogging) logs(route string, status int, elapsed time.Duration, seen *atomic.Uint64) bool {
	if !hotRoutes[route] || status >= 500 {
		return true
	}
	slow := p.Slow
	if slow <= 0 {
		slow = DefaultSlowRequest
	}
	if elapsed >= slow {
		return true
	}
	return p.SampleHot > 0 && seen.Add(1)%p.SampleHot == 0
}

func requestID(c *gin.Context) string { return c.GetString(requestIDHeader) }

func saneRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
