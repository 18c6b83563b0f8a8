package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/results"
	"github.com/expd/expd/usecases"
)

// POST /experiments/:id/runs: Run now. Starts a manual run through the
// API's own start function, then shows the results page, which follows
// the run until it completes.
func (d *Dashboard) runNow(c *gin.Context) {
	exp, ok := d.experimentParam(c)
	if !ok {
		return
	}
	run, err := d.deps.UseCases.StartManualRun(c.Request.Context(), orgID(c), exp.ID)
	if err != nil {
		d.deps.Logger.ErrorContext(c.Request.Context(), "dashboard run now", "experiment", exp.ID, "error", err)
		d.message(c, http.StatusServiceUnavailable, "The run could not start",
			"The server could not start a results run (the workflow service may be unreachable). Try again in a moment.")
		return
	}
	c.Redirect(http.StatusSeeOther, "/experiments/"+exp.ID+"?pending="+url.QueryEscape(run.RunID))
}

type runStatusBody struct {
	Status string `json:"status"`
	Text   string `json:"text"`
}

// GET /experiments/:id/runs/:run_id/status: the run's state for the
// page's poller, as JSON.
func (d *Dashboard) runStatus(c *gin.Context) {
	exp, ok := d.experimentParam(c)
	if !ok {
		return
	}
	run, err := d.runState(c.Request.Context(), orgID(c), exp.ID, c.Param("run_id"))
	switch {
	case errors.Is(err, results.ErrRunNotFound):
		c.JSON(http.StatusNotFound, runStatusBody{Status: "unknown", Text: "No such run."})
		return
	case err != nil:
		d.deps.Logger.ErrorContext(c.Request.Context(), "dashboard run status", "error", err)
		c.JSON(http.StatusServiceUnavailable, runStatusBody{Status: "unknown", Text: "Run status unavailable; retrying."})
		return
	}
	text := "Run " + run.RunID + " is " + run.Status + "."
	if run.Error != "" {
		text = "Run " + run.RunID + " failed: " + run.Error
	}
	c.JSON(http.StatusOK, runStatusBody{Status: run.Status, Text: text})
}

// runState tells the state of the run named runID; results.ErrRunNotFound
// for an unknown run or a runID that names none.
func (d *Dashboard) runState(ctx context.Context, org, experimentID, runID string) (usecases.Run, error) {
	key, err := results.ParseKey(runID)
	if err != nil {
		return usecases.Run{}, results.ErrRunNotFound
	}
	return d.deps.UseCases.RunState(ctx, org, experimentID, key)
}
