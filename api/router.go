// Package api is expd's HTTP interface: NewRouter wires every /v1 route of
// the spec to a handler method. Each resource has its own file
// (experiments.go, ...); auth, limits and problem responses each have theirs.
package api

import (
	"log/slog"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/ratelimit"
	"github.com/expd/expd/sdkcache"
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
	Billing    *billing.Client    // the Stripe adapter (billing.go); nil or unconfigured: billing_configured false
	SvixSecret string             // CLERK_WEBHOOK_SECRET (whsec_...) of the identity webhook; empty: every delivery gets 401
}

type handlers struct {
	deps        Deps
	experiments experiments.Store
}

// NewRouter builds the gin engine with every route.
func NewRouter(deps Deps) *gin.Engine {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	// Per-instance state the caller did not share gets a fresh default.
	if deps.SDK == nil {
		deps.SDK = sdkcache.New(deps.DB, sdkcache.Options{})
	}
	if deps.RateLimits == nil {
		deps.RateLimits = ratelimit.New(nil, nil)
	}
	if deps.Ingest == nil {
		deps.Ingest = ingest.NewWriter(deps.DB, ingest.Options{})
	}
	h := &handlers{deps: deps, experiments: experiments.Store{DB: deps.DB}}

	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	r.Use(withRequestID(deps.Logger), gin.CustomRecovery(recovery))
	r.NoRoute(notFoundRoute)
	r.NoMethod(methodNotAllowed)

	r.GET("/healthz", h.healthz)
	r.GET("/readyz", h.readyz)

	// Body limits are set per group: ingest routes take larger bodies.
	v1 := r.Group("/v1")
	dash := v1.Group("", limitBody(defaultBodyLimit), h.requireSession)
	dash.GET("/experiments", h.listExperiments)
	dash.POST("/experiments", h.createExperiment)
	dash.GET("/experiments/:id", h.getExperiment)
	dash.PUT("/experiments/:id", h.updateExperiment)
	dash.GET("/experiments/:id/versions/:version", h.getExperimentVersion)
	dash.GET("/experiments/:id/events", h.listEvents)

	h.sdkRoutes(v1)           // /v1/config, /v1/assign (config.go, assign.go)
	h.keyRoutes(dash)         // /v1/keys (keys.go)
	h.ingestRoutes(v1, dash)  // /v1/events, import, business events, traffic (events.go, ...)
	h.identityRoutes(v1)      // /v1/webhooks/identity-provider (identity_webhook.go)
	h.billingRoutes(v1, dash) // /v1/billing/*, /v1/plans, payment webhook (billing.go, ...)
	h.resultsRoutes(dash)     // results, runs, metrics (results.go, runs.go, ...)

	return r
}
