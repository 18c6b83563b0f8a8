package api

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/validate"
)

// assignBodyLimit caps an AssignRequest (docs/assignment.md): room for
// the user's targeting attributes.
const assignBodyLimit = 32 << 10

type assignRequest struct {
	ExperimentID string               `json:"experiment_id"`
	UserID       string               `json:"user_id"`
	Attributes   bucketing.Attributes `json:"attributes"`
}

type assignResponse struct {
	Variant       string `json:"variant"`
	ConfigVersion int64  `json:"config_version"`
	ExperimentID  string `json:"experiment_id"`
	Bucket        uint32 `json:"bucket"`
	// InExperiment and ReasonCode are bucketing.Evaluate's decision.
	InExperiment bool                 `json:"in_experiment"`
	ReasonCode   bucketing.ReasonCode `json:"reason_code"`
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

// POST /v1/assign: bucketing.Evaluate's decision for the user, the one
// every client makes locally, with the user's stored pin read (or recorded)
// when they are in the experiment; an experiment that is not running
// answers the variant it serves to everyone with its status.
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
	dec, err := bucketing.Evaluate(&exp.Served, req.UserID, req.Attributes, "")
	if err != nil {
		internalError(c, err)
		return
	}
	var pin string
	switch dec.Reason {
	case bucketing.ReasonPinned, bucketing.ReasonBucketed:
		// A user without a pin is pinned to what every client computes; a
		// pin recorded earlier may decide otherwise.
		pin, err = assignments.StoredPin(c.Request.Context(), h.deps.DB, h.deps.SDK.Pins, snap.OrgID, exp.ID, req.UserID, dec.Variant)
	case bucketing.ReasonNotTargeted, bucketing.ReasonHoldout:
		// A user assigned before the targeting, their attributes or a
		// holdout changed stays in; nobody is pinned for being left out.
		pin, err = assignments.ReadPin(c.Request.Context(), h.deps.DB, h.deps.SDK.Pins, exp.ID, req.UserID)
	}
	if err == nil && pin != "" && pin != dec.Variant {
		dec, err = bucketing.Evaluate(&exp.Served, req.UserID, req.Attributes, pin)
	}
	if err != nil {
		internalError(c, err)
		return
	}
	if len(dec.Holdouts) > 0 {
		// The clients record these with their exposures; here the server
		// decides, so it records them (docs/targeting.md). A failure costs
		// the holdout's analysis one user, never the caller its answer.
		if err := h.ingest.HoldoutExposures(c.Request.Context(), snap, h.deps.SDK.Pins, req.UserID, dec.Holdouts); err != nil {
			slog.WarnContext(c.Request.Context(), "record holdout exposures", "request_id", requestID(c), "error", err)
		}
	}
	resp := assignResponse{Variant: dec.Variant, ConfigVersion: snap.ConfigVersion, ExperimentID: exp.ID, Bucket: dec.Bucket,
		InExperiment: dec.InExperiment, ReasonCode: dec.Reason, Stopped: dec.Reason == bucketing.ReasonNotRunning}
	if exp.Closed != "" {
		resp.Status, resp.Reason = exp.Status, exp.Reason
	}
	c.JSON(http.StatusOK, resp)
}
