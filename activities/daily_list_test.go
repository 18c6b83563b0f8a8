package activities_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/holdouts"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
)

// The nightly's list pages through the org's running experiments and its
// holdouts in one id order, flagging the holdouts, every one once.
func TestListRunningPagesExperimentsAndHoldouts(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	ctx := t.Context()
	want := map[string]bool{} // id -> is a holdout
	for _, name := range []string{"nightly-a", "nightly-b", "nightly-c"} {
		want[resultstest.Experiment(t, db, org.ID, resultstest.Config(name)).ID] = false
	}
	pct := 5.0
	for _, name := range []string{"q4", "q1"} {
		h, err := holdouts.Store{DB: db}.Create(ctx, org.ID, "u", holdouts.Spec{Name: name, Salt: name + "-holdout-salt", Percent: &pct, Metrics: []experiments.Metric{}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		want[h.ID] = true
	}
	acts := &activities.Activities{DB: db}
	var got []activities.ExperimentRef
	in := activities.ListRunningInput{OrgID: org.ID, Limit: 2}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatalf("no last page after %d: %+v", pages, got)
		}
		page, err := acts.ListRunningExperiments(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Experiments) > in.Limit {
			t.Fatalf("page of %d; limit %d", len(page.Experiments), in.Limit)
		}
		got = append(got, page.Experiments...)
		if page.Next == "" {
			break
		}
		in.AfterID = page.Next
	}
	if len(got) != len(want) || !slices.IsSortedFunc(got, func(x, y activities.ExperimentRef) int { return strings.Compare(x.ID, y.ID) }) {
		t.Fatalf("listed %+v; want the %d experiments and holdouts once each, by id", got, len(want))
	}
	for _, r := range got {
		if holdout, ok := want[r.ID]; !ok || r.Holdout != holdout || r.OrgID != org.ID {
			t.Errorf("ref %+v; want holdout=%v of org %s", r, holdout, org.ID)
		}
	}
}
