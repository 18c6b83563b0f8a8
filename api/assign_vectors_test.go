package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/testdata/bucketing/vectors"
)

// The shared vector file through POST /v1/assign: every bucket case whose
// experiment id is a UUID and whose salt and user id the API accepts,
// with the experiment stored under the vector's own id.
func TestAssignFollowsTheVectorFile(t *testing.T) {
	file, err := vectors.Read("../testdata/bucketing/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	type setup struct {
		id, salt string
		count    uint32
	}
	cases := map[setup][]vectors.BucketCase{}
	for _, c := range file.BucketCases {
		if uuid.Validate(c.ExperimentID) != nil || len(c.Salt) < experiments.MinSaltLen || len(c.Salt) > experiments.MaxSaltLen ||
			c.UserID == "" || len(c.UserID) > 256 || strings.ContainsRune(c.UserID, 0) {
			continue
		}
		s := setup{c.ExperimentID, c.Salt, c.BucketCount}
		cases[s] = append(cases[s], c)
	}
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	checked := 0
	for s, list := range cases {
		bmap := storeVectorExperiment(t, env, org, s.id, s.salt, s.count)
		// A fresh instance: the previous one cached pins of the replaced experiment.
		instance := secondInstance(t, env)
		for _, c := range list {
			got := assignUser(t, instance, org.PublishableKey, c.ExperimentID, c.UserID)
			want, _ := bmap.Lookup(c.Bucket)
			if got.Bucket != c.Bucket || got.Variant != want || got.ExperimentID != c.ExperimentID {
				t.Fatalf("vector %+v: API answered %+v, want bucket %d variant %s", c, got, c.Bucket, want)
			}
			checked++
		}
	}
	if checked < 250 {
		t.Fatalf("only %d vector cases went through the API", checked)
	}
}

// storeVectorExperiment stores a running 50/50 experiment under a given id
// (replacing one stored before under that id, pins included), as
// POST /v1/experiments would, and returns its bucket map.
func storeVectorExperiment(t *testing.T, env *testenv.Env, org testenv.Org, id, salt string, count uint32) bucketing.Map {
	t.Helper()
	for _, table := range []string{"assignments", "experiment_versions", "experiments"} {
		column := "experiment_id"
		if table == "experiments" {
			column = "id"
		}
		if err := env.DB.Exec("DELETE FROM "+table+" WHERE "+column+" = ?", id).Error; err != nil {
			t.Fatal(err)
		}
	}
	alloc := []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}}
	bmap, err := bucketing.InitialMap(alloc, count)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("vectors-%s-%d", id[:8], count)
	cfg, _ := json.Marshal(experiments.Config{Name: name, Salt: salt, BucketCount: count, Allocation: alloc, Metrics: []experiments.Metric{}})
	mapJSON, _ := json.Marshal(bmap)
	now := time.Now().UTC()
	exp := experiments.Row{ID: id, OrgID: org.ID, Name: name, Status: experiments.StatusRunning, Salt: salt,
		BucketCount: count, CurrentVersion: 1, CreatedAt: now, UpdatedAt: now}
	ver := experiments.VersionRow{ID: uuid.NewString(), ExperimentID: id, OrgID: org.ID, Version: 1, Config: cfg, BucketMap: mapJSON, CreatedAt: now}
	if err := env.DB.Create(&exp).Error; err != nil {
		t.Fatal(err)
	}
	if err := env.DB.Create(&ver).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := experiments.BumpConfigVersion(env.DB, org.ID); err != nil {
		t.Fatal(err)
	}
	return bmap
}
