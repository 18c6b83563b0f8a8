package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/secrets"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/webhooks"
)

// Bounds of the webhook-endpoint routes.
const (
	webhookBodyLimit        = 16 << 10 // 16 KiB: a URL, a description, a few types
	maxWebhookDescription   = 256
	defaultDeliveriesLimit  = 50
	maxDeliveriesLimit      = 200
	webhookResolveTimeout   = 2 * time.Second
	maxWebhookEventTypeSize = 64
)

// webhookEndpointRequest is the body of POST /v1/webhook-endpoints.
type webhookEndpointRequest struct {
	URL         string   `json:"url"`
	Description string   `json:"description"`
	EventTypes  []string `json:"event_types"` // absent or empty: every type
}

// webhookEndpointList is the answer of GET /v1/webhook-endpoints.
type webhookEndpointList struct {
	Endpoints []webhooks.Endpoint `json:"endpoints"`
}

// allowPrivateWebhooks tells whether endpoints may be http and on local
// addresses: only under `expd dev` (the server knows it is in dev by its
// DevToken, which only `expd dev` sets).
func (h *handlers) allowPrivateWebhooks() bool { return h.deps.DevToken != "" }

// POST /v1/webhook-endpoints (admin, additive): registers an endpoint for
// the org's outbound webhooks. The signing secret is in this answer only.
func (h *handlers) createWebhookEndpoint(c *gin.Context) {
	var req webhookEndpointRequest
	if !decodeJSON(c, &req) {
		return
	}
	var errs validate.Errors
	errs.Text("url", req.URL, webhooks.MaxURLLen, true)
	errs.Text("description", req.Description, maxWebhookDescription, false)
	seen := map[string]bool{}
	for i, t := range req.EventTypes {
		field := fmt.Sprintf("event_types[%d]", i)
		switch {
		case len(t) > maxWebhookEventTypeSize || !webhooks.KnownType(t):
			errs.Add(field, "must be one of %v", webhooks.EventTypes)
		case seen[t]:
			errs.Add(field, "is listed twice")
		}
		seen[t] = true
	}
	if errs.Err() == nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), webhookResolveTimeout)
		defer cancel()
		var bad *webhooks.URLError
		if err := webhooks.CheckURL(ctx, req.URL, h.allowPrivateWebhooks(), h.resolver()); errors.As(err, &bad) {
			errs.Add("url", "%s", bad.Reason)
		}
	}
	if err := errs.Err(); err != nil {
		invalid(c, err)
		return
	}
	created, err := webhooks.Create(c.Request.Context(), h.deps.DB, h.deps.Secrets, orgID(c),
		webhooks.NewEndpoint{URL: req.URL, Description: req.Description, EventTypes: req.EventTypes, Actor: session(c).UserID}, time.Now())
	if errors.Is(err, webhooks.ErrTooManyEndpoints) {
		problem(c, http.StatusConflict, CodeWebhookEndpointLimit, err.Error()+"; delete one first")
		return
	}
	if errors.Is(err, secrets.ErrNoKey) {
		secretsNotConfigured(c, "a webhook endpoint's signing secret")
		return
	}
	if err != nil {
		internalError(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, created)
}

func (h *handlers) resolver() webhooks.Resolver {
	if h.deps.Resolver != nil {
		return h.deps.Resolver
	}
	return net.DefaultResolver
}

// GET /v1/webhook-endpoints (admin, additive): the org's endpoints, oldest
// first, without their secrets.
func (h *handlers) listWebhookEndpoints(c *gin.Context) {
	list, err := webhooks.List(c.Request.Context(), h.deps.DB, orgID(c))
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, webhookEndpointList{Endpoints: list})
}

// GET /v1/webhook-endpoints/:id (admin, additive).
func (h *handlers) getWebhookEndpoint(c *gin.Context) {
	ep, err := webhooks.Get(c.Request.Context(), h.deps.DB, orgID(c), c.Param("id"))
	if err != nil {
		h.webhookEndpointError(c, err)
		return
	}
	c.JSON(http.StatusOK, ep)
}

// DELETE /v1/webhook-endpoints/:id (admin, additive): no more deliveries;
// attempts under way stop at their next try. The deliveries stay readable.
func (h *handlers) deleteWebhookEndpoint(c *gin.Context) {
	err := webhooks.Delete(c.Request.Context(), h.deps.DB, orgID(c), c.Param("id"), session(c).UserID, time.Now())
	if err != nil {
		h.webhookEndpointError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// GET /v1/webhook-endpoints/:id/deliveries?limit=&cursor= (admin,
// additive): every delivery attempt to the endpoint, newest first.
func (h *handlers) listWebhookDeliveries(c *gin.Context) {
	limit, cursor := defaultDeliveriesLimit, c.Query("cursor")
	var errs validate.Errors
	raw, given := c.GetQuery("limit")
	limit = errs.Limit(raw, given, limit, maxDeliveriesLimit)
	errs.Text("cursor", cursor, maxCursorBytes, false)
	if err := errs.Err(); err != nil {
		invalid(c, err)
		return
	}
	page, err := webhooks.ListDeliveries(c.Request.Context(), h.deps.DB, orgID(c), c.Param("id"), cursor, limit)
	if errors.Is(err, webhooks.ErrBadCursor) {
		invalid(c, validate.New("cursor", "%v", err))
		return
	}
	if err != nil {
		h.webhookEndpointError(c, err)
		return
	}
	c.JSON(http.StatusOK, page)
}

func (h *handlers) webhookEndpointError(c *gin.Context, err error) {
	if errors.Is(err, webhooks.ErrNotFound) {
		problem(c, http.StatusNotFound, CodeWebhookEndpointNotFound, "no webhook endpoint "+strconv.Quote(c.Param("id"))+" in this org")
		return
	}
	internalError(c, err)
}
