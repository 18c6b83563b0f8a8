package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/expd/expd/api"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/ratelimit"
	"github.com/expd/expd/sdkcache"
)

// targets are the two servers under load: expd's real router and a bare
// gin engine with one constant-JSON route.
type targets struct {
	expdURL, bareURL string
	key              string
	experimentID     string
	users            int
	etag             string
}

func startTargets(databaseURL string, users int) (*targets, func(), error) {
	gin.SetMode(gin.ReleaseMode)
	db, cleanupDB, err := openDB(databaseURL)
	if err != nil {
		return nil, nil, err
	}
	t := &targets{users: users}
	router, err := t.expdRouter(db)
	if err != nil {
		cleanupDB()
		return nil, nil, err
	}
	bare := gin.New()
	bare.POST("/bare", func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"variant": "control", "config_version": 1, "experiment_id": t.experimentID, "bucket": 42})
	})
	var closers []func()
	for _, s := range []struct {
		h   http.Handler
		url *string
	}{{router, &t.expdURL}, {bare, &t.bareURL}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			cleanupDB()
			return nil, nil, fmt.Errorf("listen: %w", err)
		}
		srv := &http.Server{Handler: s.h}
		go func() { _ = srv.Serve(ln) }()
		closers = append(closers, func() { _ = srv.Close() })
		*s.url = "http://" + ln.Addr().String()
	}
	return t, func() {
		for _, c := range closers {
			c()
		}
		cleanupDB()
	}, nil
}

// openDB opens a SQLite file in a temporary directory, or, with a
// PostgreSQL URL, a fresh schema of that database; cleanup removes either.
func openDB(databaseURL string) (*gorm.DB, func(), error) {
	if databaseURL == "" {
		dir, err := os.MkdirTemp("", "expd-bench-")
		if err != nil {
			return nil, nil, err
		}
		db, err := database.Open("", dir)
		return migrated(db, err, func() { _ = os.RemoveAll(dir) })
	}
	dsn, drop, err := database.NewSchema(databaseURL, "bench_assign_")
	if err != nil {
		return nil, nil, err
	}
	db, err := database.Open(dsn, "")
	return migrated(db, err, func() { _ = drop() })
}

func migrated(db *gorm.DB, err error, cleanup func()) (*gorm.DB, func(), error) {
	if err == nil {
		_, err = database.Migrate(db)
	}
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("open and migrate: %w", err)
	}
	return db, cleanup, nil
}

// expdRouter makes an org with a secret key and a 50/50 experiment and
// returns the real router, with request logs below the enabled level (as
// a production logger at warn would) and rate limits off.
func (t *targets) expdRouter(db *gorm.DB) (http.Handler, error) {
	ctx := context.Background()
	org, err := orgs.Ensure(ctx, db, "org_bench_"+fmt.Sprint(os.Getpid()), "bench")
	if err != nil {
		return nil, err
	}
	key, err := keys.Issue(ctx, db, org.ID, auth.Secret, "bench")
	if err != nil {
		return nil, err
	}
	exp, err := experiments.Store{DB: db}.Create(ctx, org.ID, "bench", experiments.Config{
		Name: fmt.Sprintf("bench-%d", os.Getpid()), Salt: "k3J9x2pQ", BucketCount: 10000,
		Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "concise", Weight: 50}},
		Metrics:    []experiments.Metric{},
	})
	if err != nil {
		return nil, err
	}
	off, err := ratelimit.ParseOverrides("*=off")
	if err != nil {
		return nil, err
	}
	signer, err := auth.NewSigner()
	if err != nil {
		return nil, err
	}
	t.key, t.experimentID, t.etag = key, exp.ID, sdkcache.ETag(exp.ConfigVersion)
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return api.NewRouter(api.Deps{DB: db, Verifier: signer.Verifier(), Logger: quiet,
		SDK: sdkcache.New(db, sdkcache.Options{}), RateLimits: ratelimit.New(off, nil)}), nil
}

func (t *targets) bare() scenario {
	return scenario{name: "bare-gin", want: http.StatusOK, build: func(int64) *http.Request {
		req, _ := http.NewRequest("POST", t.bareURL+"/bare", bytes.NewReader(t.assignBody(0)))
		req.Header.Set("Content-Type", "application/json")
		return req
	}}
}

func (t *targets) config304() scenario {
	return scenario{name: "config-304", want: http.StatusNotModified, build: func(int64) *http.Request {
		req, _ := http.NewRequest("GET", t.expdURL+"/v1/config", nil)
		req.Header.Set("X-API-Key", t.key)
		req.Header.Set("If-None-Match", t.etag)
		return req
	}}
}

func (t *targets) assign() scenario {
	return scenario{name: "assign", want: http.StatusOK, build: t.assignRequest}
}

// assignEachUserOnce pins every user of the load, so that the measured
// assign load is the steady state of returning users.
func (t *targets) assignEachUserOnce() scenario {
	s := t.assign()
	s.count = int64(t.users)
	return s
}

func (t *targets) assignRequest(i int64) *http.Request {
	req, _ := http.NewRequest("POST", t.expdURL+"/v1/assign", bytes.NewReader(t.assignBody(i)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", t.key)
	return req
}

func (t *targets) assignBody(i int64) []byte {
	return fmt.Appendf(nil, `{"experiment_id":%q,"user_id":"user-%d"}`, t.experimentID, i%int64(t.users))
}
