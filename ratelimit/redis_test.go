package ratelimit_test

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/ratelimit"
	"github.com/expd/expd/telemetry"
)

func openRedis(t *testing.T, url, prefix string, o ratelimit.Overrides) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.OpenRedis(url, prefix, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func overrides(t *testing.T, spec string) ratelimit.Overrides {
	t.Helper()
	o, err := ratelimit.ParseOverrides(spec)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func allowN(l *ratelimit.Limiter, key string, p plans.Name, n int) int {
	ok := 0
	for i := 0; i < n; i++ {
		if allowed, _ := l.Allow(key, p); allowed {
			ok++
		}
	}
	return ok
}

func TestRedisBurstThenRefill(t *testing.T) {
	url, prefix := testenv.Redis(t)
	l := openRedis(t, url, prefix, overrides(t, "free=4:5"))
	if got := allowN(l, "org-a", plans.Free, 12); got != 5 {
		t.Fatalf("allowed %d in a burst, want the burst 5", got)
	}
	ok, wait := l.Allow("org-a", plans.Free)
	if ok || wait <= 0 || wait > 250*time.Millisecond {
		t.Fatalf("empty bucket: ok %v, retry after %s; want a wait of at most one token (250ms)", ok, wait)
	}
	time.Sleep(wait + 10*time.Millisecond)
	if ok, _ := l.Allow("org-a", plans.Free); !ok {
		t.Fatal("refused after waiting the Retry-After it gave")
	}
	if got := allowN(l, "org-b", plans.Free, 1); got != 1 {
		t.Fatal("org-b was limited by org-a's traffic")
	}
	if testenv.RedisKeys(t, url, prefix) == 0 {
		t.Fatal("no bucket in Redis under the test's prefix")
	}
}

// Two limiters over one Redis (two API instances) share each org's
// bucket; plans, named overrides and "off" apply as in memory.
func TestRedisSharedAcrossInstances(t *testing.T) {
	url, prefix := testenv.Redis(t)
	o := overrides(t, "*=0.5:6,pro=0.5:3,enterprise=off")
	a, b := openRedis(t, url, prefix, o), openRedis(t, url, prefix, o)
	mem := ratelimit.New(o, nil)
	for _, p := range plans.All() {
		if a.RateOf(p.Plan) != mem.RateOf(p.Plan) {
			t.Fatalf("%s: Redis rate %+v, in-memory %+v", p.Plan, a.RateOf(p.Plan), mem.RateOf(p.Plan))
		}
	}
	total := 0
	for i := 0; i < 10; i++ {
		total += allowN(a, "org", plans.Free, 1) + allowN(b, "org", plans.Free, 1)
	}
	if total != 6 {
		t.Fatalf("two instances allowed %d of 20, want the one burst 6", total)
	}
	if got := allowN(a, "pro", plans.Pro, 5) + allowN(b, "pro", plans.Pro, 5); got != 3 {
		t.Fatalf("pro (burst 3) allowed %d across instances", got)
	}
	if got := allowN(a, "big", plans.Enterprise, 1000) + allowN(b, "big", plans.Enterprise, 1000); got != 2000 {
		t.Fatalf("enterprise=off allowed %d of 2000", got)
	}
}

// Redis unreachable (a closed port): every request is allowed, each one
// counted in ratelimit_backend_errors_total, with one logged warning.
func TestRedisDownFailsOpen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	l, err := ratelimit.OpenRedis("redis://"+addr+"/0", "expd-test:down:", overrides(t, "free=1:1"), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	before := testutil.ToFloat64(telemetry.RateLimitErrors.WithLabelValues())
	start := time.Now()
	if got := allowN(l, "org", plans.Free, 20); got != 20 {
		t.Fatalf("Redis down: allowed %d of 20, want all (fail open)", got)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("20 checks against a closed port took %s", took)
	}
	if d := testutil.ToFloat64(telemetry.RateLimitErrors.WithLabelValues()) - before; d != 20 {
		t.Fatalf("ratelimit_backend_errors_total rose by %v, want 20", d)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d warnings logged for 20 failures within 10 s, want 1:\n%s", n, logs.String())
	}
	if _, err := ratelimit.OpenRedis("http://x", "p", nil, nil); err == nil {
		t.Fatal("a non-redis URL was accepted")
	}
}
