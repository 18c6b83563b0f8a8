package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
)

// dashboardCORS lets the dashboard's origins (EXPD_DASHBOARD_ORIGINS) call
// the dashboard routes from a browser with credentials: preflights from
// them are answered 204, their requests carry Access-Control-Allow-*.
// Other origins get no CORS headers (the browser refuses) and a preflight
// 403. SDK and signed-delivery routes are not browser-session routes and
// are left alone.
func dashboardCORS(origins []string) gin.HandlerFunc {
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		if origin == "" || !dashboardPath(c.Request.URL.Path) {
			c.Next()
			return
		}
		c.Writer.Header().Add("Vary", "Origin")
		allowed := slices.Contains(origins, origin)
		preflight := c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != ""
		if allowed {
			h := c.Writer.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After, ETag")
		}
		switch {
		case preflight && allowed:
			h := c.Writer.Header()
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match, X-Request-Id")
			h.Set("Access-Control-Max-Age", "600")
			c.AbortWithStatus(http.StatusNoContent)
		case preflight:
			problem(c, http.StatusForbidden, CodeOriginNotAllowed, "origin "+origin+" is not an allowed dashboard origin (EXPD_DASHBOARD_ORIGINS)")
			c.Abort()
		default:
			c.Next()
		}
	}
}

// sdkOrSignedPaths are the /v1 routes that are not dashboard routes
// (router.go's SDK and signed-delivery groups).
var sdkOrSignedPaths = []string{"/v1/config", "/v1/assign", "/v1/events", "/v1/events/import", "/v1/business-events", "/v1/webhooks/", "/v1/openapi.json"}

func dashboardPath(p string) bool {
	if !strings.HasPrefix(p, "/v1/") {
		return false
	}
	for _, s := range sdkOrSignedPaths {
		if p == s || strings.HasSuffix(s, "/") && strings.HasPrefix(p, s) {
			return false
		}
	}
	return true
}
