package dashboard

import (
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/results"
)

// sparkDays is how many days the list's traffic sparkline covers.
const sparkDays = 14

type listRow struct {
	experiments.Experiment
	Spark   template.HTML
	Results string // "collecting" or the newest run's label
	LastRun string // computed_for of the newest run, "" when collecting
}

type listData struct {
	Name, Status string
	Statuses     []string
	Rows         []listRow
	Total        int
}

// GET /experiments[?name=&status=]: every experiment of the org.
func (d *Dashboard) listPage(c *gin.Context) {
	ctx := c.Request.Context()
	data := listData{Name: strings.TrimSpace(c.Query("name")), Status: c.Query("status"), Statuses: []string{experiments.StatusDraft, experiments.StatusScheduled, experiments.StatusRunning, experiments.StatusStopped, experiments.StatusShipped}}
	status := data.Status
	if !contains(data.Statuses, status) {
		status, data.Status = "", ""
	}
	list, err := experiments.Store{DB: d.deps.DB}.List(ctx, orgID(c), status)
	if err != nil {
		d.fail(c, err)
		return
	}
	data.Total = len(list)
	to := time.Now().UTC()
	from := to.AddDate(0, 0, 1-sparkDays)
	for _, e := range list {
		if data.Name != "" && !strings.Contains(strings.ToLower(e.Name), strings.ToLower(data.Name)) {
			continue
		}
		days, err := d.deps.Aggregator.Traffic(ctx, orgID(c), e.ID, from, to, variantsOf(e))
		if err != nil {
			d.fail(c, err)
			return
		}
		runs, err := results.AvailableDays(ctx, d.deps.DB, orgID(c), e.ID)
		if err != nil {
			d.fail(c, err)
			return
		}
		row := listRow{Experiment: e, Spark: sparkline(days), Results: "collecting"}
		if len(runs) > 0 {
			row.LastRun, row.Results = runs[0], runLabel(runs[0])
		}
		data.Rows = append(data.Rows, row)
	}
	d.render(c, http.StatusOK, "list", "Experiments", "experiments", data)
}

// variantsOf lists an experiment's variants in allocation order.
func variantsOf(e experiments.Experiment) []string {
	out := make([]string, len(e.Allocation))
	for i, s := range e.Allocation {
		out[i] = s.Variant
	}
	return out
}

// runLabel names a run in words: a nightly day, or a manual run's instant.
func runLabel(computedFor string) string {
	key, err := results.ParseKey(computedFor)
	if err != nil {
		return computedFor
	}
	if key.Kind == results.KindManual {
		return "manual run " + strings.TrimPrefix(computedFor, "manual-")
	}
	return "nightly " + computedFor
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
