package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	svix "github.com/svix/svix-webhooks/go"

	"github.com/expd/expd/orgs"
	"github.com/expd/expd/workflows"
)

// identityWebhook verifies a Svix-signed identity-provider event and hands
// it to the IdentitySync workflow; 204 means the change is durably queued.
func (h *handlers) identityWebhook(c *gin.Context) {
	payload, err := io.ReadAll(c.Request.Body)
	if err != nil {
		badInput(c, err)
		return
	}
	if h.deps.SvixSecret == "" {
		problem(c, http.StatusUnauthorized, CodeInvalidSignature, "no identity webhook secret is configured on this server, so no delivery can be verified")
		return
	}
	wh, err := svix.NewWebhook(h.deps.SvixSecret)
	if err != nil {
		internalError(c, err)
		return
	}
	// Verify checks svix-id, svix-timestamp (5 minutes either way) and
	// svix-signature against every signature the header lists.
	if err := wh.Verify(payload, c.Request.Header); err != nil {
		problem(c, http.StatusUnauthorized, CodeInvalidSignature, "missing, invalid or stale svix signature")
		return
	}
	change, handled, err := orgs.ParseClerkEvent(payload)
	if err != nil {
		problem(c, http.StatusBadRequest, CodeMalformedEvent, err.Error())
		return
	}
	if !handled {
		c.Status(http.StatusNoContent)
		return
	}
	acceptDelivery(c, h.workflows.StartIdentitySync(c.Request.Context(), workflows.IdentitySyncInput{SvixID: c.GetHeader("svix-id"), Change: change}))
}

// acceptDelivery answers a webhook delivery once its workflow start
// returned: 204 when Temporal holds it (a redelivery included), else 503,
// so the provider retries.
func acceptDelivery(c *gin.Context, err error) {
	if err != nil && !errors.Is(err, workflows.ErrNotConnected) {
		c.Header("Retry-After", "30")
	}
	if err != nil {
		workflowsUnavailable(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
