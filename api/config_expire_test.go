package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/sdkcache"
)

// The instance that takes an experiment change serves the new config at
// once, however long its cache would otherwise trust the old one.
func TestConfigOfTheChangingInstanceIsFreshAtOnce(t *testing.T) {
	env := newSDKEnv(t, func(d *api.Deps) { d.SDK = sdkcache.New(d.DB, sdkcache.Options{MaxAge: time.Hour}) })
	org := env.NewOrg(t)
	exp := create(t, env, org, validConfig("fresh"))
	first := decodeConfig(t, getConfig(t, env, org.PublishableKey))
	etag := `"1"`
	if first.ConfigVersion != 1 {
		t.Fatalf("first config_version %d", first.ConfigVersion)
	}
	cfg := validConfig("fresh")
	cfg["allocation"] = allocation("control", 70, "concise", 30)
	putConfig(t, env, org, exp.ID, cfg)
	r := getConfig(t, env, org.PublishableKey, "If-None-Match", etag)
	if r.Status != http.StatusOK {
		t.Fatalf("right after PUT: %d, want 200 with the new config", r.Status)
	}
	got := decodeConfig(t, r)
	if got.ConfigVersion != 2 || got.Experiments[0].BucketMap.Counts()["control"] != 7000 {
		t.Fatalf("after PUT: %+v", got)
	}
	create(t, env, org, validConfig("second"))
	if got := decodeConfig(t, getConfig(t, env, org.PublishableKey)); got.ConfigVersion != 3 || len(got.Experiments) != 2 {
		t.Fatalf("after create: version %d, %d experiments", got.ConfigVersion, len(got.Experiments))
	}
}
