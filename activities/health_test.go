package activities_test

import (
	"slices"
	"testing"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
)

// The hourly health run's listing keeps the first PerOrg running
// experiments of each org (by id), pages by (org, id), and counts the
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
	slices.Sort(ids[big])
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
