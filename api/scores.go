package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/validate"
)

// scoresBodyLimit bounds POST /v1/scores as POST /v1/events is bounded.
const scoresBodyLimit = eventsBodyLimit

// POST /v1/scores: quality scores of model calls (docs/quality.md). One
// bad score refuses the batch with a 400 naming its fields; answers 202
// (the IngestAck of /v1/events) only once the batch has committed.
func (h *handlers) postScores(c *gin.Context) {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		badInput(c, validate.DecodeError(err))
		return
	}
	batch, err := scores.Decode(body)
	if err != nil {
		badInput(c, err)
		return
	}
	snap, ok := h.orgSnapshot(c)
	if !ok {
		return
	}
	scope, _ := c.Get(ctxKeyScope)
	out, err := h.ingest.Scores(c.Request.Context(), snap, batch, scope != auth.Secret)
	switch {
	case errors.Is(err, ingest.ErrScoreSource):
		writeProblem(c, Problem{Status: http.StatusForbidden, Code: CodeSecretKeyRequired,
			Detail: "a publishable key may send human scores only; send judge and code scores with the secret key; nothing of this request was stored",
			Errors: validate.Fields(err)})
	case validate.Fields(err) != nil:
		invalid(c, err)
	case err != nil:
		h.writeFailed(c, err, "scores", "retry the same scores: a score replaces the one with its call_id, name and source")
	default:
		c.JSON(http.StatusAccepted, ingestAck{Accepted: out.Accepted, Duplicates: out.Duplicates,
			ConfigVersion: snap.ConfigVersion, Rejected: []ingest.Rejection{}})
	}
}
