package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/validate"
)

// shipRequest is the body of POST /v1/experiments/:id/ship.
type shipRequest struct {
	Variant string `json:"variant"`
}

// POST /v1/experiments/:id/start|stop (admin, additive): the lifecycle
// change, idempotent; a change mints a config version (docs/lifecycle.md).
func (h *handlers) lifecycleAction(action string) gin.HandlerFunc {
	return func(c *gin.Context) { h.transition(c, experiments.Change{Action: action}) }
}

// POST /v1/experiments/:id/ship (admin, additive): body {"variant": ...}.
func (h *handlers) shipExperiment(c *gin.Context) {
	var req shipRequest
	if !decodeJSON(c, &req) {
		return
	}
	var errs validate.Errors
	errs.Text("variant", req.Variant, 64, true)
	if err := errs.Err(); err != nil {
		invalid(c, err)
		return
	}
	h.transition(c, experiments.Change{Action: experiments.ActionShip, Variant: req.Variant})
}

func (h *handlers) transition(c *gin.Context, ch experiments.Change) {
	ch.Actor = session(c).UserID
	exp, err := h.cases.Transition(c.Request.Context(), orgID(c), c.Param("id"), ch)
	if err != nil {
		h.experimentError(c, err)
		return
	}
	c.JSON(http.StatusOK, exp)
}
