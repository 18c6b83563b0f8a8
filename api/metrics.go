package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/validate"
)

// GET /v1/metrics (additive): the built-in catalogue and every version of
// the org's shared metric definitions.
func (h *handlers) listMetrics(c *gin.Context) {
	shared, err := metrics.Store{DB: h.deps.DB}.List(c.Request.Context(), orgID(c))
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"builtin": metrics.Builtins(), "shared": shared})
}

// POST /v1/metrics (additive): store a shared metric definition as the
// next version of its name.
func (h *handlers) createMetric(c *gin.Context) {
	var raw json.RawMessage
	if !decodeJSON(c, &raw) {
		return
	}
	m, err := experiments.DecodeMetric(raw)
	if err != nil {
		badInput(c, err)
		return
	}
	sh, err := metrics.Store{DB: h.deps.DB}.Create(c.Request.Context(), orgID(c), session(c).UserID, m)
	if validate.Fields(err) != nil {
		invalid(c, err)
		return
	}
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusCreated, sh)
}
