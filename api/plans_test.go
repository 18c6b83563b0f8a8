package api_test

import (
	"net/http"
	"testing"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
)

func TestPlansListsThePlanTable(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	org := env.NewOrg(t)
	r := env.Do(t, "GET", "/v1/plans", nil, testenv.Bearer(org.MemberToken)...)
	if r.Status != http.StatusOK {
		t.Fatalf("plans: %d %s", r.Status, r.Body)
	}
	var body struct {
		Plans []map[string]any `json:"plans"`
	}
	r.JSON(t, &body)
	table := plans.All()
	if len(body.Plans) != 4 || len(table) != 4 {
		t.Fatalf("%d plans served, table has %d", len(body.Plans), len(table))
	}
	for i, p := range body.Plans {
		want := table[i]
		if p["plan"] != string(want.Plan) || p["retention_days"] != float64(want.RetentionDays) || p["max_permutations"] != float64(want.MaxPermutations) ||
			p["max_sample_per_arm"] != float64(want.MaxSamplePerArm) || p["monthly_event_allowance"] != float64(want.MonthlyEventAllowance) {
			t.Errorf("plan %d: %v, want %+v", i, p, want)
		}
	}
	if body.Plans[1]["plan"] != "pro" || body.Plans[3]["monthly_event_allowance"] != float64(plans.Unlimited) {
		t.Fatalf("plans out of order or enterprise not unlimited: %v", body.Plans)
	}
	testenv.ExpectProblem(t, env.Do(t, "GET", "/v1/plans", nil), http.StatusUnauthorized)
}
