package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/calls"
	"github.com/expd/expd/privacy"
)

// GET /v1/experiments/:id/calls?variant=&model=&error=&score=&score_min=&
// score_max=&from=&to=&limit=&cursor= (additive): the experiment's model
// calls with their prompts, responses and scores, newest first, one page
// at a time (the call explorer, docs/quality.md).
func (h *handlers) listCalls(c *gin.Context) {
	q, err := calls.Parse(c.Request.URL.Query())
	if err != nil {
		invalid(c, err)
		return
	}
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	page, err := calls.Read(c.Request.Context(), h.deps.Events, orgID(c), exp.ID, q)
	if err != nil {
		internalError(c, err)
		return
	}
	inForce, err := h.privacyStore().InForce(c.Request.Context(), orgID(c), exp.PayloadPolicy)
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, struct {
		calls.Page
		privacy.InForce
	}{page, inForce})
}
