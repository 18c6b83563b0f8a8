package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/workflowclient"
)

type keyRequest struct {
	Scope string `json:"scope"`
}

// apiKey is the ApiKey resource; Key is shown once (publishable keys can
// be read again by an admin).
type apiKey struct {
	Scope     auth.Scope `json:"scope"`
	Key       string     `json:"key"`
	CreatedAt time.Time  `json:"created_at"`
}

// POST /v1/keys {"scope": "publishable"|"secret"}: issues a new key of the
// scope and revokes the previous one, through the KeyRotation workflow,
// which only ever sees the key's hash.
func (h *handlers) rotateKey(c *gin.Context) {
	var req keyRequest
	if !decodeJSON(c, &req) {
		return
	}
	scope, err := auth.ParseScope(req.Scope)
	if err != nil {
		invalid(c, validate.New("scope", "must be %q or %q", auth.Publishable, auth.Secret))
		return
	}
	k, err := h.cases.RotateKey(c.Request.Context(), orgID(c), session(c).UserID, scope)
	switch {
	case errors.Is(err, workflowclient.ErrNotConnected):
		workflowsUnavailable(c, err)
	case errors.Is(err, context.DeadlineExceeded):
		problem(c, http.StatusServiceUnavailable, CodeKeyRotationTimeout,
			fmt.Sprintf("the rotation did not finish within %s; it may still complete, so rotate again to get a key you can see", workflowclient.KeyRotationTimeout))
	case err != nil:
		internalError(c, err)
	default:
		c.JSON(http.StatusCreated, apiKey{Scope: k.Scope, Key: k.Plain, CreatedAt: k.CreatedAt})
	}
}

// GET /v1/keys/publishable: the org's live publishable key.
func (h *handlers) getPublishableKey(c *gin.Context) {
	plain, createdAt, err := keys.Publishable(c.Request.Context(), h.deps.DB, orgID(c))
	if err != nil {
		internalError(c, err)
		return
	}
	if plain == "" {
		problem(c, http.StatusNotFound, CodeNoPublishableKey, "the org has no live publishable key; issue one with POST /v1/keys")
		return
	}
	c.JSON(http.StatusOK, apiKey{Scope: auth.Publishable, Key: plain, CreatedAt: createdAt})
}

// requireSDKKey is requireKey with the instance's cache of live keys in
// front, so that the SDK hot paths look keys up in memory. Misses go
// through requireKey, and a key it accepts is remembered unless a rotation
// of any org happened meanwhile (it might have revoked this key).
func (h *handlers) requireSDKKey(scopes ...auth.Scope) gin.HandlerFunc {
	verify := h.requireKey(scopes...)
	return func(c *gin.Context) {
		cache := h.deps.SDK.Keys
		hash := auth.HashKey(c.GetHeader("X-API-Key"))
		if org, scope, ok := cache.Lookup(hash); ok && allowed(scope, scopes) {
			c.Set(ctxOrgID, org)
			c.Set(ctxKeyScope, scope)
			c.Next()
			return
		}
		ticket := cache.Begin()
		verify(c) // runs the rest of the chain when the key is live
		if org := orgID(c); org != "" {
			scope, _ := c.Get(ctxKeyScope)
			cache.Remember(ticket, hash, org, scope.(auth.Scope))
		}
	}
}
