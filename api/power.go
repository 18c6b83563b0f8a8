package api

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/power"
	"github.com/expd/expd/validate"
)

// GET /v1/experiments/:id/power?days=N|mde=X[&metric=NAME]: the minimum
// detectable effect after N more days, or the further days a relative
// change X needs, per primary metric (or the named one) and treatment arm,
// from the experiment's own data (package power, docs/power.md).
func (h *handlers) experimentPower(c *gin.Context) {
	q, ok := powerQuestion(c)
	if !ok {
		return
	}
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	a, err := h.powerReader().ForExperiment(c.Request.Context(), orgID(c), exp, q, c.Query("metric"), time.Now().UTC())
	h.answerPower(c, a, err)
}

// POST /v1/power?days=N|mde=X[&metric=NAME] with an ExperimentConfig
// body (the create form's, before any data): the same answer, from the
// org's recent data for the config's metrics.
func (h *handlers) draftPower(c *gin.Context) {
	q, ok := powerQuestion(c)
	if !ok {
		return
	}
	cfg, ok := decodeConfig(c, false)
	if !ok {
		return
	}
	if err := cfg.Validate(); err != nil {
		invalid(c, err)
		return
	}
	a, err := h.powerReader().ForDraft(c.Request.Context(), orgID(c), &cfg, q, c.Query("metric"), time.Now().UTC())
	h.answerPower(c, a, err)
}

func (h *handlers) powerReader() power.Reader {
	return power.Reader{DB: h.deps.DB, Aggregator: h.deps.Aggregator}
}

func (h *handlers) answerPower(c *gin.Context, a power.Answer, err error) {
	if err != nil {
		h.experimentError(c, err) // field errors (an unknown metric) are 400s
		return
	}
	c.JSON(http.StatusOK, a)
}

// powerQuestion reads days or mde (not both; neither: days =
// power.DefaultDays).
func powerQuestion(c *gin.Context) (power.Question, bool) {
	days, hasDays := c.GetQuery("days")
	mde, hasMDE := c.GetQuery("mde")
	var errs validate.Errors
	var q power.Question
	switch {
	case hasDays && hasMDE:
		errs.Add("mde", "ask for days or mde, not both")
	case hasMDE:
		x, err := strconv.ParseFloat(mde, 64)
		if err != nil || !(x > 0 && x <= power.MaxMDE) || math.IsInf(x, 0) {
			errs.Add("mde", "must be a positive relative change (a fraction of the control mean: 0.02 is 2%%), at most %g", power.MaxMDE)
		}
		q.MDE = x
	case hasDays:
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > power.MaxDays {
			errs.Add("days", "must be a whole number of days from 1 to %d", power.MaxDays)
		}
		q.Days = n
	default:
		q.Days = power.DefaultDays
	}
	if err := errs.Err(); err != nil {
		invalid(c, err)
		return q, false
	}
	return q, true
}
