package usecases

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/expd/expd/results"
	"github.com/expd/expd/workflows"
)

// Run is a results run's state: the body of the runs routes, and what the
// dashboard's run status shows.
type Run struct {
	RunID       string          `json:"run_id"`
	WorkflowID  string          `json:"workflow_id"`
	Status      string          `json:"status"` // running | completed | failed
	ComputedFor string          `json:"computed_for"`
	Kind        string          `json:"kind"`
	Rows        *int            `json:"rows,omitempty"`
	Window      *results.Window `json:"window,omitempty"`
	Error       string          `json:"error,omitempty"`
	// What the run counted and left out, and why (once analysed), and why
	// a completed run has no rows.
	Counted *results.Tally    `json:"counted,omitempty"`
	LeftOut []results.LeftOut `json:"left_out,omitempty"`
	// OrphanScores: scores of the run's score metrics whose call never
	// arrived (absent without score metrics).
	OrphanScores *int64     `json:"orphan_scores,omitempty"`
	NoResults    string     `json:"no_results,omitempty"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	FinishedAt   *time.Time `json:"finished_at,omitempty"`
}

// StartedRun is the state of a run just started under workflow wid.
func StartedRun(key results.Key, wid string) Run {
	return Run{RunID: key.ComputedFor, WorkflowID: wid, Status: results.StatusRunning, ComputedFor: key.ComputedFor, Kind: key.Kind}
}

// StartManualRun starts the manual run of an experiment computed up to
// now (two starts within the same second are the same run).
func (s Service) StartManualRun(ctx context.Context, orgID, experimentID string) (Run, error) {
	key := results.ManualKey(time.Now())
	wid, err := s.Workflows.StartResults(ctx, workflows.ExperimentResultsInput{OrgID: orgID, ExperimentID: experimentID, ComputedFor: key.ComputedFor})
	if err != nil {
		return Run{}, err
	}
	return StartedRun(key, wid), nil
}

// RunState is a run's state: Temporal's when it still knows the workflow,
// else the stored run record; results.ErrRunNotFound when neither knows
// it.
func (s Service) RunState(ctx context.Context, orgID, experimentID string, key results.Key) (Run, error) {
	v := Run{RunID: key.ComputedFor, WorkflowID: workflows.ResultsWorkflowID(experimentID, key.ComputedFor), ComputedFor: key.ComputedFor, Kind: key.Kind}
	if c := s.Workflows.Client; c != nil {
		desc, err := c.DescribeWorkflowExecution(ctx, v.WorkflowID, "")
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
		case err != nil:
			return v, fmt.Errorf("describe %s: %w", v.WorkflowID, err)
		default:
			v.Status = workflowStatus(desc.GetWorkflowExecutionInfo().GetStatus())
		}
	}
	run, err := results.LoadRun(ctx, s.DB, orgID, experimentID, key.ComputedFor)
	switch {
	case errors.Is(err, results.ErrRunNotFound):
		if v.Status == "" {
			return v, err
		}
	case err != nil:
		return v, err
	default:
		if err := fillRun(&v, run); err != nil {
			return v, err
		}
	}
	return v, nil
}

// fillRun adds the stored record; its status stands in when Temporal no
// longer knows the workflow.
func fillRun(v *Run, run results.Run) error {
	if v.Status == "" {
		v.Status = run.Status
	}
	rows := run.RowCount
	started := run.StartedAt
	v.Rows, v.Error, v.StartedAt, v.FinishedAt, v.NoResults = &rows, run.Error, &started, run.FinishedAt, run.NoResults
	v.Window = &results.Window{Start: run.WindowStart, End: run.WindowEnd, Days: run.WindowDays, RetentionTruncated: run.RetentionTruncated}
	cov, ok, err := run.DecodeCoverage()
	if ok {
		v.Counted, v.LeftOut, v.OrphanScores = &cov.Counted, cov.LeftOut, cov.OrphanScores
	}
	return err
}

func workflowStatus(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return results.StatusRunning
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return results.StatusCompleted
	default: // failed, terminated, timed out, canceled
		return results.StatusFailed
	}
}
