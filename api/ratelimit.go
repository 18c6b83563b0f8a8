package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/sdkcache"
)

const ctxSnapshot = "expd.sdk_snapshot"

// rateLimit returns the per-org limit of one SDK route family ("assign",
// "events"): a token bucket per org and family, sized by the org's plan
// (Deps.RateLimits). It must follow requireSDKKey or requireKey. Past the
// limit it answers 429 with Retry-After. It leaves the org's cached
// snapshot in the context for the handler (orgSnapshot): plan and
// config_version come from memory, not from the database.
func (h *handlers) rateLimit(family string) gin.HandlerFunc {
	return func(c *gin.Context) {
		snap, err := h.deps.SDK.Configs.Get(c.Request.Context(), orgID(c))
		if err != nil {
			internalError(c, err)
			return
		}
		c.Set(ctxSnapshot, snap)
		ok, wait := h.deps.RateLimits.Allow(family+"/"+snap.OrgID, snap.Plan)
		if !ok {
			seconds := max(1, int(math.Ceil(wait.Seconds())))
			rate := h.deps.RateLimits.RateOf(snap.Plan)
			c.Header("Retry-After", strconv.Itoa(seconds))
			problem(c, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf(
				"the org's %s plan allows %g requests per second (burst %d) on /v1/%s; retry after %d s",
				snap.Plan, rate.PerSecond, rate.Burst, family, seconds))
			return
		}
		c.Next()
	}
}

// orgSnapshot is the snapshot rateLimit loaded for this request.
func orgSnapshot(c *gin.Context) *sdkcache.Snapshot {
	s, _ := c.Get(ctxSnapshot)
	snap, _ := s.(*sdkcache.Snapshot)
	return snap
}
