package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
)

// Shipping ends the experiment's analysis: a manual run after the ship
// counts the users exposed before it and none of those whose exposures
// and events the ingest took after it (everyone then gets one variant).
func TestShippedExperimentIsAnalysedUpToTheShip(t *testing.T) {
	env, _ := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	var exp experimentBody
	env.Do(t, http.MethodPost, "/v1/experiments", resultstest.Config("shipped-window"), admin...).ExpectJSON(t, http.StatusCreated, &exp)

	const perArm = 150
	resultstest.Post(t, env, org.PublishableKey, resultstest.Events(org.ID, exp.ID, resultstest.Users(perArm, 21), time.Now().UTC()))
	time.Sleep(50 * time.Millisecond) // the ship's instant falls after every event above
	shipped := lifecycle(t, env, org, exp.ID, "ship", map[string]string{"variant": "treatment"})
	if shipped.Status != "shipped" {
		t.Fatalf("ship: %+v", shipped)
	}
	shipDone := time.Now().UTC()
	// Users arriving after the ship (other ids: another seed), in both
	// arms as an SDK with a stale config might still report them.
	resultstest.Post(t, env, org.PublishableKey, resultstest.Events(org.ID, exp.ID, resultstest.Users(2*perArm, 22), shipDone.Add(10*time.Millisecond)))
	time.Sleep(1100 * time.Millisecond) // the run's instant (whole seconds) falls after every event

	run := startRun(t, env, admin, exp.ID)
	waitForResultsRun(t, env, admin, exp.ID, run, len(resultstest.Metrics))
	resp := env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results?day="+run, nil, admin...)
	if resp.Status != http.StatusOK {
		t.Fatalf("results: %d %s", resp.Status, resp.Body)
	}
	var body struct {
		resultsBody
		Window struct{ End time.Time }
	}
	resp.JSON(t, &body)
	if !body.Window.End.Before(shipDone) || body.ComputedFor != run || len(body.Metrics) != len(resultstest.Metrics) {
		t.Fatalf("run %s window ends %v, want at the ship (before %v)", body.ComputedFor, body.Window.End, shipDone)
	}
	for _, m := range body.Metrics {
		if m.NPerArm["control"] != perArm || m.NPerArm["treatment"] != perArm {
			t.Fatalf("%s counts %v, want %d per arm (users after the ship left out)", m.Metric, m.NPerArm, perArm)
		}
	}
}
