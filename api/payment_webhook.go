package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/billing"
	"github.com/expd/expd/workflows"
)

// paymentSignatureHeader carries Stripe's "t=<unix>,v1=<hex>" signature
// under the spec's neutral name; real Stripe deliveries carry it as
// stripeSignatureHeader. Either is verified the same way.
const (
	paymentSignatureHeader = "Payment-Signature"
	stripeSignatureHeader  = "Stripe-Signature"
)

// paymentSignature is the delivery's signature under either name, the
// spec's first.
func paymentSignature(c *gin.Context) string {
	if sig := c.GetHeader(paymentSignatureHeader); sig != "" {
		return sig
	}
	return c.GetHeader(stripeSignatureHeader)
}

// paymentWebhook verifies a payment event and hands the plan-changing
// types to the PaymentEvent workflow; other types are acknowledged.
func (h *handlers) paymentWebhook(c *gin.Context) {
	payload, err := io.ReadAll(c.Request.Body)
	if err != nil {
		badInput(c, err)
		return
	}
	ev, err := h.deps.Billing.ReadEvent(payload, paymentSignature(c))
	switch {
	case errors.Is(err, billing.ErrSignature):
		problem(c, http.StatusUnauthorized, CodeInvalidSignature, "missing, invalid or stale "+paymentSignatureHeader+" (or "+stripeSignatureHeader+")")
		return
	case err != nil:
		problem(c, http.StatusBadRequest, CodeMalformedEvent, err.Error())
		return
	case !billing.Handled(ev.Type):
		c.Status(http.StatusNoContent)
		return
	}
	acceptDelivery(c, h.workflows.StartPaymentEvent(c.Request.Context(), workflows.PaymentEventInput{Event: ev}))
}
