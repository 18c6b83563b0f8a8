package api

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/validate"
)

// assignBodyLimit caps an AssignRequest (docs/assignment.md).
const assignBodyLimit = 4 << 10

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
	// The bounds of an event's fields, so every assigned user can also send events.
	errs.Text("experiment_id", r.ExperimentID, ingest.MaxRefLen, true)
	errs.Text("user_id", r.UserID, ingest.MaxUserIDLen, true)
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
	variant, err := assignments.Sticky(c.Request.Context(), h.deps.DB, h.deps.SDK.Pins, snap.OrgID, exp.ID, req.UserID, computed, exp.HasVariant)
	if err != nil {
		internalError(c, err)
		return
	}
	resp.Variant = variant
	c.JSON(http.StatusOK, resp)
}
