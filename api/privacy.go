package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/privacy"
	"github.com/expd/expd/redaction"
	"github.com/expd/expd/validate"
)

// privacyResponse is GET and PUT /v1/privacy: the org's settings, the
// plan's retention they are bounded by, and the built-in detectors the
// redact policy runs (docs/privacy.md).
type privacyResponse struct {
	privacy.Settings
	PlanRetentionDays int      `json:"plan_retention_days"`
	BuiltinDetectors  []string `json:"builtin_detectors"`
}

func (h *handlers) privacyStore() privacy.Store {
	return privacy.Store{DB: h.deps.DB, Secrets: h.deps.Secrets}
}

// GET /v1/privacy (admin).
func (h *handlers) getPrivacy(c *gin.Context) {
	s, planDays, err := h.cases.Privacy(c.Request.Context(), orgID(c))
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, privacyResponse{Settings: s, PlanRetentionDays: planDays, BuiltinDetectors: redaction.Builtins()})
}

// PUT /v1/privacy (admin): replaces the settings whole (a field left out
// takes its default), audited, applied to the next events stored
// (usecases.Service.SetPrivacy).
func (h *handlers) putPrivacy(c *gin.Context) {
	var req privacy.Settings
	if !decodeJSON(c, &req) {
		return
	}
	out, planDays, err := h.cases.SetPrivacy(c.Request.Context(), orgID(c), session(c).UserID, req)
	switch {
	case validate.Fields(err) != nil:
		invalid(c, err)
	case errors.Is(err, privacy.ErrHashUnavailable):
		problem(c, http.StatusConflict, CodeSecretsNotConfigured, "payload_policy: "+err.Error()+"; choose drop to keep no text, or configure the key")
	case err != nil:
		internalError(c, err)
	default:
		c.JSON(http.StatusOK, privacyResponse{Settings: out, PlanRetentionDays: planDays, BuiltinDetectors: redaction.Builtins()})
	}
}
