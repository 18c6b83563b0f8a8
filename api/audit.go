package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/validate"
)

// Bounds of GET /v1/audit.
const (
	defaultAuditLimit = 50
	maxAuditLimit     = 200
	maxCursorBytes    = 512
)

// GET /v1/audit?experiment_id=&action=&limit=&cursor= (admin, additive):
// the org's audit log, newest first, one page at a time.
func (h *handlers) listAudit(c *gin.Context) {
	q := audit.Query{Limit: defaultAuditLimit, Action: c.Query("action"), Cursor: c.Query("cursor")}
	var errs validate.Errors
	raw, given := c.GetQuery("limit")
	q.Limit = errs.Limit(raw, given, q.Limit, maxAuditLimit)
	errs.Text("action", q.Action, 64, false)
	errs.Text("cursor", q.Cursor, maxCursorBytes, false)
	ref, filtered := c.GetQuery("experiment_id")
	if filtered {
		errs.Text("experiment_id", ref, ingest.MaxRefLen, true)
	}
	if err := errs.Err(); err != nil {
		invalid(c, err)
		return
	}
	if filtered {
		// By id or name; another org's experiment is unknown here.
		exp, err := h.experiments.Get(c.Request.Context(), orgID(c), ref)
		if err != nil {
			h.experimentError(c, err)
			return
		}
		q.ExperimentID = exp.ID
	}
	page, err := audit.List(c.Request.Context(), h.deps.DB, orgID(c), q)
	if errors.Is(err, audit.ErrBadCursor) {
		invalid(c, validate.New("cursor", "%v", err))
		return
	}
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, page)
}
