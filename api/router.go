// Package api is expd's HTTP interface: NewRouter is the one route table,
// grouped by credential, naming each route's handler and its file. Each
// resource has its own file (experiments.go, ...); auth, limits and problem
// responses each have theirs.
package api

import (
	"context"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/dashboard"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/ratelimit"
	"github.com/expd/expd/results"
	"github.com/expd/expd/sdkcache"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/usecases"
	"github.com/expd/expd/webhooks"
	"github.com/expd/expd/workflowclient"
)

// Deps are what the handlers need. Temporal may be nil where no route that
// starts workflows is exercised; readiness then reports it missing.
type Deps struct {
	DB         *gorm.DB
	Verifier   *auth.Verifier
	Temporal   client.Client
	TaskQueue  string // task queue of expd's workflows
	Logger     *slog.Logger
	SDK        *sdkcache.Cache    // per-instance cache of configs, keys and pins (config.go); nil: a fresh one
	RateLimits *ratelimit.Limiter // per-org limits of the SDK routes (ratelimit.go); nil: the plan table's
	Ingest     *ingest.Writer     // group-commit event writer (events.go); nil: one over DB
	Events     ingest.EventStore  // the events store the read-back route reads (events_read.go); nil: ingest.SQLEvents over DB
	Aggregator results.Aggregator // what the traffic route and the dashboard read from events; nil: results.SQL over DB
	Billing    *billing.Client    // the Stripe adapter (billing.go); nil or unconfigured: billing_configured false
	SvixSecret string             // CLERK_WEBHOOK_SECRET (whsec_...) of the identity webhook; empty: every delivery gets 401
	Resolver   webhooks.Resolver  // resolves webhook endpoint and judge hosts at registration (webhook_endpoints.go); nil: net.DefaultResolver
	Secrets    *secrets.Keyring   // EXPD_SECRETS_KEY (and _PREVIOUS): seals judges' api keys and signing secrets; nil: none configured
	// EvaluatorPoll replaces the evaluators' workflows' poll interval (tests); 0: the default.
	EvaluatorPoll time.Duration
	// KeyRotated hears of every key a rotation issues (usecases.Service); expd dev only.
	KeyRotated func(ctx context.Context, orgID string, key usecases.RotatedKey)

	// The dashboard (dashboard/): DevToken signs visitors in as the dev
	// admin (expd dev only); TemporalUI ("" hides links) and Namespace
	// make links to a run's workflow.
	DevToken   string
	TemporalUI string
	Namespace  string
	Logging    RequestLogging // which requests get a log line (requestid.go)
	// DashboardOrigins (EXPD_DASHBOARD_ORIGINS) may call dashboard routes
	// from a browser with credentials (cors.go).
	DashboardOrigins []string
}

type handlers struct {
	deps        Deps
	experiments experiments.Store
	workflows   workflowclient.Starter
	cases       usecases.Service
	ingest      ingest.Sources
}

