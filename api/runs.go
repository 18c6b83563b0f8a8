package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/expd/expd/results"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/workflows"
)

// runView is the body of the runs routes.
type runView struct {
	RunID       string          `json:"run_id"`
	WorkflowID  string          `json:"workflow_id"`
	Status      string          `json:"status"` // running | completed | failed
	ComputedFor string          `json:"computed_for"`
	Kind        string          `json:"kind"`
	Rows        *int            `json:"rows,omitempty"`
	Window      *results.Window `json:"window,omitempty"`
	Error       string          `json:"error,omitempty"`
	StartedAt   *time.Time      `json:"started_at,omitempty"`
	FinishedAt  *time.Time      `json:"finished_at,omitempty"`
}

// POST /v1/experiments/:id/runs starts a manual run computed up to now.
// Two requests within the same second are the same run.
func (h *handlers) startRun(c *gin.Context) {
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	v, err := h.startManualRun(c.Request.Context(), orgID(c), exp.ID)
	if err != nil {
		workflowStartFailed(c, err)
		return
	}
	c.Header("Location", "/v1/experiments/"+exp.ID+"/runs/"+v.RunID)
	c.JSON(http.StatusAccepted, v)
}

// startManualRun starts the manual run of an experiment computed up to
// now; the route and the dashboard's Run now both use it.
func (h *handlers) startManualRun(ctx context.Context, org, experimentID string) (runView, error) {
	key := results.ManualKey(time.Now())
	wid, err := h.workflows.StartResults(ctx, workflows.ExperimentResultsInput{OrgID: org, ExperimentID: experimentID, ComputedFor: key.ComputedFor})
	if err != nil {
		return runView{}, err
	}
	return runView{RunID: key.ComputedFor, WorkflowID: wid, Status: results.StatusRunning, ComputedFor: key.ComputedFor, Kind: key.Kind}, nil
}

// GET /v1/experiments/:id/runs/:run_id tells a run's state. run_id is a
// manual run id or a nightly day.
func (h *handlers) getRun(c *gin.Context) {
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	key, err := results.ParseKey(c.Param("run_id"))
	if err != nil {
		invalid(c, validate.New("run_id", "%v", err))
		return
	}
	v, err := h.runState(c.Request.Context(), orgID(c), exp.ID, key)
	if errors.Is(err, results.ErrRunNotFound) {
		problem(c, http.StatusNotFound, CodeRunNotFound, "no run "+key.ComputedFor+" of this experiment")
		return
	}
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// runState is a run's state: Temporal's when it still knows the workflow,
// else the stored run record; results.ErrRunNotFound when neither knows
// it. The route and the dashboard's run status both use it.
func (h *handlers) runState(ctx context.Context, org, experimentID string, key results.Key) (runView, error) {
	v := runView{RunID: key.ComputedFor, WorkflowID: workflows.ResultsWorkflowID(experimentID, key.ComputedFor), ComputedFor: key.ComputedFor, Kind: key.Kind}
	if h.deps.Temporal != nil {
		desc, err := h.deps.Temporal.DescribeWorkflowExecution(ctx, v.WorkflowID, "")
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
		case err != nil:
			return v, fmt.Errorf("describe %s: %w", v.WorkflowID, err)
		default:
			v.Status = workflowStatus(desc.GetWorkflowExecutionInfo().GetStatus())
		}
	}
	run, err := results.LoadRun(ctx, h.deps.DB, org, experimentID, key.ComputedFor)
	switch {
	case errors.Is(err, results.ErrRunNotFound):
		if v.Status == "" {
			return v, err
		}
	case err != nil:
		return v, err
	default:
		fillRun(&v, run)
	}
	return v, nil
}

// fillRun adds the stored record; its status stands in when Temporal no
// longer knows the workflow.
func fillRun(v *runView, run results.Run) {
	if v.Status == "" {
		v.Status = run.Status
	}
	rows := run.RowCount
	started := run.StartedAt
	v.Rows, v.Error, v.StartedAt, v.FinishedAt = &rows, run.Error, &started, run.FinishedAt
	v.Window = &results.Window{Start: run.WindowStart, End: run.WindowEnd, Days: run.WindowDays, RetentionTruncated: run.RetentionTruncated}
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
