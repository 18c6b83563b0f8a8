package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/ratelimit"
	"github.com/expd/expd/secrets"
)

// Config is the environment of docs/architecture.md §3.
type Config struct {
	DatabaseURL       string
	TemporalAddress   string
	TemporalNamespace string
	TemporalUIURL     string // TEMPORAL_UI_URL: where the dashboard links workflows
	TaskQueue         string
	ClerkJWTKey       string
	ClerkJWKSURL      string
	ClerkIssuer       string // CLERK_ISSUER: required iss of session tokens (required outside dev)
	ClerkAudience     string // CLERK_AUDIENCE: when set, session tokens' aud must contain it
	ClerkWebhookKey   string
	LogLevel          string
	Billing           billing.Config
	RateLimits        string        // EXPD_RATE_LIMITS
	RedisURL          string        // REDIS_URL: per-org rate limits in this Redis, shared by every API instance; empty: in memory
	SDKCacheMaxAge    time.Duration // EXPD_SDK_CACHE_MAX_AGE
	MetricsAddr       string        // EXPD_METRICS_ADDR; --metrics-addr overrides
	Logging           api.RequestLogging
	// Secrets seals judges' api keys and signing secrets
	// (EXPD_SECRETS_KEY, _PREVIOUS); empty when unset (expd dev then
	// keeps one in its data dir).
	Secrets *secrets.Keyring
	// ClickHouseURL (CLICKHOUSE_URL, a clickhouse-go DSN) puts the events
	// on ClickHouse; ClickHouseCluster (CLICKHOUSE_CLUSTER) names the
	// cluster its Distributed tables shard over, "" for one node.
	ClickHouseURL, ClickHouseCluster string
	// SpoolDir (INGEST_SPOOL_DIR; --ingest-spool-dir of api and dev)
	// acknowledges POST /v1/events once in a local log there and ships
	// the events to ClickHouse in large inserts (ingest.SpooledEngine);
	// SpoolMaxBytes (INGEST_SPOOL_MAX_BYTES) bounds its unshipped bytes;
	// SpoolLinger (INGEST_SPOOL_LINGER; --ingest-spool-linger) is how
	// long the oldest entry waits for more before a small shipment goes.
	SpoolDir      string
	SpoolMaxBytes int64
	SpoolLinger   time.Duration
}

func configFromEnv() Config {
	return Config{
		DatabaseURL:       os.Getenv("DATABASE_URL"),
		ClickHouseURL:     os.Getenv("CLICKHOUSE_URL"),
		ClickHouseCluster: os.Getenv("CLICKHOUSE_CLUSTER"),
		SpoolDir:          os.Getenv("INGEST_SPOOL_DIR"),
		TemporalAddress:   os.Getenv("TEMPORAL_ADDRESS"),
		TemporalNamespace: envOr("TEMPORAL_NAMESPACE", "default"),
		TemporalUIURL:     strings.TrimSuffix(os.Getenv("TEMPORAL_UI_URL"), "/"),
		TaskQueue:         envOr("EXPD_TASK_QUEUE", "expd"),
		// Keys pasted into env files often carry literal "\n".
		ClerkJWTKey:     strings.ReplaceAll(os.Getenv("CLERK_JWT_KEY"), `\n`, "\n"),
		ClerkJWKSURL:    os.Getenv("CLERK_JWKS_URL"),
		ClerkIssuer:     os.Getenv("CLERK_ISSUER"),
		ClerkAudience:   os.Getenv("CLERK_AUDIENCE"),
		ClerkWebhookKey: os.Getenv("CLERK_WEBHOOK_SECRET"),
		LogLevel:        envOr("EXPD_LOG_LEVEL", "info"),
		Billing:         billing.ConfigFromEnv(os.Getenv),
		RateLimits:      os.Getenv("EXPD_RATE_LIMITS"),
		RedisURL:        os.Getenv("REDIS_URL"),
		MetricsAddr:     os.Getenv("EXPD_METRICS_ADDR"),
	}
}

// validate parses the settings that can be malformed, so a bad value
// stops the process at start instead of surfacing on first use.
func (c *Config) validate() error {
	if v := os.Getenv("EXPD_SDK_CACHE_MAX_AGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("EXPD_SDK_CACHE_MAX_AGE: want a positive duration such as 1s, got %q", v)
		}
		c.SDKCacheMaxAge = d
	}
	if v := os.Getenv("EXPD_LOG_SLOW_REQUEST"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("EXPD_LOG_SLOW_REQUEST: want a positive duration such as 500ms, got %q", v)
		}
		c.Logging.Slow = d
	}
	if v := os.Getenv("EXPD_LOG_SAMPLE_HOT"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("EXPD_LOG_SAMPLE_HOT: want N to log one in N hot-route requests (0: none), got %q", v)
		}
		c.Logging.SampleHot = n
	}
	if v := os.Getenv("INGEST_SPOOL_MAX_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("INGEST_SPOOL_MAX_BYTES: want a positive number of bytes such as 1073741824, got %q", v)
		}
		c.SpoolMaxBytes = n
	}
	c.SpoolLinger = ingest.DefaultSpoolLinger
	if v := os.Getenv("INGEST_SPOOL_LINGER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("INGEST_SPOOL_LINGER: want a positive duration such as 2s, got %q", v)
		}
		c.SpoolLinger = d
	}
	if err := c.checkSpool(); err != nil {
		return err
	}
	ring, err := secrets.Parse(os.Getenv("EXPD_SECRETS_KEY"), os.Getenv("EXPD_SECRETS_KEY_PREVIOUS"))
	if err != nil {
		return err
	}
	c.Secrets = ring
	if _, err := ratelimit.ParseOverrides(c.RateLimits); err != nil {
		return fmt.Errorf("EXPD_RATE_LIMITS: %w", err)
	}
	return nil
}

// checkSpool refuses a spool without ClickHouse, the store it ships to,
// and a linger that is not positive (--ingest-spool-linger's, checked
// when the spool opens).
func (c *Config) checkSpool() error {
	if c.SpoolDir != "" && c.ClickHouseURL == "" {
		return errors.New("INGEST_SPOOL_DIR is set without CLICKHOUSE_URL: the ingest spool ships events to ClickHouse; unset it to store events in the database")
	}
	if c.SpoolDir != "" && c.SpoolLinger <= 0 {
		return fmt.Errorf("INGEST_SPOOL_LINGER (--ingest-spool-linger): want a positive duration such as 2s, got %s", c.SpoolLinger)
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
