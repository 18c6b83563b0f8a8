package dashboard

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/evaluators"
)

// Bounds of the evaluator page.
const (
	evaluationsShown = 50
	spendDays        = 14
)

type evaluatorsView struct {
	Evaluators []evaluators.Evaluator
	Today      map[string]evaluators.Usage
}

// GET /evaluators: the org's online evaluators with today's spend.
func (d *Dashboard) evaluatorsPage(c *gin.Context) {
	ctx := c.Request.Context()
	list, err := evaluators.Store{DB: d.deps.DB}.List(ctx, orgID(c))
	if err != nil {
		d.fail(c, err)
		return
	}
	view := evaluatorsView{Evaluators: list, Today: map[string]evaluators.Usage{}}
	for _, e := range list {
		if view.Today[e.ID], err = evaluators.Used(ctx, d.deps.DB, e.ID, evaluators.Day(time.Now())); err != nil {
			d.fail(c, err)
			return
		}
	}
	d.render(c, http.StatusOK, "evaluators", "Evaluators", "evaluators", view)
}

type evaluatorView struct {
	Ev      evaluators.Evaluator
	Config  string // the spec as JSON (never with the judge's key)
	Page    evaluators.EvaluationPage
	Days    []evaluators.DayUsage
	Status  string // the evaluations shown: "", scored or failed
	NextURL string
}

// GET /evaluators/:id?status=&cursor=: one evaluator's configuration and
// version, its recent evaluations (the judge's reasons, the failures),
// and its spend against the daily budget, today and per day.
func (d *Dashboard) evaluatorPage(c *gin.Context) {
	ctx := c.Request.Context()
	store := evaluators.Store{DB: d.deps.DB}
	ev, err := store.Get(ctx, orgID(c), c.Param("id"))
	if errors.Is(err, evaluators.ErrNotFound) {
		d.message(c, http.StatusNotFound, "No such evaluator", "Your organization has no evaluator with this id.")
		return
	}
	if err != nil {
		d.fail(c, err)
		return
	}
	status := c.Query("status")
	if status != "" && status != evaluators.StatusScored && status != evaluators.StatusFailed {
		d.message(c, http.StatusBadRequest, "Unknown filter", "status is scored, failed or absent.")
		return
	}
	page, err := store.ListEvaluations(ctx, orgID(c), ev.ID, status, c.Query("cursor"), evaluationsShown, time.Now())
	if errors.Is(err, evaluators.ErrBadCursor) {
		d.message(c, http.StatusBadRequest, "Unknown page", "This page link is not one the dashboard made; start from the evaluator's page.")
		return
	}
	if err != nil {
		d.fail(c, err)
		return
	}
	days, err := evaluators.UsedByDay(ctx, d.deps.DB, ev.ID, spendDays, time.Now())
	if err != nil {
		d.fail(c, err)
		return
	}
	config, _ := json.MarshalIndent(ev.Spec, "", "  ")
	view := evaluatorView{Ev: ev, Config: string(config), Page: page, Days: days, Status: status}
	if page.Next != "" {
		view.NextURL = "/evaluators/" + ev.ID + "?status=" + status + "&cursor=" + page.Next
	}
	d.render(c, http.StatusOK, "evaluator", ev.Name, "evaluators", view)
}
