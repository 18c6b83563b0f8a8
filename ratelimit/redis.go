package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/expd/expd/telemetry"
)

// DefaultRedisPrefix starts every key expd writes to Redis, so the
// limiter can share a Redis with other tenants of it.
const DefaultRedisPrefix = "expd:ratelimit:"

// redisTimeout bounds one limiter call: the limiter sits in front of every
// SDK request, so a slow Redis must not become a slow API.
const redisTimeout = 250 * time.Millisecond

// warnEvery spaces the fail-open warnings of one limiter.
const warnEvery = 10 * time.Second

// OpenRedis returns a limiter whose buckets live in the Redis at url (a
// redis:// or rediss:// URL), shared by every API instance that uses the
// same Redis and prefix. It does not need Redis to be up: see redisStore.
func OpenRedis(url, prefix string, overrides Overrides, log *slog.Logger) (*Limiter, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = redisTimeout, redisTimeout, redisTimeout
	// A retry would only add latency to a request that fails open anyway.
	opts.MaxRetries, opts.DialerRetries = -1, 1
	if log == nil {
		log = slog.Default()
	}
	client := redis.NewClient(opts)
	return newLimiter(overrides, &redisStore{
		client: client, limiter: redis_rate.NewLimiter(client), prefix: prefix, log: log,
	}), nil
}

// redisStore keeps the buckets in Redis with redis_rate's GCRA (one Lua
// script per request, clocked by the Redis server's TIME, so the API
// instances' clocks do not matter). When Redis cannot answer it fails
// open: the request is allowed, telemetry.RateLimitErrors counts it and
// a warning is logged at most every warnEvery (docs/operations.md argues
// why open rather than 503).
type redisStore struct {
	client   *redis.Client
	limiter  *redis_rate.Limiter
	prefix   string
	log      *slog.Logger
	lastWarn atomic.Int64 // unix nanoseconds of the last warning
}

func (s *redisStore) take(key string, r Rate) (bool, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	// GCRA's emission interval is Period/Rate: one token every 1/PerSecond s.
	limit := redis_rate.Limit{Rate: 1, Burst: r.Burst, Period: time.Duration(float64(time.Second) / r.PerSecond)}
	res, err := s.limiter.Allow(ctx, s.prefix+key, limit)
	if err != nil {
		telemetry.RateLimitErrors.WithLabelValues().Inc()
		now := time.Now().UnixNano()
		if last := s.lastWarn.Load(); now-last >= int64(warnEvery) && s.lastWarn.CompareAndSwap(last, now) {
			s.log.Warn("rate limiter: Redis unreachable, allowing requests unlimited", "err", err)
		}
		return true, 0
	}
	if res.Allowed > 0 {
		return true, 0
	}
	return false, res.RetryAfter
}

func (s *redisStore) close() error { return s.client.Close() }
