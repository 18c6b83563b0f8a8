package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/workflows"
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
	exp, changed, err := h.experiments.Transition(c.Request.Context(), orgID(c), c.Param("id"), ch)
	if err != nil {
		h.experimentError(c, err)
		return
	}
	if changed {
		h.deps.SDK.Configs.Expire(orgID(c))
		h.signalExperiment(c.Request.Context(), orgID(c), exp.ID, workflows.LifecycleChange{Status: exp.Status, Version: exp.Version,
			ShippedVariant: exp.ShippedVariant, Actor: ch.Actor})
	}
	c.JSON(http.StatusOK, exp)
}

// experimentSaved tells the experiment's workflow that a create or update
// set a schedule (start_at or stop_at), so it arms its timers.
func (h *handlers) experimentSaved(ctx context.Context, org string, exp experiments.Experiment) {
	if exp.StartAt != nil || exp.StopAt != nil {
		h.signalExperiment(ctx, org, exp.ID, workflows.LifecycleChange{})
	}
}

// signalExperiment delivers ch to the experiment's lifecycle workflow
// (SignalWithStart). The change is already committed, so a failure does
// not fail the request: it is logged (the workflow then misses the
// announcement, and a new schedule until the next change or signal).
// Without Temporal (tests, a dev server started without it) it does nothing.
func (h *handlers) signalExperiment(ctx context.Context, org, experimentID string, ch workflows.LifecycleChange) {
	err := h.workflows.SignalExperiment(ctx, org, experimentID, ch)
	if err != nil && !errors.Is(err, workflows.ErrNotConnected) {
		h.deps.Logger.ErrorContext(ctx, "experiment workflow not signalled", "org_id", org, "experiment_id", experimentID, "status", ch.Status, "error", err)
	}
}
