package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	sdkworker "go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/database"
	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/ratelimit"
	"github.com/expd/expd/sdkcache"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/telemetry"
	"github.com/expd/expd/verdict"
	"github.com/expd/expd/webhooks"
	"github.com/expd/expd/worker"
)

// openMigratedDB opens the database and checks that its schema is current
// (migrate first when autoMigrate).
func openMigratedDB(cfg Config, dataDir string, autoMigrate bool) (*gorm.DB, error) {
	db, err := database.Open(cfg.DatabaseURL, dataDir)
	if err != nil {
		return nil, err
	}
	if autoMigrate {
		m, err := migrate(context.Background(), db, cfg.Secrets)
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		if len(m.Applied) > 0 || m.Verdicts > 0 || m.Secrets != (secrets.Tally{}) {
			slog.Info("applied migrations", "versions", m.Applied, "verdicts_backfilled", m.Verdicts,
				"secrets_sealed", m.Secrets.Sealed, "secrets_resealed", m.Secrets.Resealed)
		}
	}
	if err := database.CheckMigrated(db); err != nil {
		return nil, err
	}
	return db, nil
}

// migrated is what migrate did.
type migrated struct {
	Applied  []int         // schema migrations applied
	Verdicts int           // verdicts stored for runs published before verdicts
	Secrets  secrets.Tally // stored secrets sealed, or sealed again under the current key
}

// migrate applies the pending schema migrations, then stores the verdict
// of every published run that has none (runs published before verdicts
// existed), so every read of a verdict is a stored read, then seals the
// stored secrets (sealColumns) under keys. Every step is idempotent;
// `expd migrate` and expd dev's start run them.
func migrate(ctx context.Context, db *gorm.DB, keys *secrets.Keyring) (m migrated, err error) {
	if m.Applied, err = database.Migrate(db); err != nil {
		return m, err
	}
	if m.Verdicts, err = verdict.Backfill(ctx, db); err != nil {
		return m, fmt.Errorf("verdict backfill: %w", err)
	}
	if m.Secrets, err = sealSecrets(ctx, db, keys); err != nil {
		return m, err
	}
	return m, nil
}

// sealColumns are the columns of secrets expd must keep usable, each
// declared by its table's owner package.
var sealColumns = []secrets.Column{ingest.SigningSecrets, webhooks.Secrets, evaluators.JudgeKeys, privacy.HashKeys}

// sealSecrets seals the secrets stored in clear (signing secrets from
// before sealing) and seals again under EXPD_SECRETS_KEY those under
// EXPD_SECRETS_KEY_PREVIOUS, so a rotation ends with one `expd migrate`
// (docs/operations.md, "Secrets at rest"). Secrets left in clear for want
// of a key fail the step: the operator must set one. Values no held key
// opens are reported and left as is.
func sealSecrets(ctx context.Context, db *gorm.DB, keys *secrets.Keyring) (secrets.Tally, error) {
	var total secrets.Tally
	for _, c := range sealColumns {
		t, err := keys.ResealColumn(ctx, db, c)
		if err != nil {
			return total, fmt.Errorf("seal %s.%s: %w", c.Table, c.Secret, err)
		}
		if t.Lost > 0 {
			slog.WarnContext(ctx, "stored secrets open under no configured key (EXPD_SECRETS_KEY, EXPD_SECRETS_KEY_PREVIOUS); they stay unusable until re-issued",
				"table", c.Table, "column", c.Secret, "lost", t.Lost)
		}
		total = total.Plus(t)
	}
	if total.Clear > 0 {
		return total, fmt.Errorf("%d signing secret(s) are stored in clear: set EXPD_SECRETS_KEY (openssl rand -base64 32) and run `expd migrate` again to seal them: %w",
			total.Clear, secrets.ErrNoKey)
	}
	return total, nil
}

