package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/results"
	"github.com/expd/expd/usecases"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/workflowclient"
	"github.com/expd/expd/workflows"
)

// runRequest is the optional body of POST /v1/experiments/:id/runs.
type runRequest struct {
	Day *string `json:"day"`
}

// POST /v1/experiments/:id/runs starts a manual run computed up to now
// (two requests within the same second are the same run), or, with
// {"day": "YYYY-MM-DD"} (admin), computes or recomputes that nightly day
// under the schedule's workflow id.
func (h *handlers) startRun(c *gin.Context) {
	var req runRequest
	if !decodeOptionalJSON(c, &req) {
		return
	}
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	if req.Day != nil {
		h.startDayRun(c, exp.ID, *req.Day)
		return
	}
	v, err := h.cases.StartManualRun(c.Request.Context(), orgID(c), exp.ID)
	if err != nil {
		workflowStartFailed(c, err)
		return
	}
	c.Header("Location", "/v1/experiments/"+exp.ID+"/runs/"+v.RunID)
	c.JSON(http.StatusAccepted, v)
}

// startDayRun computes a finished nightly day now. A run of the same day
// that is still running (the schedule's or another request's) is refused
// with 409 so that one day is never computed twice at once.
func (h *handlers) startDayRun(c *gin.Context, experimentID, day string) {
	if !session(c).IsAdmin() {
		problem(c, http.StatusForbidden, CodeAdminRequired, "computing a nightly day is restricted to org admins")
		return
	}
	key, err := parseFinishedDay("day", day, time.Now())
	if err != nil {
		invalid(c, err)
		return
	}
	wid, err := h.workflows.StartDayRun(c.Request.Context(), workflows.ExperimentResultsInput{OrgID: orgID(c), ExperimentID: experimentID, ComputedFor: key.ComputedFor})
	if errors.Is(err, workflowclient.ErrAlreadyRunning) {
		problem(c, http.StatusConflict, CodeRunInProgress, "a run of "+key.ComputedFor+" is already running (workflow "+wid+"); follow it at GET /v1/experiments/"+experimentID+"/runs/"+key.ComputedFor+" and start again once it has ended to recompute")
		return
	}
	if err != nil {
		workflowStartFailed(c, err)
		return
	}
	c.Header("Location", "/v1/experiments/"+experimentID+"/runs/"+key.ComputedFor)
	c.JSON(http.StatusAccepted, usecases.StartedRun(key, wid))
}

// maxBackfillDays bounds one backfill; longer histories take several.
const maxBackfillDays = 366

// backfillRequest is the body of POST /v1/runs/backfill.
type backfillRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// POST /v1/runs/backfill {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}
// (admin): computes every nightly day of the range, oldest first, for
// every running experiment of the org, as the schedule would have. Days
// that already completed are left as they are; failed ones run again.
func (h *handlers) startBackfill(c *gin.Context) {
	var req backfillRequest
	if !decodeJSON(c, &req) {
		return
	}
	now := time.Now()
	var errs validate.Errors
	from, errFrom := parseFinishedDay("from", req.From, now)
	to, errTo := parseFinishedDay("to", req.To, now)
	for _, err := range []error{errFrom, errTo} {
		for _, f := range validate.Fields(err) {
			errs.Add(f.Field, "%s", f.Reason)
		}
	}
	if errFrom == nil && errTo == nil {
		switch days := int(to.WindowEnd.Sub(from.WindowEnd).Hours() / 24); {
		case days < 0:
			errs.Add("to", "must not be before from")
		case days >= maxBackfillDays:
			errs.Add("to", "a backfill covers at most %d days", maxBackfillDays)
		}
	}
	if err := errs.Err(); err != nil {
		invalid(c, err)
		return
	}
	wid, err := h.workflows.StartBackfill(c.Request.Context(), workflows.DailyResultsInput{Day: from.ComputedFor, LastDay: to.ComputedFor, OrgID: orgID(c)})
	if errors.Is(err, workflowclient.ErrAlreadyRunning) {
		problem(c, http.StatusConflict, CodeBackfillInProgress, "this range is already being backfilled (workflow "+wid+")")
		return
	}
	if err != nil {
		workflowStartFailed(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"workflow_id": wid, "from": from.ComputedFor, "to": to.ComputedFor, "status": results.StatusRunning})
}

// parseFinishedDay reads a nightly day (YYYY-MM-DD) whose UTC day has
// ended: today and future days have no complete window yet.
func parseFinishedDay(field, s string, now time.Time) (results.Key, error) {
	key, err := results.ParseKey(s)
	switch {
	case err != nil || key.Kind != results.KindNightly:
		return key, validate.New(field, "must be a UTC day YYYY-MM-DD")
	case key.WindowEnd.After(now):
		return key, validate.New(field, "must be a day that has ended (before %s UTC)", now.UTC().Format("2006-01-02"))
	}
	return key, nil
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
	v, err := h.cases.RunState(c.Request.Context(), orgID(c), exp.ID, key)
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
