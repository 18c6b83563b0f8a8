package activities_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
)

// The hourly health run's listing keeps the PerOrg least recently checked
// running experiments of each org (never checked: by creation), pages by
// whole orgs, and counts the
// running experiments the cap leaves out; stopped ones are not listed.
func TestListHealthChecksCapsEachOrg(t *testing.T) {
	db := testenv.DB(t)
	signer := testenv.Signer(t)
	store := experiments.Store{DB: db}
	ids := map[string][]string{}
	create := func(orgID, name, status string) {
		cfg := resultstest.Config(name)
		cfg.Status = status
		exp, err := store.Create(t.Context(), orgID, "user_1", cfg)
		if err != nil {
			t.Fatal(err)
		}
		if status == experiments.StatusRunning {
			ids[orgID] = append(ids[orgID], exp.ID)
		}
	}
	big, small := testenv.NewOrg(t, db, signer).ID, testenv.NewOrg(t, db, signer).ID
	for _, name := range []string{"a", "b", "c"} {
		create(big, name, experiments.StatusRunning)
	}
	create(small, "d", experiments.StatusRunning)
	create(small, "e", experiments.StatusStopped)

	acts := &activities.Activities{DB: db}
	var got []activities.ExperimentRef
	deferred := -1
	for after := (activities.ExperimentRef{}); ; {
		page, err := acts.ListHealthChecks(t.Context(), activities.ListHealthInput{After: after, Limit: 2, PerOrg: 2})
		if err != nil {
			t.Fatal(err)
		}
		if deferred < 0 {
			deferred = page.Deferred
		}
		got = append(got, page.Experiments...)
		if page.Next == (activities.ExperimentRef{}) {
			break
		}
		after = page.Next
	}
	var want []activities.ExperimentRef
	for _, org := range slices.Sorted(slices.Values([]string{big, small})) {
		n := min(2, len(ids[org]))
		for _, id := range ids[org][:n] {
			want = append(want, activities.ExperimentRef{OrgID: org, ID: id})
		}
	}
	if !slices.Equal(got, want) || deferred != 1 {
		t.Fatalf("listed %v (deferred %d), want %v (deferred 1)", got, deferred, want)
	}
}

// With more running experiments in an org than the cap, each hourly run
// checks the least recently checked: 25 experiments and a cap of 20 are
// all checked within ceil(25/20) = 2 runs, the second starting with the
// 5 the first left out, and the rotation goes on from there.
func TestHealthChecksRotateWithinTheBound(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t)).ID
	store := experiments.Store{DB: db}
	var all []string
	for i := range 25 {
		exp, err := store.Create(t.Context(), org, "user_1", resultstest.Config(fmt.Sprintf("rot-%02d", i)))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, exp.ID)
	}
	acts := &activities.Activities{DB: db}
	var suite testsuite.WorkflowTestSuite
	aenv := suite.NewTestActivityEnvironment()
	aenv.RegisterActivity(acts)
	hour := time.Now().UTC().Truncate(time.Second).Add(time.Minute) // checks come after creation
	run := func(at time.Time) []string {
		page, err := acts.ListHealthChecks(t.Context(), activities.ListHealthInput{Limit: 200, PerOrg: 20})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range page.Experiments {
			ids = append(ids, e.ID)
			if _, err := aenv.ExecuteActivity(acts.CheckGuardrailHealth, activities.HealthCheckInput{OrgID: e.OrgID, ExperimentID: e.ID, At: at, WorkflowID: "h"}); err != nil {
				t.Fatal(err)
			}
		}
		if page.Deferred != 5 || len(ids) != 20 {
			t.Fatalf("run at %v listed %d, deferred %d", at, len(ids), page.Deferred)
		}
		return ids
	}
	first, second := run(hour), run(hour.Add(time.Hour))
	if !slices.Equal(first, all[:20]) || !slices.Equal(second[:5], all[20:]) {
		t.Fatalf("first run %v\nsecond run %v\nwant creation order, then the 5 left out first", first, second)
	}
	seen := map[string]bool{}
	for _, id := range append(first, second...) {
		seen[id] = true
	}
	if len(seen) != 25 {
		t.Fatalf("%d of 25 checked within 2 runs", len(seen))
	}
	// Third run: first the 5 of the first run that the second did not
	// check again (checked longest ago).
	var waiting []string
	for _, id := range first {
		if !slices.Contains(second, id) {
			waiting = append(waiting, id)
		}
	}
	third := run(hour.Add(2 * time.Hour))
	got := slices.Clone(third[:5])
	slices.Sort(got)
	slices.Sort(waiting)
	if !slices.Equal(got, waiting) {
		t.Fatalf("third run starts %v, want the first run's 5 not re-checked since: %v", third[:5], waiting)
	}
}
