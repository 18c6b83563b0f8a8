package api

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
)

const requestIDHeader = "X-Request-Id"

// withRequestID gives every request an id (the caller's X-Request-Id when it
// is sane, else a fresh one), echoes it, and logs one structured line per
// request carrying it.
func withRequestID(log *slog.Logger) gin.HandlerFunc {
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
		// Never log headers or query strings: they may carry credentials.
		log.LogAttrs(c.Request.Context(), slog.LevelInfo, "request",
			slog.String("request_id", id),
			slog.String("method", c.Request.Method),
			slog.String("route", c.FullPath()),
			slog.Int("status", c.Writer.Status()),
			slog.Duration("duration", time.Since(start)),
			slog.String("org_id", c.GetString(ctxOrgID)),
		)
	}
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
