package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/workflows"
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
		Judgeable: func(ctx context.Context, ids []string) error { return h.judgeable(ctx, org, ids) },
	}
}

// judgeable refuses an LLM judge where the payload policy keeps no text:
// the org's, or a listed experiment's stricter one (docs/privacy.md).
func (h *handlers) judgeable(ctx context.Context, org string, experimentIDs []string) error {
	set, err := h.privacyStore().Get(ctx, org)
	if err != nil {
		return err
	}
	if !set.PayloadPolicy.KeepsText() {
		return fmt.Errorf("%w: the org's payload policy is %s", privacy.ErrTextNotKept, set.PayloadPolicy)
	}
	for _, id := range experimentIDs {
		exp, err := h.experiments.Get(ctx, org, id)
		if err != nil {
			return err
		}
		if p := set.PayloadPolicy.Stricter(exp.PayloadPolicy); !p.KeepsText() {
			return fmt.Errorf("%w: experiment %s has payload policy %s", privacy.ErrTextNotKept, exp.Name, p)
		}
	}
	return nil
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
	h.workflows.StartEvaluatorOrLog(c.Request.Context(), h.deps.Logger, ev.ID)
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
	h.workflows.StartEvaluatorOrLog(c.Request.Context(), h.deps.Logger, ev.ID) // running already: nothing happens
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

// GET /v1/evaluators/:id/evaluations?status=&limit=&cursor= (admin,
// additive): the evaluator's evaluations, newest first (scores and
// failures), with today's usage of its budget.
func (h *handlers) listEvaluations(c *gin.Context) {
	limit, cursor, status := defaultDeliveriesLimit, c.Query("cursor"), c.Query("status")
	var errs validate.Errors
	raw, given := c.GetQuery("limit")
	limit = errs.Limit(raw, given, limit, maxDeliveriesLimit)
	if status != "" && status != evaluators.StatusScored && status != evaluators.StatusFailed {
		errs.Add("status", "must be %q or %q", evaluators.StatusScored, evaluators.StatusFailed)
	}
	errs.Text("cursor", cursor, maxCursorBytes, false)
	if err := errs.Err(); err != nil {
		invalid(c, err)
		return
	}
	page, err := h.evaluatorStore().ListEvaluations(c.Request.Context(), orgID(c), c.Param("id"), status, cursor, limit, time.Now())
	if errors.Is(err, evaluators.ErrBadCursor) {
		invalid(c, validate.New("cursor", "%v", err))
		return
	}
	if err != nil {
		h.evaluatorError(c, err)
		return
	}
	c.JSON(http.StatusOK, page)
}

// evaluatorBackfillRequest is the body of POST /v1/evaluators/:id/backfill.
type evaluatorBackfillRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// maxEvaluatorBackfill bounds a backfill's range (the events' retention
// bounds it further).
const maxEvaluatorBackfill = 90 * 24 * time.Hour

// POST /v1/evaluators/:id/backfill (admin, additive): evaluate the calls
// with ts in [from, to) that the evaluator has not evaluated, within its
// daily budget. 202: the evaluator's workflow took the range.
func (h *handlers) backfillEvaluator(c *gin.Context) {
	var req evaluatorBackfillRequest
	if !decodeJSON(c, &req) {
		return
	}
	var errs validate.Errors
	parse := func(field, v string) time.Time {
		if v == "" {
			errs.Add(field, "is required (RFC 3339)")
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			errs.Add(field, "must be RFC 3339, like 2026-11-20T00:00:00Z")
		}
		return t
	}
	from, to := parse("from", req.From), parse("to", req.To)
	switch {
	case errs.Err() != nil:
	case !from.Before(to):
		errs.Add("to", "must be after from")
	case to.Sub(from) > maxEvaluatorBackfill:
		errs.Add("to", "must be at most %d days after from", int(maxEvaluatorBackfill/(24*time.Hour)))
	}
	if err := errs.Err(); err != nil {
		invalid(c, err)
		return
	}
	ev, err := h.evaluatorStore().Get(c.Request.Context(), orgID(c), c.Param("id"))
	if err != nil {
		h.evaluatorError(c, err)
		return
	}
	if err := h.workflows.BackfillEvaluator(c.Request.Context(), ev.ID, from.UTC(), to.UTC()); err != nil {
		workflowsUnavailable(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"evaluator": ev.ID, "from": from.UTC(), "to": to.UTC(), "workflow_id": workflows.EvaluatorID(ev.ID)})
}

func (h *handlers) evaluatorError(c *gin.Context, err error) {
	switch {
	case validate.Fields(err) != nil:
		invalid(c, err)
	case errors.Is(err, evaluators.ErrNotFound):
		problem(c, http.StatusNotFound, CodeEvaluatorNotFound, "no evaluator "+strconv.Quote(c.Param("id"))+" in this org")
	case errors.Is(err, privacy.ErrTextNotKept):
		problem(c, http.StatusConflict, CodePayloadNotKept, err.Error()+
			"; an LLM judge has nothing to read. Score in your process instead: a code evaluator run by the client (docs/privacy.md, docs/quality.md)")
	case errors.Is(err, evaluators.ErrNoSecretsKey):
		secretsNotConfigured(c, "a judge's api_key")
	default:
		internalError(c, err)
	}
}
