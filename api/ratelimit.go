package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/sdkcache"
	"github.com/expd/expd/telemetry"
)

const ctxSnapshot = "expd.sdk_snapshot"

// rateLimit returns the per-org limit of one SDK route family ("assign",
// "events"): a token bucket per org and family, sized by the org's plan
// (Deps.RateLimits). It must follow requireSDKKey or requireKey. Past the
// limit it answers 429 with Retry-After. The plan comes from the org's
// cached snapshot (orgSnapshot), which the handler then reuses.
func (h *handlers) rateLimit(family string) gin.HandlerFunc {
	return func(c *gin.Context) {
		snap, ok := h.orgSnapshot(c)
		if !ok {
			return
		}
		ok, wait := h.deps.RateLimits.Allow(family+"/"+snap.OrgID, snap.Plan)
		if !ok {
			telemetry.Refusals.WithLabelValues(telemetry.RateLimit, string(snap.Plan)).Inc()
			seconds := max(1, int(math.Ceil(wait.Seconds())))
			rate := h.deps.RateLimits.RateOf(snap.Plan)
			c.Header("Retry-After", strconv.Itoa(seconds))
			problem(c, http.StatusTooManyRequests, CodeRateLimited, fmt.Sprintf(
				"the org's %s plan allows %g requests per second (burst %d) on /v1/%s; retry after %d s",
				snap.Plan, rate.PerSecond, rate.Burst, family, seconds))
			return
		}
		c.Next()
	}
}

// orgSnapshot returns the org's cached SDK snapshot (plan, config_version,
// running experiments), loaded once per request and kept in the gin
// context, so middleware and handler share one copy from memory. On
// failure it has answered the request and returns false.
func (h *handlers) orgSnapshot(c *gin.Context) (*sdkcache.Snapshot, bool) {
	if s, ok := c.Get(ctxSnapshot); ok {
		return s.(*sdkcache.Snapshot), true
	}
	snap, err := h.deps.SDK.Configs.Get(c.Request.Context(), orgID(c))
	if err != nil {
		internalError(c, err)
		return nil, false
	}
	c.Set(ctxSnapshot, snap)
	return snap, true
}
