package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/validate"
)

// evaluatorBodyLimit bounds an evaluator: a template (32 KiB), a JSON
// Schema (64 KiB) and the rest.
const evaluatorBodyLimit = 128 << 10

// evaluatorList is the answer of GET /v1/evaluators.
type evaluatorList struct {
	Evaluators []evaluators.Evaluator `json:"evaluators"`
}

func (h *handlers) evaluatorStore() evaluators.Store {
	return evaluators.Store{DB: h.deps.DB, Secrets: h.deps.Secrets}
}

// evaluatorRules are the server's side of validating an evaluator: the
// outbound-webhook URL rules for a judge's endpoint (private addresses in
// dev only) and the org's experiments.
func (h *handlers) evaluatorRules(c *gin.Context) evaluators.Rules {
	org := orgID(c)
	return evaluators.Rules{
		AllowPrivate: h.allowPrivateWebhooks(),
		Resolver:     h.resolver(),
		Experiments: func(ctx context.Context, refs []string) (map[string]string, error) {
			return ingest.LookupExperiments(ctx, h.deps.DB, org, refs)
		},
	}
}

// POST /v1/evaluators (admin, additive): a new online evaluator, version 1.
// A judge's api_key is sealed at rest and never shown again.
func (h *handlers) createEvaluator(c *gin.Context) {
	var spec evaluators.Spec
	if !decodeJSON(c, &spec) {
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), webhookResolveTimeout)
	defer cancel()
	ev, err := h.evaluatorStore().Create(ctx, orgID(c), spec, h.evaluatorRules(c), session(c).UserID, time.Now())
	if err != nil {
		h.evaluatorError(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, ev)
}

// GET /v1/evaluators (admin, additive): the org's evaluators, oldest first.
func (h *handlers) listEvaluators(c *gin.Context) {
	list, err := h.evaluatorStore().List(c.Request.Context(), orgID(c))
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, evaluatorList{Evaluators: list})
}

// GET /v1/evaluators/:id (admin, additive).
func (h *handlers) getEvaluator(c *gin.Context) {
	ev, err := h.evaluatorStore().Get(c.Request.Context(), orgID(c), c.Param("id"))
	if err != nil {
		h.evaluatorError(c, err)
		return
	}
	c.JSON(http.StatusOK, ev)
}

// PUT /v1/evaluators/:id (admin, additive): replaces the evaluator's spec
// and raises its version; an absent api_key keeps the stored one.
func (h *handlers) updateEvaluator(c *gin.Context) {
	var spec evaluators.Spec
	if !decodeJSON(c, &spec) {
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), webhookResolveTimeout)
	defer cancel()
	ev, err := h.evaluatorStore().Update(ctx, orgID(c), c.Param("id"), spec, h.evaluatorRules(c), session(c).UserID, time.Now())
	if err != nil {
		h.evaluatorError(c, err)
		return
	}
	c.JSON(http.StatusOK, ev)
}

// DELETE /v1/evaluators/:id (admin, additive): the evaluator stops; its
// scores stay.
func (h *handlers) deleteEvaluator(c *gin.Context) {
	if err := h.evaluatorStore().Delete(c.Request.Context(), orgID(c), c.Param("id"), session(c).UserID, time.Now()); err != nil {
		h.evaluatorError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *handlers) evaluatorError(c *gin.Context, err error) {
	switch {
	case validate.Fields(err) != nil:
		invalid(c, err)
	case errors.Is(err, evaluators.ErrNotFound):
		problem(c, http.StatusNotFound, CodeEvaluatorNotFound, "no evaluator "+strconv.Quote(c.Param("id"))+" in this org")
	case errors.Is(err, evaluators.ErrNoSecretsKey):
		problem(c, http.StatusConflict, CodeSecretsNotConfigured,
			"this server has no EXPD_SECRETS_KEY to keep a judge's api_key encrypted; an operator must set one (docs/quality.md)")
	default:
		internalError(c, err)
	}
}
