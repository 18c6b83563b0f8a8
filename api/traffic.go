package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/validate"
)

// maxTrafficDays bounds one traffic answer.
const maxTrafficDays = 366

type trafficResponse struct {
	ExperimentID string              `json:"experiment_id"`
	From         string              `json:"from"`
	To           string              `json:"to"`
	Days         []ingest.TrafficDay `json:"days"`
}

// GET /v1/experiments/:id/traffic?from=YYYY-MM-DD&to=YYYY-MM-DD (additive):
// unique exposed users per UTC day and variant. to defaults to today,
// from to the experiment's first day (at most maxTrafficDays before to).
func (h *handlers) traffic(c *gin.Context) {
	ctx := c.Request.Context()
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	var errs validate.Errors
	to := dateParam(c, &errs, "to", time.Now().UTC())
	earliest := to.AddDate(0, 0, 1-maxTrafficDays)
	from := dateParam(c, &errs, "from", latest(exp.CreatedAt.UTC().Truncate(24*time.Hour), earliest))
	if err := errs.Err(); err != nil {
		invalid(c, err)
		return
	}
	switch {
	case from.After(to):
		invalid(c, validate.New("from", "must not be after to"))
		return
	case from.Before(earliest):
		invalid(c, validate.New("from", "must be at most %d days before to", maxTrafficDays-1))
		return
	}
	variants := make([]string, len(exp.Allocation))
	for i, s := range exp.Allocation {
		variants[i] = s.Variant
	}
	days, err := h.deps.Aggregator.Traffic(ctx, orgID(c), exp.ID, from, to, variants)
	if err != nil {
		internalError(c, err)
		return
	}
	c.JSON(http.StatusOK, trafficResponse{ExperimentID: exp.ID, From: from.Format(time.DateOnly), To: to.Format(time.DateOnly), Days: days})
}

// dateParam reads an ISO date query parameter (UTC midnight), or def.
func dateParam(c *gin.Context, errs *validate.Errors, name string, def time.Time) time.Time {
	v := c.Query(name)
	if v == "" {
		return def.Truncate(24 * time.Hour)
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		errs.Add(name, "must be a date like 2026-11-20")
	}
	return d
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
