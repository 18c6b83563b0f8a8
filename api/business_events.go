package api

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/validate"
)

// businessEventBodyLimit caps one signed business event.
const businessEventBodyLimit = 64 << 10

// businessEventAck is the 202 answer of a business event.
type businessEventAck struct {
	EventID       string `json:"event_id"`
	Accepted      int    `json:"accepted"`
	Duplicates    int    `json:"duplicates"`
	ConfigVersion int64  `json:"config_version"`
}

// POST /v1/business-events?org=<org id>: one business outcome, signed in
// the Standard Webhooks scheme with the org's secret. The org parameter
// only selects the secret to verify with; an unknown org and a bad
// signature get the same 401.
func (h *handlers) postBusinessEvent(c *gin.Context) {
	ctx := c.Request.Context()
	org := c.Query("org")
	if uuid.Validate(org) != nil {
		badSignature(c, "the webhook URL must carry ?org=<org id>, as shown when the signing secret was issued")
		return
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		badInput(c, err)
		return
	}
	if err := ingest.VerifyBusinessEvent(ctx, h.deps.DB, h.deps.Secrets, org, body, c.Request.Header); err != nil {
		var sig *ingest.SignatureError
		if errors.As(err, &sig) || errors.Is(err, ingest.ErrNoSigningSecret) {
			badSignature(c, "invalid webhook signature: a valid webhook-id, webhook-timestamp (within 5 minutes) and webhook-signature made with the org's signing secret are required")
			return
		}
		internalError(c, err)
		return
	}
	ev, err := ingest.BusinessEvent(body, c.Request.Header)
	if err != nil {
		badInput(c, err)
		return
	}
	window := ingest.Window{Now: time.Now(), MaxAge: ingest.LiveMaxAge}
	if _, err := ev.Check(window); err != nil {
		invalid(c, err)
		return
	}
	snap, err := h.deps.SDK.Configs.Get(ctx, org)
	if err != nil {
		internalError(c, err)
		return
	}
	out, err := h.ingest.Business(ctx, snap, ev, window)
	if errors.Is(err, ingest.ErrUnknownExperiment) {
		invalid(c, validate.New("experiment_id", "%v", err))
		return
	}
	if err != nil {
		h.writeFailed(c, err, "events", retryEvents)
		return
	}
	c.JSON(http.StatusAccepted, businessEventAck{EventID: ev.EventID, Accepted: out.Accepted, Duplicates: out.Duplicates, ConfigVersion: snap.ConfigVersion})
}

func badSignature(c *gin.Context, detail string) {
	problem(c, http.StatusUnauthorized, CodeInvalidSignature, detail)
}