// openEvents connects to the ClickHouse of CLICKHOUSE_URL (nil, nil when
// unset: the events stay in the database) and checks its schema (migrate
// first when autoMigrate).
func openEvents(ctx context.Context, cfg Config, autoMigrate bool) (*clickhouse.Store, error) {
	if cfg.ClickHouseURL == "" {
		if cfg.ClickHouseCluster != "" {
			return nil, errors.New("CLICKHOUSE_CLUSTER is set without CLICKHOUSE_URL")
		}
		return nil, nil
	}
	s, err := clickhouse.Open(ctx, cfg.ClickHouseURL, cfg.ClickHouseCluster)
	if err != nil {
		return nil, err
	}
	if autoMigrate {
		if err := s.Migrate(ctx); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.CheckSchema(ctx); err != nil {
		s.Close()
		return nil, err
	}
	slog.Info("events on clickhouse", "cluster", cfg.ClickHouseCluster, "shards", s.Shards())
	return s, nil
}

// openSpool opens the ingest spool of INGEST_SPOOL_DIR in front of ch
// (nil when unset) and returns it with its close, which ships what it
// can for 30 s.
func openSpool(cfg Config, db *gorm.DB, ch *clickhouse.Store) (*ingest.SpooledEngine, func(), error) {
	if err := cfg.checkSpool(); err != nil || cfg.SpoolDir == "" {
		return nil, func() {}, err
	}
	sp, err := ingest.OpenSpool(cfg.SpoolDir, ch, ingest.SpoolOptions{MaxBytes: cfg.SpoolMaxBytes, ShipLinger: cfg.SpoolLinger, Erased: ingest.NewErasedFilter(db, cfg.Secrets)})
	if err != nil {
		return nil, nil, err
	}
	slog.Info("ingest spool", "dir", cfg.SpoolDir)
	return sp, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := sp.Close(ctx); err != nil {
			slog.Error("close the ingest spool", "error", err)
		}
	}, nil
}

// useEvents points the API's and the worker's event reads and writes at
// ch (nil: the database, as the zero Deps do); the API's writes go
// through spool when set. ring names erased users, whose events the
// writer drops, as the database's writer does.
func useEvents(deps *api.Deps, acts *activities.Activities, db *gorm.DB, ch *clickhouse.Store, spool *ingest.SpooledEngine, ring *secrets.Keyring) {
	if ch == nil {
		return
	}
	opts := ingest.Options{Secrets: ring}
	if deps != nil {
		var writes ingest.Engine = ch
		if spool != nil {
			writes = spool
		}
		deps.Ingest, deps.Events, deps.Aggregator = ingest.NewEngineWriter(db, writes, opts), ch, ch
	}
	if acts != nil {
		acts.Ingest, acts.Events, acts.Aggregator = ingest.NewEngineWriter(db, ch, opts), ch, ch
	}
}

// identityVerifier builds the session-JWT verifier from CLERK_JWT_KEY or
// CLERK_JWKS_URL (refreshed in the background for the life of ctx), with
// the iss check of CLERK_ISSUER (required outside dev), the aud check of
// CLERK_AUDIENCE when set and the azp check of EXPD_DASHBOARD_ORIGINS
// when set.
func identityVerifier(ctx context.Context, cfg Config, dev bool) (*auth.Verifier, error) {
	if cfg.ClerkIssuer == "" && !dev {
		return nil, errors.New("CLERK_ISSUER is required: set it to the identity provider's issuer (Clerk's Frontend API URL, e.g. https://clerk.example.com); session tokens of any other issuer are refused")
	}
	var v *auth.Verifier
	var err error
	switch {
	case cfg.ClerkJWTKey != "":
		v, err = auth.NewPEMVerifier([]byte(cfg.ClerkJWTKey))
	case cfg.ClerkJWKSURL != "":
		v, err = auth.NewJWKSVerifier(ctx, cfg.ClerkJWKSURL, &http.Client{Timeout: 5 * time.Second})
	default:
		return nil, errors.New("set CLERK_JWT_KEY (PEM) or CLERK_JWKS_URL to verify identity-provider session tokens")
	}
	if err != nil {
		return nil, err
	}
	return v.WithChecks(auth.Checks{Issuer: cfg.ClerkIssuer, Audience: cfg.ClerkAudience, AuthorizedParties: cfg.Billing.ReturnOrigins}), nil
}

// dialTemporal connects to Temporal with the SDK's environment
// configuration (TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and
// TEMPORAL_CONFIG_FILE: Temporal Cloud or a TLS cluster) at address and
// namespace, recording the SDK's metrics on the metrics listener and
// carrying traces into workflows.
func dialTemporal(ctx context.Context, address, namespace string) (client.Client, error) {
	opts, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return nil, fmt.Errorf("temporal client configuration: %w", err)
	}
	opts.HostPort, opts.Namespace = address, namespace
	opts.Logger = slog.Default().With("component", "temporal-client")
	if opts.MetricsHandler, err = telemetry.TemporalMetrics(); err != nil {
		return nil, err
	}
	tracing, err := telemetry.TemporalTracing()
	if err != nil {
		return nil, err
	}
	opts.Interceptors = append(opts.Interceptors, tracing)
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", address, err)
	}
	return c, nil
}

