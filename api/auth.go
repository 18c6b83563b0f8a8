package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/orgs"
)

// Context keys set by the auth middleware.
const (
	ctxOrgID    = "expd.org_id"
	ctxSession  = "expd.session"
	ctxKeyScope = "expd.key_scope"
)

// requireSession accepts an identity-provider session JWT as
// "Authorization: Bearer <token>" and resolves its org, creating the org
// row on first sight (the identity webhook enriches it later).
func (h *handlers) requireSession(c *gin.Context) {
	authz := c.GetHeader("Authorization")
	token, ok := strings.CutPrefix(authz, "Bearer ")
	if !ok || token == "" {
		unauthorized(c, "missing credentials: send Authorization: Bearer <identity session token>")
		return
	}
	sess, err := h.deps.Verifier.Verify(strings.TrimSpace(token))
	if err != nil {
		unauthorized(c, "invalid identity token")
		return
	}
	org, err := orgs.Ensure(c.Request.Context(), h.deps.DB, sess.OrgID, sess.OrgSlug)
	if errors.Is(err, orgs.ErrDeleted) {
		unauthorized(c, "the token's organization has been deleted")
		return
	}
	if err != nil {
		internalError(c, err)
		return
	}
	c.Set(ctxSession, sess)
	c.Set(ctxOrgID, org.ID)
	c.Next()
}

// requireAdmin must follow requireSession.
func requireAdmin(c *gin.Context) {
	if !session(c).IsAdmin() {
		problem(c, http.StatusForbidden, CodeAdminRequired, "this action is restricted to org admins (role "+auth.AdminRole+")")
		return
	}
	c.Next()
}

// requireKey accepts an org API key in X-API-Key of one of the scopes; the
// org comes from the key, never from the request.
func (h *handlers) requireKey(scopes ...auth.Scope) gin.HandlerFunc {
	return func(c *gin.Context) {
		plain := c.GetHeader("X-API-Key")
		if plain == "" {
			unauthorized(c, "missing credentials: send the org's API key in X-API-Key")
			return
		}
		scope, ok := auth.ScopeOfKey(plain)
		if !ok || !allowed(scope, scopes) {
			unauthorized(c, "invalid API key for this route")
			return
		}
		orgID, err := keys.OrgOfKey(c.Request.Context(), h.deps.DB, plain)
		if err != nil {
			internalError(c, err)
			return
		}
		if orgID == "" {
			unauthorized(c, "invalid API key for this route")
			return
		}
		c.Set(ctxOrgID, orgID)
		c.Set(ctxKeyScope, scope)
		c.Next()
	}
}

func allowed(s auth.Scope, scopes []auth.Scope) bool {
	for _, a := range scopes {
		if a == s {
			return true
		}
	}
	return false
}

func unauthorized(c *gin.Context, detail string) {
	c.Header("WWW-Authenticate", `Bearer realm="expd"`)
	problem(c, http.StatusUnauthorized, CodeUnauthorized, detail)
}

func orgID(c *gin.Context) string { return c.GetString(ctxOrgID) }

func session(c *gin.Context) auth.Session {
	s, _ := c.Get(ctxSession)
	sess, _ := s.(auth.Session)
	return sess
}
