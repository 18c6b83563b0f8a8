package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/telemetry"
)

// countDelivery counts each delivery of an inbound webhook (source:
// payment, identity, business) by the outcome its answer tells.
func countDelivery(source string) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Next()
		telemetry.WebhookDeliveries.WithLabelValues("in", source, deliveryOutcome(c.Writer.Status())).Inc()
	}
}

func deliveryOutcome(status int) string {
	switch {
	case status < 300:
		return "accepted"
	case status == http.StatusUnauthorized:
		return "invalid_signature"
	case status < 500:
		return "malformed"
	default:
		return "error"
	}
}
