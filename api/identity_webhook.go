package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/orgs"
	"github.com/expd/expd/workflowclient"
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
	change, handled, err := orgs.ReadClerkEvent(h.deps.SvixSecret, payload, c.Request.Header)
	var malformed *orgs.MalformedEventError
	switch {
	case errors.Is(err, orgs.ErrNoWebhookSecret), errors.Is(err, orgs.ErrSignature):
		problem(c, http.StatusUnauthorized, CodeInvalidSignature, err.Error())
		return
	case errors.As(err, &malformed):
		problem(c, http.StatusBadRequest, CodeMalformedEvent, err.Error())
		return
	case err != nil:
		internalError(c, err)
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
	if err != nil && !errors.Is(err, workflowclient.ErrNotConnected) {
		c.Header("Retry-After", "30")
	}
	if err != nil {
		workflowsUnavailable(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
