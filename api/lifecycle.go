package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/workflowclient"
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
	ctx, org := c.Request.Context(), orgID(c)
	exp, changed, err := h.experiments.Transition(ctx, org, c.Param("id"), ch)
	if err != nil {
		h.experimentError(c, err)
		return
	}
	if changed {
		h.deps.SDK.Configs.Expire(org)
		h.announceChange(ctx, org, exp, ch)
		h.experimentSaved(ctx, org, exp)
	}
	c.JSON(http.StatusOK, exp)
}

// announceChange delivers the announcement the transition queued in the
// outbox with the change. The change is committed, so a failure does not
// fail the request: the row stays pending and the reconcile
// (workflows.Redrive, every few minutes) delivers it.
func (h *handlers) announceChange(ctx context.Context, org string, exp experiments.Experiment, ch experiments.Change) {
	ev, ok, err := experiments.LifecycleEvent(org, exp, ch)
	if err == nil && ok {
		err = h.workflows.AnnounceQueued(ctx, h.deps.DB, ev)
	}
	if err != nil && !errors.Is(err, workflowclient.ErrNotConnected) {
		h.deps.Logger.WarnContext(ctx, "announcement left to the reconcile", "org_id", org, "experiment_id", exp.ID, "status", exp.Status, "error", err)
	}
}

// experimentSaved signals the experiment's lifecycle workflow after a
// create, update or lifecycle change that left it a scheduled step to arm
// (a start_at while scheduled, a stop_at while running): the change owes
// it that signal (signal_pending_since, written with the change). A
// failure does not fail the request: the debt stays and the reconcile
// signals. Without Temporal (tests, a dev server started without it) the
// debt stays too.
func (h *handlers) experimentSaved(ctx context.Context, org string, exp experiments.Experiment) {
	if !exp.PendingStep() {
		return
	}
	err := h.workflows.SignalOwed(ctx, h.deps.DB, org, exp.ID, exp.Version)
	if err != nil && !errors.Is(err, workflowclient.ErrNotConnected) {
		h.deps.Logger.WarnContext(ctx, "experiment workflow signal left to the reconcile", "org_id", org, "experiment_id", exp.ID, "error", err)
	}
}
