package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
)

func TestConfigServesRunningExperimentsWithETag(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	running := create(t, env, org, validConfig("support-bot-prompt"))
	stopped := validConfig("old-test")
	stopped["status"] = "stopped"
	old := create(t, env, org, stopped)

	r := getConfig(t, env, org.PublishableKey)
	cfg := decodeConfig(t, r)
	if cfg.ConfigVersion != 2 || r.Header.Get("ETag") != `"2"` {
		t.Fatalf("config_version %d, ETag %q; want 2 and \"2\"", cfg.ConfigVersion, r.Header.Get("ETag"))
	}
	if len(cfg.Experiments) != 2 {
		t.Fatalf("want both experiments, got %+v", cfg.Experiments)
	}
	// Newest first: the stopped one serves control to every bucket.
	if s := cfg.Experiments[0]; s.ID != old.ID || s.Status != "stopped" || len(s.BucketMap) != 1 ||
		s.BucketMap[0].Variant != "control" || s.BucketMap[0].End != 10000 || len(s.Allocation) != 1 {
		t.Fatalf("stopped experiment served as %+v", s)
	}
	e := cfg.Experiments[1]
	if e.ID != running.ID || e.Name != "support-bot-prompt" || e.Version != 1 || e.Status != "running" ||
		e.Salt != "k3J9x2pQ" || e.BucketCount != 10000 || e.Control != "control" {
		t.Fatalf("experiment fields: %+v", e)
	}
	if len(e.BucketMap) != 2 || e.BucketMap[0].End != 5000 || len(e.Allocation) != 2 || len(e.Metrics) != 2 {
		t.Fatalf("map/allocation/metrics: %+v", e)
	}
	if e.Variants["concise"].Prompt != "Answer in two sentences." || e.Variants["concise"].Variables["temperature"] != 0.3 {
		t.Fatalf("variants: %+v", e.Variants)
	}
	// The secret key reads the same config.
	if got := decodeConfig(t, getConfig(t, env, org.SecretKey)); got.ConfigVersion != 2 {
		t.Fatalf("secret key config_version %d", got.ConfigVersion)
	}
}

func TestConfigConditionalRequests(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	create(t, env, org, validConfig("support-bot-prompt"))
	etag := getConfig(t, env, org.PublishableKey).Header.Get("ETag")

	for _, inm := range []string{etag, `"7", ` + etag, "W/" + etag, "*"} {
		r := getConfig(t, env, org.PublishableKey, "If-None-Match", inm)
		if r.Status != http.StatusNotModified || len(r.Body) != 0 || r.Header.Get("ETag") != etag {
			t.Fatalf("If-None-Match %s: %d, body %q, ETag %q; want 304 with no body", inm, r.Status, r.Body, r.Header.Get("ETag"))
		}
	}
	for _, inm := range []string{`"0"`, `"1`, "1"} {
		if r := getConfig(t, env, org.PublishableKey, "If-None-Match", inm); r.Status != http.StatusOK {
			t.Fatalf("If-None-Match %s: %d, want 200", inm, r.Status)
		}
	}
}

// After a PUT the config is served again (200, higher config_version)
// within the cache's freshness bound.
func TestConfigChangesAfterUpdate(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	exp := create(t, env, org, validConfig("support-bot-prompt"))
	etag := getConfig(t, env, org.PublishableKey).Header.Get("ETag")

	cfg := validConfig("support-bot-prompt")
	cfg["allocation"] = allocation("control", 60, "concise", 40)
	putConfig(t, env, org, exp.ID, cfg)
	updated := time.Now()
	for {
		r := getConfig(t, env, org.PublishableKey, "If-None-Match", etag)
		if r.Status == http.StatusOK {
			got := decodeConfig(t, r)
			if got.ConfigVersion != 2 || r.Header.Get("ETag") != `"2"` || got.Experiments[0].Version != 2 || got.Experiments[0].BucketMap.Counts()["control"] != 6000 {
				t.Fatalf("after PUT: version %d, ETag %q, %+v", got.ConfigVersion, r.Header.Get("ETag"), got.Experiments)
			}
			break
		}
		if r.Status != http.StatusNotModified {
			t.Fatalf("while waiting: %d %s", r.Status, r.Body)
		}
		if time.Since(updated) > testMaxAge+time.Second {
			t.Fatalf("still 304 %s after the PUT; the cache bound is %s", time.Since(updated), testMaxAge)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConfigNeedsAValidKey(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	for name, headers := range map[string][]string{
		"no key":        nil,
		"unknown key":   testenv.APIKey("pk_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
		"malformed key": testenv.APIKey("nope"),
		"session token": testenv.Bearer(org.AdminToken),
	} {
		r := env.Do(t, "GET", "/v1/config", nil, headers...)
		if p := testenv.ExpectProblem(t, r, http.StatusUnauthorized); p.Code != "unauthorized" {
			t.Fatalf("%s: code %q", name, p.Code)
		}
	}
}

func TestConfigIsolatesOrgs(t *testing.T) {
	env := newSDKEnv(t)
	alice, bob := env.NewOrg(t), env.NewOrg(t)
	create(t, env, alice, validConfig("alice-exp"))
	create(t, env, alice, validConfig("alice-exp-2"))
	create(t, env, bob, validConfig("bob-exp"))

	a := decodeConfig(t, getConfig(t, env, alice.PublishableKey))
	b := decodeConfig(t, getConfig(t, env, bob.SecretKey))
	if len(a.Experiments) != 2 || a.ConfigVersion != 2 {
		t.Fatalf("alice sees %+v at %d", a.Experiments, a.ConfigVersion)
	}
	if len(b.Experiments) != 1 || b.Experiments[0].Name != "bob-exp" || b.ConfigVersion != 1 {
		t.Fatalf("bob sees %+v at %d", b.Experiments, b.ConfigVersion)
	}
	// Neither can assign in the other's experiment, by name or by id.
	r := env.Do(t, "POST", "/v1/assign", map[string]string{"experiment_id": a.Experiments[0].ID, "user_id": "u"}, testenv.APIKey(bob.PublishableKey)...)
	testenv.ExpectProblem(t, r, http.StatusNotFound)
	r = env.Do(t, "POST", "/v1/assign", map[string]string{"experiment_id": "alice-exp", "user_id": "u"}, testenv.APIKey(bob.PublishableKey)...)
	testenv.ExpectProblem(t, r, http.StatusNotFound)
}
