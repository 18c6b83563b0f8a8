package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/ratelimit"
	"github.com/expd/expd/sdkcache"
)

// testMaxAge is the SDK cache freshness bound of these tests: short, so
// that tests of invalidation wait little.
const testMaxAge = 100 * time.Millisecond

// newSDKEnv is a test env whose SDK cache revalidates after testMaxAge
// and whose rate limits are off unless tune sets some.
func newSDKEnv(t *testing.T, tune ...func(*api.Deps)) *testenv.Env {
	t.Helper()
	return testenv.New(t, sdkDeps(t, tune)...)
}

// sdkDeps puts the SDK cache and unlimited rates before tune.
func sdkDeps(t *testing.T, tune []func(*api.Deps)) []func(*api.Deps) {
	return append([]func(*api.Deps){func(d *api.Deps) {
		d.SDK = sdkcache.New(d.DB, sdkcache.Options{MaxAge: testMaxAge, Secrets: d.Secrets})
		d.RateLimits = ratelimit.New(unlimitedRates(t), nil)
	}}, tune...)
}

func unlimitedRates(t *testing.T) ratelimit.Overrides {
	o, err := ratelimit.ParseOverrides("*=off")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// secondInstance is another API instance over env's database, with its
// own (empty) SDK cache, as a second replica behind a load balancer.
func secondInstance(t *testing.T, env *testenv.Env) *testenv.Env {
	t.Helper()
	return secondInstanceWith(t, env, sdkcache.Options{MaxAge: testMaxAge})
}

// secondInstanceWith is secondInstance with its own cache options.
func secondInstanceWith(t *testing.T, env *testenv.Env, opts sdkcache.Options) *testenv.Env {
	t.Helper()
	deps := env.Deps
	deps.SDK = sdkcache.New(env.DB, opts)
	srv := testenv.NewServer(t, api.NewRouter(deps))
	return &testenv.Env{DB: env.DB, Signer: env.Signer, Server: srv, Deps: deps}
}

type configBody struct {
	ConfigVersion int64 `json:"config_version"`
	Experiments   []struct {
		ID          string        `json:"id"`
		Name        string        `json:"name"`
		Version     int           `json:"version"`
		Status      string        `json:"status"`
		Salt        string        `json:"salt"`
		BucketCount uint32        `json:"bucket_count"`
		Control     string        `json:"control"`
		BucketMap   bucketing.Map `json:"bucket_map"`
		Allocation  []struct {
			Variant string  `json:"variant"`
			Weight  float64 `json:"weight"`
		} `json:"allocation"`
		Variants map[string]struct {
			Prompt    string         `json:"prompt"`
			Variables map[string]any `json:"variables"`
		} `json:"variants"`
		Metrics []map[string]any  `json:"metrics"`
		Sticky  *bucketing.Sticky `json:"sticky"`
	} `json:"experiments"`
}

func getConfig(t *testing.T, env *testenv.Env, key string, headers ...string) testenv.Response {
	t.Helper()
	return env.Do(t, "GET", "/v1/config", nil, append(testenv.APIKey(key), headers...)...)
}

func decodeConfig(t *testing.T, r testenv.Response) configBody {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("GET /v1/config: %d %s", r.Status, r.Body)
	}
	var c configBody
	r.JSON(t, &c)
	return c
}

type assignBody struct {
	Variant       string `json:"variant"`
	ConfigVersion int64  `json:"config_version"`
	ExperimentID  string `json:"experiment_id"`
	Bucket        uint32 `json:"bucket"`
	InExperiment  bool   `json:"in_experiment"`
	ReasonCode    string `json:"reason_code"`
	Stopped       bool   `json:"stopped"`
	Status        string `json:"status"`
	Reason        string `json:"reason"`
}

func assignUser(t testing.TB, env *testenv.Env, key, experiment, user string) assignBody {
	t.Helper()
	var a assignBody
	env.Do(t, "POST", "/v1/assign", map[string]string{"experiment_id": experiment, "user_id": user}, testenv.APIKey(key)...).ExpectJSON(t, http.StatusOK, &a)
	return a
}

// putConfig mints a new version of an experiment with the given changes.
func putConfig(t *testing.T, env *testenv.Env, org testenv.Org, id string, cfg map[string]any) experimentBody {
	t.Helper()
	var e experimentBody
	env.Do(t, "PUT", "/v1/experiments/"+id, cfg, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &e)
	return e
}

func allocation(pairs ...any) []map[string]any {
	var out []map[string]any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"variant": pairs[i], "weight": pairs[i+1]})
	}
	return out
}

// waitFor polls cond until it holds, failing after the cache bound plus a
// margin.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testMaxAge + 2*time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within the SDK cache bound")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
