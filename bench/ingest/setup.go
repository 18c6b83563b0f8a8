package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/expd/expd/api"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/ratelimit"
)

// benchEnv is a database with two orgs on the enterprise plan (no
// allowance, the per-org rate limit off in-process): one receives the
// API's events, the other the raw COPY of the same rows.
type benchEnv struct {
	db           *gorm.DB
	dsn          string
	baseURL      string
	publishable  string
	secret       string
	apiOrg       string
	copyOrg      string
	experimentID string
	copyExpID    string // the copy org's experiment: its pins must not collide with the API's
	tearDown     func()
}

func setUp(ctx context.Context, cfg config) (*benchEnv, error) {
	env := &benchEnv{dsn: cfg.databaseURL, baseURL: cfg.target, tearDown: func() {}}
	if cfg.target == "" {
		if err := env.freshSchema(); err != nil {
			return nil, err
		}
	}
	db, err := database.Open(env.dsn, "")
	if err != nil {
		return nil, err
	}
	env.db = db
	if cfg.target == "" {
		if _, err := database.Migrate(db); err != nil {
			return nil, err
		}
	}
	if env.apiOrg, env.experimentID, err = newOrg(ctx, db); err != nil {
		return nil, err
	}
	if env.copyOrg, env.copyExpID, err = newOrg(ctx, db); err != nil {
		return nil, err
	}
	if env.publishable, err = keys.Issue(ctx, db, env.apiOrg, auth.Publishable, "bench"); err != nil {
		return nil, err
	}
	if env.secret, err = keys.Issue(ctx, db, env.apiOrg, auth.Secret, "bench"); err != nil {
		return nil, err
	}
	if cfg.target == "" {
		env.baseURL, err = env.serve(ingest.NewWriter(env.db, ingest.Options{Concurrency: cfg.groups}))
		return env, err
	}
	return env, nil
}

// freshSchema points dsn at a new schema, dropped by tearDown.
func (e *benchEnv) freshSchema() error {
	dsn, drop, err := database.NewSchema(e.dsn, "bench_")
	if err != nil {
		return err
	}
	e.dsn, e.tearDown = dsn, func() { _ = drop() }
	return nil
}

// serve runs the real router with writer on a loopback port, as `expd
// api` does, and returns its base URL.
func (e *benchEnv) serve(writer *ingest.Writer) (string, error) {
	gin.SetMode(gin.ReleaseMode)
	signer, err := auth.NewSigner()
	if err != nil {
		return "", err
	}
	off, err := ratelimit.ParseOverrides("*=off")
	if err != nil {
		return "", err
	}
	router := api.NewRouter(api.Deps{DB: e.db, Verifier: signer.Verifier(), RateLimits: ratelimit.New(off, nil),
		Ingest: writer, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() { _ = http.Serve(ln, router) }()
	return "http://" + ln.Addr().String(), nil
}

func newOrg(ctx context.Context, db *gorm.DB) (orgID, experimentID string, err error) {
	clerk := "org_bench_" + uuid.NewString()[:8]
	org, err := orgs.Ensure(ctx, db, clerk, clerk)
	if err != nil {
		return "", "", err
	}
	if err := orgs.SetPlan(ctx, db, org.ID, plans.Enterprise); err != nil {
		return "", "", err
	}
	exp, err := experiments.Store{DB: db}.Create(ctx, org.ID, "bench", experiments.Config{
		Name: "bench-exp", Salt: "benchSALT", BucketCount: 10000,
		Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}},
		Metrics:    []experiments.Metric{},
	})
	if err != nil {
		return "", "", fmt.Errorf("create experiment: %w", err)
	}
	return org.ID, exp.ID, nil
}
