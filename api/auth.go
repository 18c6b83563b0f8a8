package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/mgmttokens"
	"github.com/expd/expd/orgs"
)

// Context keys set by the auth middleware.
const (
	ctxOrgID    = "expd.org_id"
	ctxSession  = "expd.session"
	ctxKeyScope = "expd.key_scope"
	// ctxManagementToken is the id of the management token a dashboard
	// request authenticated with; unset for identity sessions.
	ctxManagementToken = "expd.management_token"
)

// requireSession accepts, as "Authorization: Bearer <credential>", an
// identity-provider session JWT (the org row is created on first sight; the
// identity webhook enriches it later) or an org management token
// (expd_mt_..., package mgmttokens). SDK keys are refused here, as management
// tokens are on the SDK routes: each credential has one route family.
func (h *handlers) requireSession(c *gin.Context) {
	if h.authenticateSession(c) {
		c.Next()
	}
}

// authenticateSession is requireSession without running the rest of the
// chain: it sets the session and org, or answers 401 and returns false.
func (h *handlers) authenticateSession(c *gin.Context) bool {
	authz := c.GetHeader("Authorization")
	token, ok := strings.CutPrefix(authz, "Bearer ")
	token = strings.TrimSpace(token)
	if !ok || token == "" {
		detail := "missing credentials: send Authorization: Bearer <identity session token or management token>"
		if c.GetHeader("X-API-Key") != "" {
			detail = "SDK keys (X-API-Key) are not accepted on dashboard routes; send an identity session token or a management token as Authorization: Bearer"
		}
		unauthorized(c, detail)
		return false
	}
	if _, isKey := auth.ScopeOfKey(token); isKey {
		unauthorized(c, "SDK keys are not accepted on dashboard routes; use an identity session token or a management token")
		return false
	}
	if strings.HasPrefix(token, auth.ManagementTokenPrefix) {
		return h.managementTokenSession(c, token)
	}
	sess, org, err := orgs.SignIn(c.Request.Context(), h.deps.DB, h.deps.Verifier, token)
	switch {
	case errors.Is(err, orgs.ErrBadToken):
		unauthorized(c, "invalid identity token")
		return false
	case errors.Is(err, orgs.ErrDeleted):
		unauthorized(c, "the token's organization has been deleted")
		return false
	case err != nil:
		internalError(c, err)
		return false
	}
	c.Set(ctxSession, sess)
	c.Set(ctxOrgID, org.ID)
	return true
}

// managementTokenSession authenticates a management token: its org and
// role stand in for the identity session's.
func (h *handlers) managementTokenSession(c *gin.Context, plain string) bool {
	tok, err := mgmttokens.Authenticate(c.Request.Context(), h.deps.DB, plain)
	if errors.Is(err, mgmttokens.ErrInvalid) {
		unauthorized(c, "invalid management token: unknown, revoked or expired")
		return false
	}
	if err != nil {
		internalError(c, err)
		return false
	}
	c.Set(ctxSession, mgmttokens.Session(tok))
	c.Set(ctxOrgID, tok.OrgID)
	c.Set(ctxManagementToken, tok.ID)
	return true
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
		if plain == "" || strings.HasPrefix(plain, auth.ManagementTokenPrefix) {
			detail := "missing credentials: send the org's API key in X-API-Key"
			if plain != "" || c.GetHeader("Authorization") != "" {
				detail = "identity sessions and management tokens are not accepted on SDK routes; send a publishable or secret key in X-API-Key"
			}
			unauthorized(c, detail)
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
