package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/sdkcache"
	"github.com/expd/expd/validate"
)

// Bounds of an AssignRequest (docs/assignment.md). user_id has the bound
// of an event's user_id, so every assigned user can also send events.
const (
	assignBodyLimit = 4 << 10
	maxUserIDBytes  = 256
	maxRefBytes     = 128 // experiment_id: a UUID or an experiment name
)

type assignRequest struct {
	ExperimentID string `json:"experiment_id"`
	UserID       string `json:"user_id"`
}

type assignResponse struct {
	Variant       string `json:"variant"`
	ConfigVersion int64  `json:"config_version"`
	ExperimentID  string `json:"experiment_id"`
	Bucket        uint32 `json:"bucket"`
	// Stopped is set when everyone gets control (draft, scheduled or
	// stopped); Status and Reason say why whenever the experiment is not
	// running (docs/lifecycle.md).
	Stopped bool   `json:"stopped,omitempty"`
	Status  string `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func (r assignRequest) validate() error {
	var errs validate.Errors
	errs.Text("experiment_id", r.ExperimentID, maxRefBytes, true)
	errs.Text("user_id", r.UserID, maxUserIDBytes, true)
	return errs.Err()
}

// POST /v1/assign: the user's variant of a running experiment, sticky
// through pins; an experiment that is not running answers the variant it
// serves to everyone (control, or the shipped one) with its status.
func (h *handlers) assign(c *gin.Context) {
	var req assignRequest
	if !decodeJSON(c, &req) {
		return
	}
	if err := req.validate(); err != nil {
		invalid(c, err)
		return
	}
	snap, ok := h.orgSnapshot(c)
	if !ok {
		return
	}
	exp, ok := snap.Find(req.ExperimentID)
	if !ok {
		problem(c, http.StatusNotFound, CodeExperimentNotFound, "no experiment with this id or name in your org")
		return
	}
	computed, bucket, mapped := exp.Variant(req.UserID)
	resp := assignResponse{ConfigVersion: snap.ConfigVersion, ExperimentID: exp.ID, Bucket: bucket}
	if v := exp.Serves(); v != "" {
		resp.Variant, resp.Stopped, resp.Status, resp.Reason = v, exp.Stopped(), exp.Status, exp.Reason
		c.JSON(http.StatusOK, resp)
		return
	}
	if !mapped {
		internalError(c, fmt.Errorf("bucket %d of experiment %s has no variant in its map", bucket, exp.ID))
		return
	}
	variant, err := h.stickyVariant(c.Request.Context(), snap.OrgID, exp, req.UserID, computed)
	if err != nil {
		internalError(c, err)
		return
	}
	resp.Variant = variant
	c.JSON(http.StatusOK, resp)
}

// stickyVariant honours the user's pin and pins computed (the variant every
// client computes from the config) on first assignment. A pin to a variant
// that the current allocation no longer has is kept for analysis, but the
// user then gets the computed answer.
func (h *handlers) stickyVariant(ctx context.Context, orgID string, exp *sdkcache.Experiment, userID, computed string) (string, error) {
	pins := h.deps.SDK.Pins
	pin := pins.Get(exp.ID, userID)
	if pin == "" {
		var err error
		if pin, err = h.pin(ctx, orgID, exp.ID, userID, computed); err != nil {
			return "", err
		}
		pins.Put(exp.ID, userID, pin)
	}
	if exp.HasVariant(pin) {
		return pin, nil
	}
	return computed, nil
}

// pin returns the user's stored pin, recording variant first when there is
// none. The first pin ever recorded wins, so after recording it is read
// back: an exposure or another instance may have pinned the user first.
func (h *handlers) pin(ctx context.Context, orgID, experimentID, userID, variant string) (string, error) {
	pinned, err := assignments.Pinned(ctx, h.deps.DB, experimentID, userID)
	if err != nil || pinned != "" {
		return pinned, err
	}
	err = assignments.PinFirst(ctx, h.deps.DB, []assignments.Pin{{OrgID: orgID, ExperimentID: experimentID,
		UserID: userID, Variant: variant, Source: assignments.SourceAssign}})
	if err != nil {
		return "", err
	}
	return assignments.Pinned(ctx, h.deps.DB, experimentID, userID)
}
