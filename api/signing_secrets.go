package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/secrets"
)

// signingSecretResponse shows a business-event signing secret, once.
type signingSecretResponse struct {
	Secret    string    `json:"secret"`
	CreatedAt time.Time `json:"created_at"`
	// WebhookPath is where the org's signed business events go.
	WebhookPath string `json:"webhook_path"`
}

// POST /v1/business-events/secret (admin, additive): issues the org's
// business-event signing secret, or rotates it; the previous secret stops
// verifying at once. The secret is in this answer only; it is stored
// sealed under EXPD_SECRETS_KEY (none configured: 409).
func (h *handlers) rotateSigningSecret(c *gin.Context) {
	s, err := ingest.RotateSigningSecret(c.Request.Context(), h.deps.DB, h.deps.Secrets, orgID(c), time.Now())
	if errors.Is(err, secrets.ErrNoKey) {
		secretsNotConfigured(c, "the business-event signing secret")
		return
	}
	if err != nil {
		internalError(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, signingSecretResponse{Secret: s.Secret, CreatedAt: s.CreatedAt, WebhookPath: "/v1/business-events?org=" + s.OrgID})
}
