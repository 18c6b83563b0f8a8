package api

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	svix "github.com/svix/svix-webhooks/go"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/orgs"
	"github.com/expd/expd/workflows"
)

// workflowStartTimeout bounds a webhook's wait for Temporal to accept its
// workflow; past it the provider gets 503 and retries later.
const workflowStartTimeout = 5 * time.Second

func (h *handlers) identityRoutes(v1 *gin.RouterGroup) {
	v1.POST("/webhooks/identity-provider", limitBody(defaultBodyLimit), h.identityWebhook)
}

// identityWebhook verifies a Svix-signed identity-provider event and hands
// it to the IdentitySync workflow; 204 means the change is durably queued.
func (h *handlers) identityWebhook(c *gin.Context) {
	payload, err := io.ReadAll(c.Request.Body)
	if err != nil {
		badInput(c, err)
		return
	}
	if h.deps.SvixSecret == "" {
		problem(c, http.StatusUnauthorized, "invalid_signature", "no identity webhook secret is configured on this server, so no delivery can be verified")
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
		problem(c, http.StatusUnauthorized, "invalid_signature", "missing, invalid or stale svix signature")
		return
	}
	change, handled, err := orgs.ParseClerkEvent(payload)
	if err != nil {
		problem(c, http.StatusBadRequest, "malformed_event", err.Error())
		return
	}
	if !handled {
		c.Status(http.StatusNoContent)
		return
	}
	svixID := c.GetHeader("svix-id")
	h.startWebhookWorkflow(c, workflows.IdentitySyncID(svixID), workflows.IdentitySync, workflows.IdentitySyncInput{SvixID: svixID, Change: change})
}

// startWebhookWorkflow starts the workflow of one webhook delivery and
// answers 204 once Temporal holds it. A redelivery finds the same id taken
// (even after the first run completed) and gets 204 too: the event is
// already applied or being applied. Temporal unreachable: 503, so the
// provider retries.
func (h *handlers) startWebhookWorkflow(c *gin.Context, id string, workflow any, input any) {
	if h.deps.Temporal == nil {
		problem(c, http.StatusServiceUnavailable, "workflows_unavailable", "this server is not connected to Temporal; retry later")
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), workflowStartTimeout)
	defer cancel()
	_, err := h.deps.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    id,
		TaskQueue:             h.deps.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, workflow, input)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		h.deps.Logger.ErrorContext(c.Request.Context(), "start webhook workflow", "workflow_id", id, "request_id", requestID(c), "error", err)
		c.Header("Retry-After", "30")
		problem(c, http.StatusServiceUnavailable, "workflows_unavailable", "the event could not be queued; retry later")
		return
	}
	c.Status(http.StatusNoContent)
}
