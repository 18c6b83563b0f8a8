package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
)

// A manual run asked for in the same second as the experiment's creation
// counts the events ingested before it: its window ends at the next
// whole second, and the workflow waits for that second before reading.
// (Truncated to its second, the window ended before the creation and the
// run counted nothing.)
func TestManualRunInTheSecondOfCreationCountsWhatCameBefore(t *testing.T) {
	env, _ := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	for attempt := range 5 {
		// Start at the top of a second, so the three requests fit in it
		// unless the machine is very slow (then try again).
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
		var exp experimentBody
		env.Do(t, http.MethodPost, "/v1/experiments", resultstest.Config(fmt.Sprintf("same-second-%d", attempt)), admin...).ExpectJSON(t, http.StatusCreated, &exp)
		users := resultstest.Users(3, 9)
		resultstest.Post(t, env, org.SecretKey, resultstest.Events(org.ID, exp.ID, users, time.Now()))
		runID := startRun(t, env, admin, exp.ID)
		created, err := time.Parse(time.RFC3339Nano, exp.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		key, err := results.ParseKey(runID)
		if err != nil {
			t.Fatal(err)
		}
		if !key.WindowEnd.After(created) {
			t.Fatalf("run %s of an experiment created at %s: its window ends before the creation", runID, exp.CreatedAt)
		}
		if !key.WindowEnd.Add(-time.Second).Before(created) {
			t.Logf("attempt %d: the run (%s) was asked for after the creation's second (%s); again", attempt, runID, exp.CreatedAt)
			continue
		}
		st := waitForRunStatus(t, env, admin, exp.ID, runID)
		if st.NoResults != "" || st.Counted == nil || st.Counted.Users != int64(len(users)) || st.Rows == nil || *st.Rows != len(resultstest.Metrics) {
			t.Fatalf("run %s in the creation's second (%s): %+v; want the %d users ingested before it counted", runID, exp.CreatedAt, st, len(users))
		}
		var body phasedResults
		env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results", nil, admin...).ExpectJSON(t, http.StatusOK, &body)
		if len(body.Phases) != 1 || body.Phases[0].ExperimentVersion != 1 || body.SRM.Phases != nil || body.Metrics[0].StratifiedPhases != 0 {
			t.Errorf("one phase: %+v; want one phase listed and the pooled SRM and effects", body)
		}
		return
	}
	t.Skip("five attempts could not fit creation, ingestion and the run's request in one second on this machine")
}
