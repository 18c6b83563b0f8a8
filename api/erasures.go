package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/erasure"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/validate"
)

// userRequest is the body of POST /v1/erasures and POST /v1/exports:
// user ids are arbitrary strings, so they travel in the body, never in a
// path or a log line.
type userRequest struct {
	UserID string `json:"user_id"`
}

func (r userRequest) check() error {
	errs := &validate.Errors{}
	errs.Text("user_id", r.UserID, ingest.MaxUserIDLen, true)
	return errs.Err()
}

// secretKeyActor is the audit actor of an erasure a secret key asked for.
const secretKeyActor = "secret_key"

// adminOrSecretKey accepts an org admin's session (requireSession then
// requireAdmin) or, in X-API-Key, the org's secret key: server-side
// automation erases users without a person's session.
func (h *handlers) adminOrSecretKey() gin.HandlerFunc {
	key := h.requireSDKKey(auth.Secret)
	return func(c *gin.Context) {
		if c.GetHeader("X-API-Key") != "" && c.GetHeader("Authorization") == "" {
			key(c)
			return
		}
		if h.authenticateSession(c) {
			requireAdmin(c)
		}
	}
}

// actor is who made the request, for the audit log.
func actor(c *gin.Context) string {
	if s, ok := c.Get(ctxKeyScope); ok && s == auth.Secret {
		return secretKeyActor
	}
	return session(c).UserID
}

// POST /v1/erasures (admin or secret key): records the erasure and
// starts its workflow; 202 with its id and state. An unknown user is an
// erasure that completes with zero rows.
func (h *handlers) createErasure(c *gin.Context) {
	var req userRequest
	if !decodeJSON(c, &req) {
		return
	}
	if err := req.check(); err != nil {
		invalid(c, err)
		return
	}
	if !h.deps.Secrets.Configured() {
		problem(c, http.StatusConflict, CodeSecretsNotConfigured, "erasures need the server key EXPD_SECRETS_KEY: it keys the hash that names the user and seals the user id while the erasure runs")
		return
	}
	v, _, err := erasure.Create(c.Request.Context(), h.deps.DB, h.deps.Secrets, orgID(c), req.UserID, actor(c), time.Now())
	if err != nil {
		internalError(c, err)
		return
	}
	if err := h.workflows.StartErasure(c.Request.Context(), orgID(c), v.UserHash, v.ID); err != nil {
		// The row stays running; the same request again starts it.
		workflowStartFailed(c, err)
		return
	}
	c.Header("Location", "/v1/erasures/"+v.ID)
	c.JSON(http.StatusAccepted, v)
}

// GET /v1/erasures/:id (admin or secret key): state and rows removed per
// table.
func (h *handlers) getErasure(c *gin.Context) {
	v, err := erasure.Get(c.Request.Context(), h.deps.DB, orgID(c), c.Param("id"))
	if errors.Is(err, erasure.ErrNotFound) {
		problem(c, http.StatusNotFound, CodeErasureNotFound, "no such erasure in this organization")
		return
	}
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}
