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
	sdkworker "go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/models"
	"github.com/expd/expd/worker"
)

// openMigratedDB opens the database and checks that its schema is current
// (migrate first when autoMigrate).
func openMigratedDB(cfg Config, dataDir string, autoMigrate bool) (*gorm.DB, error) {
	db, err := models.Open(cfg.DatabaseURL, dataDir)
	if err != nil {
		return nil, err
	}
	if autoMigrate {
		applied, err := models.Migrate(db)
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		if len(applied) > 0 {
			slog.Info("applied migrations", "versions", applied)
		}
	}
	if err := models.CheckMigrated(db); err != nil {
		return nil, err
	}
	return db, nil
}

// identityVerifier builds the session-JWT verifier from CLERK_JWT_KEY or
// CLERK_JWKS_URL.
func identityVerifier(cfg Config) (*auth.Verifier, error) {
	switch {
	case cfg.ClerkJWTKey != "":
		return auth.NewPEMVerifier([]byte(cfg.ClerkJWTKey))
	case cfg.ClerkJWKSURL != "":
		return auth.NewJWKSVerifier(cfg.ClerkJWKSURL, &http.Client{Timeout: 5 * time.Second}), nil
	}
	return nil, errors.New("set CLERK_JWT_KEY (PEM) or CLERK_JWKS_URL to verify identity-provider session tokens")
}

func dialTemporal(ctx context.Context, address, namespace string) (client.Client, error) {
	c, err := client.DialContext(ctx, client.Options{
		HostPort:  address,
		Namespace: namespace,
		Logger:    slog.Default().With("component", "temporal-client"),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", address, err)
	}
	return c, nil
}

func newActivities(db *gorm.DB) *activities.Activities {
	return &activities.Activities{DB: db}
}

// startWorker runs expd's workflows and activities until ctx ends.
func startWorker(c client.Client, taskQueue string, acts *activities.Activities) (sdkworker.Worker, error) {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{})
	worker.Register(w, acts)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return w, nil
}

// serveHTTP serves h on ln until ctx ends, then drains for up to 10 s.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
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

func apiDeps(db *gorm.DB, v *auth.Verifier, c client.Client, taskQueue string) api.Deps {
	return api.Deps{DB: db, Verifier: v, Temporal: c, TaskQueue: taskQueue, Logger: slog.Default()}
}
