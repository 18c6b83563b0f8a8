package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/ingest"
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
// verifying at once. The secret is in this answer only.
func (h *handlers) rotateSigningSecret(c *gin.Context) {
	s, err := ingest.RotateSigningSecret(c.Request.Context(), h.deps.DB, orgID(c), time.Now())
	if err != nil {
		internalError(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, signingSecretResponse{Secret: s.Secret, CreatedAt: s.CreatedAt, WebhookPath: "/v1/business-events?org=" + s.OrgID})
}
