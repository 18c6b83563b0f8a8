package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// GET /v1/config: the org's running experiments at its config_version,
// with the version as ETag; If-None-Match answers 304 when it matches.
func (h *handlers) getConfig(c *gin.Context) {
	snap, ok := h.orgSnapshot(c)
	if !ok {
		return
	}
	c.Header("ETag", snap.ETag)
	// Clients may keep the body but must revalidate before each use.
	c.Header("Cache-Control", "no-cache")
	if etagMatches(c.GetHeader("If-None-Match"), snap.ETag) {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", snap.Body)
}

// etagMatches applies If-None-Match (RFC 9110 §13.1.2): "*" or a list of
// entity tags, compared weakly (a W/ prefix is ignored).
func etagMatches(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	for _, candidate := range strings.Split(ifNoneMatch, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == "*" || candidate == etag {
			return true
		}
	}
	return false
}
