package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/mgmttokens"
	"github.com/expd/expd/validate"
)

// managementTokenRequest is the body of POST /v1/management-tokens.
type managementTokenRequest struct {
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// POST /v1/management-tokens (admin; an identity session only, so that a
// leaked token cannot mint itself successors).
func (h *handlers) createManagementToken(c *gin.Context) {
	if c.GetString(ctxManagementToken) != "" {
		problem(c, http.StatusForbidden, CodeIdentitySessionRequired, "management tokens are created from an identity session (the dashboard or `expd login` with a session token), not by another management token")
		return
	}
	var req managementTokenRequest
	if !decodeJSON(c, &req) {
		return
	}
	tok, plain, err := mgmttokens.Create(c.Request.Context(), h.deps.DB, mgmttokens.CreateInput{
		OrgID: orgID(c), Name: req.Name, Role: req.Role, ExpiresAt: req.ExpiresAt, Actor: session(c).UserID})
	if validate.Fields(err) != nil {
		invalid(c, err)
		return
	}
	if err != nil {
		internalError(c, err)
		return
	}
	c.Header("Location", "/v1/management-tokens/"+tok.ID)
	c.JSON(http.StatusCreated, mgmttokens.IssuedToken{Token: tok, Plaintext: plain})
}

// GET /v1/management-tokens (admin): every token of the org, never its
// plaintext.
func (h *handlers) listManagementTokens(c *gin.Context) {
	list, err := mgmttokens.List(c.Request.Context(), h.deps.DB, orgID(c))
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, mgmttokens.TokenList{ManagementTokens: list})
}

// DELETE /v1/management-tokens/:token_id (admin): revokes at once.
func (h *handlers) revokeManagementToken(c *gin.Context) {
	err := mgmttokens.Revoke(c.Request.Context(), h.deps.DB, orgID(c), c.Param("token_id"), session(c).UserID)
	if errors.Is(err, mgmttokens.ErrNotFound) {
		problem(c, http.StatusNotFound, CodeManagementTokenNotFound, "no management token with this id in your org")
		return
	}
	if err != nil {
		internalError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
