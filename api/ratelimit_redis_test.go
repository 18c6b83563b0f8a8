package api_test

import (
	"net/http"
	"testing"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/ratelimit"
)

// Two API instances sharing one Redis: the org's limit holds across them
// (accepted requests stay within the one burst), the 429 is the in-memory
// one, and the in-memory default still gives each instance its own bucket.
func TestRateLimitAcrossInstancesWithRedis(t *testing.T) {
	url, prefix := testenv.Redis(t)
	o := ratelimit.Overrides{plans.Free: {PerSecond: 0.5, Burst: 5}}
	open := func() *ratelimit.Limiter {
		l, err := ratelimit.OpenRedis(url, prefix, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	a := newSDKEnv(t, func(d *api.Deps) { d.RateLimits = open() })
	b := secondInstance(t, a)
	b.Deps.RateLimits = open()
	b.Server = testenv.NewServer(t, api.NewRouter(b.Deps))
	org := a.NewOrg(t)
	create(t, a, org, validConfig("exp"))
	accepted := 0
	var last testenv.Response
	for i := 0; i < 8; i++ {
		for _, env := range []*testenv.Env{a, b} {
			r := env.Do(t, "POST", "/v1/assign", map[string]string{"experiment_id": "exp", "user_id": "u"}, testenv.APIKey(org.PublishableKey)...)
			switch r.Status {
			case http.StatusOK:
				accepted++
			case http.StatusTooManyRequests:
				last = r
			default:
				t.Fatalf("instance answered %d", r.Status)
			}
		}
	}
	// 16 requests within well under 2 s: the burst 5, plus at most one refill.
	if accepted < 5 || accepted > 6 {
		t.Fatalf("two instances accepted %d of 16, want the shared burst 5 (6 with one refill)", accepted)
	}
	p := testenv.ExpectProblem(t, last, http.StatusTooManyRequests)
	if p.Code != "rate_limited" || last.Header.Get("Retry-After") != "2" {
		t.Fatalf("429: code %q, Retry-After %q; want rate_limited and 2 as in memory", p.Code, last.Header.Get("Retry-After"))
	}

	// In memory (the default), each instance has its own bucket: 2 x 5.
	m := newSDKEnv(t, func(d *api.Deps) { d.RateLimits = ratelimit.New(o, nil) })
	m2 := secondInstance(t, m)
	m2.Deps.RateLimits = ratelimit.New(o, nil)
	m2.Server = testenv.NewServer(t, api.NewRouter(m2.Deps))
	org2 := m.NewOrg(t)
	create(t, m, org2, validConfig("exp"))
	accepted = 0
	for i := 0; i < 8; i++ {
		for _, env := range []*testenv.Env{m, m2} {
			if r := env.Do(t, "POST", "/v1/assign", map[string]string{"experiment_id": "exp", "user_id": "u"}, testenv.APIKey(org2.PublishableKey)...); r.Status == http.StatusOK {
				accepted++
			}
		}
	}
	if accepted < 10 || accepted > 12 {
		t.Fatalf("in memory two instances accepted %d of 16, want each its own burst 5 (10)", accepted)
	}
}
