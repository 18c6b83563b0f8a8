package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
)

// phasedResults is the part of the results answer the phase tests read.
type phasedResults struct {
	Phases []struct {
		Phase             int                `json:"phase"`
		Start             time.Time          `json:"start"`
		End               time.Time          `json:"end"`
		ExperimentVersion int                `json:"experiment_version"`
		Weights           map[string]float64 `json:"weights"`
	} `json:"phases"`
	SRMGate string `json:"srm_gate"`
	SRM     struct {
		PValue       float64           `json:"p_value"`
		Phases       []json.RawMessage `json:"phases"`
		FailedPhases []int             `json:"failed_phases"`
	} `json:"srm"`
	Metrics []struct {
		SRMP             float64 `json:"srm_p"`
		Test             string  `json:"test"`
		StratifiedPhases int     `json:"stratified_phases"`
	} `json:"metrics"`
}

// After a 50 -> 20/80 ramp the results list both phases, test SRM per
// phase (the ramp passes) and stratify welch_t and z_test metrics.
func TestResultsListPhasesAfterARamp(t *testing.T) {
	env, _ := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("ramped"))
	now := time.Now().UTC()
	start, change := now.Add(-50*time.Hour).Truncate(time.Second), now.Add(-20*time.Hour).Truncate(time.Second)
	half := []bucketing.Slice{{Variant: resultstest.Arms[0], Weight: 50}, {Variant: resultstest.Arms[1], Weight: 50}}
	ramp := []bucketing.Slice{{Variant: resultstest.Arms[0], Weight: 20}, {Variant: resultstest.Arms[1], Weight: 80}}
	resultstest.Ramp(t, env.DB, org.ID, exp, start, change, ramp)
	resultstest.Insert(t, env.DB, resultstest.PhasedExposures(org.ID, exp.ID, 5, []time.Time{start, change, now.Add(-time.Minute)},
		[]int{600, 900}, [][]bucketing.Slice{half, ramp}, nil))
	runID := startRun(t, env, admin, exp.ID)
	waitForRunStatus(t, env, admin, exp.ID, runID)
	var body phasedResults
	env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results", nil, admin...).ExpectJSON(t, http.StatusOK, &body)
	if len(body.Phases) != 2 || !body.Phases[0].Start.Equal(start) || !body.Phases[0].End.Equal(change) || !body.Phases[1].Start.Equal(change) ||
		body.Phases[1].ExperimentVersion != 2 || body.Phases[1].Weights[resultstest.Arms[1]] != 80 {
		t.Fatalf("phases %+v; want 50/50 from %s to %s, then 20/80 (version 2)", body.Phases, start, change)
	}
	if body.SRMGate != "pass" || len(body.SRM.Phases) != 2 || body.SRM.FailedPhases == nil || len(body.SRM.FailedPhases) != 0 || body.Metrics[0].SRMP != body.SRM.PValue {
		t.Errorf("srm %s %+v, rows' srm_p %v; want a pass tested per phase", body.SRMGate, body.SRM, body.Metrics[0].SRMP)
	}
	for _, m := range body.Metrics {
		if m.Test == "welch_t" && m.StratifiedPhases != 2 {
			t.Errorf("row %+v: want welch_t stratified over the 2 phases", m)
		}
	}
}