// serveMetrics starts the metrics listener when addr is set, with the
// database pool's statistics and a readiness probe of the database and
// Temporal. It returns the bound address ("" when off).
func serveMetrics(ctx context.Context, addr string, db *gorm.DB, tc client.Client) (string, error) {
	if addr == "" {
		return "", nil
	}
	sqlDB, err := db.DB()
	if err != nil {
		return "", err
	}
	telemetry.RegisterDBStats(sqlDB, "expd")
	bound, err := telemetry.Listen(ctx, addr, func(ctx context.Context) error {
		if err := sqlDB.PingContext(ctx); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		if _, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			return fmt.Errorf("temporal: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("metrics listener on %s: %w", addr, err)
	}
	slog.Info("metrics listening", "addr", bound)
	return bound, nil
}

// newActivities builds the worker's dependencies. dev (`expd dev`) lets
// outbound webhooks reach loopback and private addresses, as the API lets
// such endpoints register there.
func newActivities(db *gorm.DB, ch *clickhouse.Store, cfg Config, dev bool) *activities.Activities {
	a := &activities.Activities{DB: db, Billing: billing.New(cfg.Billing), Webhooks: &webhooks.Sender{AllowPrivate: dev},
		Secrets: cfg.Secrets, Judge: &evaluators.Judge{AllowPrivate: dev}}
	useEvents(nil, a, db, ch, nil, cfg.Secrets)
	return a
}

// temporalWithWorker connects to Temporal and runs expd's worker on it
// (dev: see newActivities). The returned stop ends both.
func temporalWithWorker(ctx context.Context, cfg Config, address string, db *gorm.DB, ch *clickhouse.Store, dev bool) (client.Client, func(), error) {
	tc, err := dialTemporal(ctx, address, cfg.TemporalNamespace)
	if err != nil {
		return nil, nil, err
	}
	w, err := worker.Run(ctx, tc, cfg.TemporalNamespace, cfg.TaskQueue, newActivities(db, ch, cfg, dev), sdkworker.Options{})
	if err != nil {
		tc.Close()
		return nil, nil, err
	}
	return tc, func() { w.Stop(); tc.Close() }, nil
}

// serveHTTP serves h on ln until ctx ends, then drains for up to 10 s.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: api.ServerMaxHeaderBytes}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// apiDeps builds the router's dependencies (events through spool when
// set) and starts the per-instance
// SDK cache's key-rotation listener (PostgreSQL) for the life of ctx.
func apiDeps(ctx context.Context, cfg Config, db *gorm.DB, ch *clickhouse.Store, spool *ingest.SpooledEngine, v *auth.Verifier, c client.Client) (api.Deps, error) {
	overrides, err := ratelimit.ParseOverrides(cfg.RateLimits)
	if err != nil {
		return api.Deps{}, err
	}
	limits, err := rateLimiter(ctx, cfg, overrides)
	if err != nil {
		return api.Deps{}, err
	}
	cache := sdkcache.New(db, sdkcache.Options{MaxAge: cfg.SDKCacheMaxAge, Secrets: cfg.Secrets})
	go cache.Listen(ctx)
	deps := api.Deps{
		DB: db, Verifier: v, Temporal: c, TaskQueue: cfg.TaskQueue, Logger: slog.Default(),
		SDK:              cache,
		RateLimits:       limits,
		Ingest:           ingest.NewWriter(db, ingest.Options{Secrets: cfg.Secrets}),
		Billing:          billing.New(cfg.Billing),
		SvixSecret:       cfg.ClerkWebhookKey,
		TemporalUI:       cfg.TemporalUIURL,
		Namespace:        cfg.TemporalNamespace,
		Logging:          cfg.Logging,
		DashboardOrigins: cfg.Billing.ReturnOrigins,
		Secrets:          cfg.Secrets,
	}
	useEvents(&deps, nil, db, ch, spool, cfg.Secrets)
	return deps, nil
}

// rateLimiter is the in-memory limiter, or with REDIS_URL the Redis one
// (closed when ctx ends), whose limit holds across API instances.
func rateLimiter(ctx context.Context, cfg Config, overrides ratelimit.Overrides) (*ratelimit.Limiter, error) {
	if cfg.RedisURL == "" {
		return ratelimit.New(overrides, nil), nil
	}
	l, err := ratelimit.OpenRedis(cfg.RedisURL, ratelimit.DefaultRedisPrefix, overrides, slog.Default())
	if err != nil {
		return nil, err
	}
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	return l, nil
}