// NewRouter builds the gin engine with every route.
func NewRouter(deps Deps) *gin.Engine {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	// Per-instance state the caller did not share gets a fresh default.
	if deps.SDK == nil {
		deps.SDK = sdkcache.New(deps.DB, sdkcache.Options{Secrets: deps.Secrets})
	}
	if deps.RateLimits == nil {
		deps.RateLimits = ratelimit.New(nil, nil)
	}
	if deps.Ingest == nil {
		deps.Ingest = ingest.NewWriter(deps.DB, ingest.Options{Secrets: deps.Secrets})
	}
	if deps.Events == nil {
		deps.Events = ingest.SQLEvents{DB: deps.DB}
	}
	if deps.Aggregator == nil {
		deps.Aggregator = results.SQL{DB: deps.DB}
	}
	sources := ingest.Sources{DB: deps.DB, Writer: deps.Ingest}
	starter := workflowclient.Starter{Client: deps.Temporal, TaskQueue: deps.TaskQueue, EvaluatorPoll: deps.EvaluatorPoll}
	h := &handlers{deps: deps, experiments: experiments.Store{DB: deps.DB}, workflows: starter,
		ingest: sources}
	h.cases = usecases.Service{DB: deps.DB, Workflows: starter, SDK: deps.SDK, Ingest: sources, Logger: deps.Logger, KeyRotated: deps.KeyRotated, Secrets: deps.Secrets,
		RecentUsers: func(ctx context.Context, orgID string) (int64, error) {
			return h.powerReader().RecentUsers(ctx, orgID, time.Now().UTC())
		}}

	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	r.Use(traceRequests(), withRequestID(deps.Logger, deps.Logging), limitHeaders, gin.CustomRecovery(recovery), dashboardCORS(deps.DashboardOrigins))
	r.NoRoute(notFoundRoute)
	r.NoMethod(methodNotAllowed)

	// ---- Health (no credentials) ----
	r.GET("/healthz", h.healthz) // health.go
	r.GET("/readyz", h.readyz)   // health.go

	v1 := r.Group("/v1")
	// ---- The API's own description (no credentials, cacheable) ----
	v1.GET("/openapi.json", serveOpenAPI) // openapi.go
	r.GET("/docs", serveDocs)             // docs.go: the reference, rendered by Swagger UI
	r.GET("/docs/:file", serveDocsFile)   // docs.go

	// ---- Dashboard: identity-provider session or management token (requireSession, auth.go) ----
	// Body limits are set per group or route: ingest routes take larger bodies.
	dash := v1.Group("", limitBody(defaultBodyLimit), h.requireSession)
	dash.GET("/experiments", h.listExperiments)                            // experiments.go
	dash.POST("/experiments", h.createExperiment)                          // experiments.go
	dash.GET("/experiments/:id", h.getExperiment)                          // experiments.go
	dash.PUT("/experiments/:id", h.updateExperiment)                       // experiments.go
	dash.PATCH("/experiments/:id", h.patchExperiment)                      // experiments.go
	dash.GET("/experiments/:id/versions/:version", h.getExperimentVersion) // experiments.go
	dash.GET("/experiments/:id/events", h.listEvents)                      // events_read.go
	dash.GET("/experiments/:id/calls", h.listCalls)                        // calls.go
	dash.GET("/experiments/:id/traffic", h.traffic)                        // traffic.go
	dash.GET("/experiments/:id/results", h.getResults)                     // results.go
	dash.GET("/experiments/:id/power", h.experimentPower)                  // power.go
	dash.POST("/power", h.draftPower)                                      // power.go
	dash.POST("/experiments/:id/runs", h.startRun)                         // runs.go
	dash.GET("/experiments/:id/runs/:run_id", h.getRun)                    // runs.go
	dash.GET("/metrics", h.listMetrics)                                    // metrics.go
	dash.POST("/metrics", h.createMetric)                                  // metrics.go
	dash.GET("/plans", listPlans)                                          // plans.go
	dash.GET("/billing/summary", h.billingSummary)                         // billing.go
	// Admin only (requireAdmin, auth.go).
	dash.POST("/keys", requireAdmin, h.rotateKey)                                                       // keys.go
	dash.GET("/keys/publishable", requireAdmin, h.getPublishableKey)                                    // keys.go
	dash.POST("/business-events/secret", requireAdmin, h.rotateSigningSecret)                           // signing_secrets.go
	dash.POST("/billing/checkout-session", requireAdmin, h.createCheckoutSession)                       // billing.go
	dash.POST("/billing/portal-session", requireAdmin, h.createPortalSession)                           // billing.go
	dash.POST("/management-tokens", requireAdmin, h.createManagementToken)                              // management_tokens.go
	dash.GET("/management-tokens", requireAdmin, h.listManagementTokens)                                // management_tokens.go
	dash.DELETE("/management-tokens/:token_id", requireAdmin, h.revokeManagementToken)                  // management_tokens.go
	dash.GET("/audit", requireAdmin, h.listAudit)                                                       // audit.go
	dash.GET("/privacy", requireAdmin, h.getPrivacy)                                                    // privacy.go
	dash.PUT("/privacy", requireAdmin, h.putPrivacy)                                                    // privacy.go
	dash.POST("/experiments/:id/start", requireAdmin, h.lifecycleAction(experiments.ActionStart))       // lifecycle.go
	dash.POST("/experiments/:id/stop", requireAdmin, h.lifecycleAction(experiments.ActionStop))         // lifecycle.go
	dash.POST("/experiments/:id/ship", requireAdmin, h.shipExperiment)                                  // lifecycle.go
	dash.POST("/webhook-endpoints", requireAdmin, limitBody(webhookBodyLimit), h.createWebhookEndpoint) // webhook_endpoints.go
	dash.GET("/webhook-endpoints", requireAdmin, h.listWebhookEndpoints)                                // webhook_endpoints.go
	dash.GET("/webhook-endpoints/:id", requireAdmin, h.getWebhookEndpoint)                              // webhook_endpoints.go
	dash.DELETE("/webhook-endpoints/:id", requireAdmin, h.deleteWebhookEndpoint)                        // webhook_endpoints.go
	dash.GET("/webhook-endpoints/:id/deliveries", requireAdmin, h.listWebhookDeliveries)                // webhook_endpoints.go
	dash.POST("/layers", requireAdmin, h.createLayer)                                                   // layers.go
	dash.GET("/layers", requireAdmin, h.listLayers)                                                     // layers.go
	dash.GET("/layers/:id", requireAdmin, h.getLayer)                                                   // layers.go
	dash.PUT("/layers/:id", requireAdmin, h.updateLayer)                                                // layers.go
	dash.POST("/holdouts", requireAdmin, h.createHoldout)                                               // holdouts.go
	dash.GET("/holdouts", requireAdmin, h.listHoldouts)                                                 // holdouts.go
	dash.GET("/holdouts/:id", requireAdmin, h.getHoldout)                                               // holdouts.go
	dash.PUT("/holdouts/:id", requireAdmin, h.updateHoldout)                                            // holdouts.go
	dash.GET("/holdouts/:id/results", requireAdmin, h.getHoldoutResults)                                // holdout_results.go
	dash.POST("/holdouts/:id/runs", requireAdmin, h.startHoldoutRun)                                    // holdout_results.go
	dash.POST("/runs/backfill", requireAdmin, h.startBackfill)                                          // runs.go
	dash.POST("/evaluators", requireAdmin, limitBody(evaluatorBodyLimit), h.createEvaluator)            // evaluators.go
	dash.GET("/evaluators", requireAdmin, h.listEvaluators)                                             // evaluators.go
	dash.GET("/evaluators/:id", requireAdmin, h.getEvaluator)                                           // evaluators.go
	dash.PUT("/evaluators/:id", requireAdmin, limitBody(evaluatorBodyLimit), h.updateEvaluator)         // evaluators.go
	dash.DELETE("/evaluators/:id", requireAdmin, h.deleteEvaluator)                                     // evaluators.go
	dash.GET("/evaluators/:id/evaluations", requireAdmin, h.listEvaluations)                            // evaluators.go
	dash.POST("/evaluators/:id/backfill", requireAdmin, h.backfillEvaluator)                            // evaluators.go
	dash.POST("/exports", requireAdmin, h.createExport)                                                 // exports.go

	// ---- SDK: org API key in X-API-Key (requireSDKKey, keys.go), rate limited per org (ratelimit.go) ----
	anyKey := h.requireSDKKey(auth.Publishable, auth.Secret)
	v1.GET("/config", anyKey, h.getConfig)                                                              // config.go
	v1.POST("/assign", anyKey, limitBody(assignBodyLimit), h.rateLimit("assign"), h.assign)             // assign.go
	v1.POST("/events", anyKey, h.rateLimit("events"), limitBody(eventsBodyLimit), h.postEvents)         // events.go
	v1.POST("/events/import", h.requireSDKKey(auth.Secret), limitBody(importBodyLimit), h.importEvents) // import.go
	v1.POST("/scores", anyKey, h.rateLimit("scores"), limitBody(scoresBodyLimit), h.postScores)         // scores.go
	// OTLP/HTTP trace export; refusals are google.rpc.Status, not problem+json (otlpAnswers).
	v1.POST("/traces", otlpAnswers, anyKey, h.rateLimit("events"), limitBody(tracesBodyLimit), h.postTraces) // traces.go

	// ---- Privacy: an org admin's session or the org's secret key (adminOrSecretKey, erasures.go) ----
	privacy := v1.Group("", limitBody(defaultBodyLimit), h.adminOrSecretKey())
	privacy.POST("/erasures", h.createErasure) // erasures.go
	privacy.GET("/erasures/:id", h.getErasure) // erasures.go

	// ---- Signed deliveries: the body's signature is the credential ----
	// Each counted by outcome (webhook_metrics.go).
	v1.POST("/business-events", countDelivery("business"), limitBody(businessEventBodyLimit), h.postBusinessEvent)    // business_events.go
	v1.POST("/webhooks/identity-provider", countDelivery("identity"), limitBody(defaultBodyLimit), h.identityWebhook) // identity_webhook.go
	v1.POST("/webhooks/payment-provider", countDelivery("payment"), limitBody(defaultBodyLimit), h.paymentWebhook)    // payment_webhook.go

	// ---- Dashboard pages: HTML at /, /experiments, /keys, /billing, /assets;
	// identity session as the __session cookie or Bearer (dashboard.Routes,
	// dashboard/dashboard.go, lists each page and its handler) ----
	pages, err := dashboard.New(dashboard.Deps{DB: deps.DB, Aggregator: deps.Aggregator, Events: deps.Events, Verifier: deps.Verifier, Billing: deps.Billing, Logger: deps.Logger, UseCases: h.cases,
		DevToken: deps.DevToken, TemporalUI: deps.TemporalUI, Namespace: deps.Namespace})
	if err != nil {
		panic(err) // embedded templates that do not parse: a build defect
	}
	pages.Routes(r)

	return r
}
