package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// healthz says the process serves HTTP; it checks nothing else.
func (h *handlers) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz checks that the database and Temporal answer.
func (h *handlers) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	checks := gin.H{}
	ready := true
	if sqlDB, err := h.deps.DB.DB(); err != nil || sqlDB.PingContext(ctx) != nil {
		checks["database"], ready = "unreachable", false
	} else {
		checks["database"] = "ok"
	}
	switch {
	case h.deps.Temporal == nil:
		checks["temporal"], ready = "not configured", false
	default:
		if _, err := h.deps.Temporal.CheckHealth(ctx, nil); err != nil {
			checks["temporal"], ready = "unreachable", false
		} else {
			checks["temporal"] = "ok"
		}
	}
	if !ready {
		writeProblem(c, Problem{Status: http.StatusServiceUnavailable, Code: CodeNotReady, Detail: "a dependency is unreachable"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "checks": checks})
}
