package api

import (
	"errors"
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
	ctx := c.Request.Context()
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	key := results.ManualKey(time.Now())
	wid, err := h.workflows.StartResults(ctx, workflows.ExperimentResultsInput{OrgID: orgID(c), ExperimentID: exp.ID, ComputedFor: key.ComputedFor})
	if err != nil {
		workflowStartFailed(c, err)
		return
	}
	c.Header("Location", "/v1/experiments/"+exp.ID+"/runs/"+key.ComputedFor)
	c.JSON(http.StatusAccepted, runView{RunID: key.ComputedFor, WorkflowID: wid, Status: results.StatusRunning, ComputedFor: key.ComputedFor, Kind: key.Kind})
}

// GET /v1/experiments/:id/runs/:run_id tells a run's state: Temporal's
// when it still knows the workflow, else the stored run record. run_id is
// a manual run id or a nightly day.
func (h *handlers) getRun(c *gin.Context) {
	ctx := c.Request.Context()
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	key, err := results.ParseKey(c.Param("run_id"))
	if err != nil {
		invalid(c, validate.New("run_id", "%v", err))
		return
	}
	v := runView{RunID: key.ComputedFor, WorkflowID: workflows.ResultsWorkflowID(exp.ID, key.ComputedFor), ComputedFor: key.ComputedFor, Kind: key.Kind}
	if h.deps.Temporal != nil {
		desc, err := h.deps.Temporal.DescribeWorkflowExecution(ctx, v.WorkflowID, "")
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
		case err != nil:
			internalError(c, err)
			return
		default:
			v.Status = workflowStatus(desc.GetWorkflowExecutionInfo().GetStatus())
		}
	}
	run, err := results.LoadRun(ctx, h.deps.DB, orgID(c), exp.ID, key.ComputedFor)
	switch {
	case errors.Is(err, results.ErrRunNotFound):
		if v.Status == "" {
			problem(c, http.StatusNotFound, CodeRunNotFound, "no run "+key.ComputedFor+" of this experiment")
			return
		}
	case err != nil:
		internalError(c, err)
		return
	default:
		fillRun(&v, run)
	}
	c.JSON(http.StatusOK, v)
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
