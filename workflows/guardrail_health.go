package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
)

// Bounds of the hourly health run (docs/lifecycle.md, "Hourly health run").
const (
	// healthPerOrg experiments of one org are checked per hour at most
	// (the least recently checked: a rotation, so every one is checked
	// within ceil(n/20) hours); the others wait for a later hour.
	healthPerOrg = 20
	// healthPageSize experiments are listed per workflow run; the next
	// page continues as new.
	healthPageSize = 200
	// healthConcurrency analyses run at once: one aggregation each over
	// the experiment's whole window, on the shared database, every hour.
	healthConcurrency = 2
)

// GuardrailHealthInput is empty when the schedule starts it: the instant
// the analyses end at is then the scheduled time. After and Totals carry
// state across continue-as-new.
type GuardrailHealthInput struct {
	At     time.Time
	After  activities.ExperimentRef
	Totals GuardrailHealthResult
}

// GuardrailHealthResult counts one hourly health run.
type GuardrailHealthResult struct {
	At          time.Time
	Checked     int
	Deferred    int // running experiments beyond healthPerOrg in their org
	Breaches    int
	Stopped     int
	SRMFailures int
	Failed      int
	FailedIDs   []string
}

// GuardrailHealth is the hourly health run (schedule
// GuardrailHealthScheduleID): for each running experiment, up to
// healthPerOrg per org, one CheckGuardrailHealth activity analyses the
// experiment up to the scheduled instant without publishing anything and
// acts on its guardrails and SRM gate exactly as a results run does (a
// breach acted on once, whichever run sees it first); the workflow then
// announces what was acted on. One failed experiment does not fail the
// others.
func GuardrailHealth(ctx workflow.Context, in GuardrailHealthInput) (GuardrailHealthResult, error) {
	totals := in.Totals
	totals.At = in.At
	if totals.At.IsZero() {
		totals.At = scheduledTime(ctx).UTC().Truncate(time.Second)
	}
	var page activities.ListHealthResult
	lctx := workflow.WithActivityOptions(ctx, stepOptions)
	if err := workflow.ExecuteActivity(lctx, a.ListHealthChecks, activities.ListHealthInput{After: in.After, Limit: healthPageSize, PerOrg: healthPerOrg}).Get(ctx, &page); err != nil {
		return totals, err
	}
	totals.Deferred += page.Deferred
	for start := 0; start < len(page.Experiments); start += healthConcurrency {
		checkHealthWave(ctx, totals.At, page.Experiments[start:min(start+healthConcurrency, len(page.Experiments))], &totals)
	}
	if page.Next != (activities.ExperimentRef{}) {
		return totals, workflow.NewContinueAsNewError(ctx, GuardrailHealth, GuardrailHealthInput{At: totals.At, After: page.Next, Totals: totals})
	}
	return totals, nil
}

// checkHealthWave checks a wave of experiments in parallel and announces
// what each check acted on.
func checkHealthWave(ctx workflow.Context, at time.Time, wave []activities.ExperimentRef, totals *GuardrailHealthResult) {
	wid := workflow.GetInfo(ctx).WorkflowExecution.ID
	actx := workflow.WithActivityOptions(ctx, analyzeOptions)
	futures := make([]workflow.Future, len(wave))
	for i, ref := range wave {
		futures[i] = workflow.ExecuteActivity(actx, a.CheckGuardrailHealth,
			activities.HealthCheckInput{OrgID: ref.OrgID, ExperimentID: ref.ID, At: at, WorkflowID: wid})
	}
	for i, f := range futures {
		var g activities.GuardrailsResult
		if err := f.Get(ctx, &g); err != nil {
			totals.Failed++
			if len(totals.FailedIDs) < maxListedFailures {
				totals.FailedIDs = append(totals.FailedIDs, wave[i].ID)
			}
			workflow.GetLogger(ctx).Error("guardrail health check failed", "experiment_id", wave[i].ID, "error", err)
			continue
		}
		totals.Checked++
		totals.Breaches += len(g.Breaches)
		if g.SRM != nil {
			totals.SRMFailures++
		}
		if announceGuardrails(ctx, wave[i].OrgID, wave[i].ID, wid, g) {
			totals.Stopped++
		}
	}
}
