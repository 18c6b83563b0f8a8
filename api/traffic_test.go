package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
)

type trafficBody struct {
	ExperimentID string `json:"experiment_id"`
	From, To     string
	Days         []struct {
		Day      string           `json:"day"`
		Variants map[string]int64 `json:"variants"`
	} `json:"days"`
}

func TestTrafficCountsUniqueExposedUsersPerDay(t *testing.T) {
	f := newIngestFixture(t)
	latest := time.Now().Add(-time.Minute)
	today := latest.UTC().Truncate(24 * time.Hour)
	var batch []map[string]any
	for d := 0; d < 3; d++ {
		day := today.AddDate(0, 0, -d).Add(time.Hour)
		if d == 0 {
			day = latest
		}
		for u := 0; u < 10+d*5; u++ {
			variant := []string{"control", "concise"}[u%2]
			// Each user twice a day: counted once.
			batch = append(batch, exposure("exp", fmt.Sprintf("u%d", u), variant, day), exposure("exp", fmt.Sprintf("u%d", u), variant, day.Add(time.Second)))
		}
	}
	batch = append(batch, modelCall("exp", "not-an-exposure", time.Now()))
	// Days before yesterday are history: they go through the import.
	var ndjson strings.Builder
	for _, e := range batch {
		ndjson.Write(append(testenv.Marshal(t, e), '\n'))
	}
	r := f.env.Do(t, "POST", "/v1/events/import", ndjson.String(), append(testenv.APIKey(f.org.SecretKey), "Content-Type", "application/x-ndjson")...)
	var imported importBody
	r.JSON(t, &imported)
	if r.Status != http.StatusAccepted || imported.Accepted != len(batch) {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	from := today.AddDate(0, 0, -3).Format(time.DateOnly)
	r = f.env.Do(t, "GET", "/v1/experiments/exp/traffic?from="+from, nil, testenv.Bearer(f.org.MemberToken)...)
	if r.Status != http.StatusOK {
		t.Fatalf("traffic: %d %s", r.Status, r.Body)
	}
	var got trafficBody
	r.JSON(t, &got)
	if got.ExperimentID != f.exp.ID || len(got.Days) != 4 || got.Days[0].Day != from || got.Days[3].Day != today.Format(time.DateOnly) {
		t.Fatalf("traffic %s", r.Body)
	}
	for _, d := range got.Days {
		for _, v := range []string{"control", "concise"} {
			want := directCount(t, f, d.Day, v)
			if n, ok := d.Variants[v]; !ok || n != want {
				t.Errorf("%s %s: %d (present %v), direct SQL count %d", d.Day, v, n, ok, want)
			}
		}
	}
	if got.Days[0].Variants["control"] != 0 || got.Days[3].Variants["control"]+got.Days[3].Variants["concise"] != 10 {
		t.Fatalf("traffic %s", r.Body)
	}
	// Bad ranges, unknown and foreign experiments.
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/exp/traffic?from=yesterday", nil, testenv.Bearer(f.org.MemberToken)...), 400)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/exp/traffic?from=2026-02-01&to=2026-01-01", nil, testenv.Bearer(f.org.MemberToken)...), 400)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/exp/traffic?from=2020-01-01&to=2026-01-01", nil, testenv.Bearer(f.org.MemberToken)...), 400)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/nope/traffic", nil, testenv.Bearer(f.org.MemberToken)...), 404)
	other := f.env.NewOrg(t)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/"+f.exp.ID+"/traffic", nil, testenv.Bearer(other.AdminToken)...), 404)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/exp/traffic", nil, testenv.APIKey(f.org.SecretKey)...), 401)
}

// directCount counts a day's unique exposed users of a variant in SQL,
// independently of the traffic query.
func directCount(t *testing.T, f ingestFixture, day, variant string) int64 {
	t.Helper()
	start, err := time.Parse(time.DateOnly, day)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	err = f.env.DB.Raw(`SELECT COUNT(*) FROM (SELECT DISTINCT user_id FROM events
WHERE org_id = ? AND experiment_id = ? AND type = 'exposure' AND variant = ? AND ts >= ? AND ts < ?) AS u`,
		f.org.ID, f.exp.ID, variant, start, start.Add(24*time.Hour)).Scan(&n).Error
	if err != nil {
		t.Fatal(err)
	}
	return n
}
