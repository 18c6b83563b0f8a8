package dashboard

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
)

type historyEntry struct {
	Version int
	Exp     experiments.Experiment
	Diff    []diffLine
	First   bool
}

// GET /experiments/:id/history: every stored version, newest first, each
// with its diff against the one before.
func (d *Dashboard) historyPage(c *gin.Context) {
	exp, ok := d.experimentParam(c)
	if !ok {
		return
	}
	store := experiments.Store{DB: d.deps.DB}
	versions := make([]experiments.Experiment, exp.Version+1)
	for v := 1; v <= exp.Version; v++ {
		e, err := store.GetVersion(c.Request.Context(), orgID(c), exp.ID, v)
		if err != nil {
			d.fail(c, err)
			return
		}
		versions[v] = e
	}
	var entries []historyEntry
	for v := exp.Version; v >= 1; v-- {
		h := historyEntry{Version: v, Exp: versions[v], First: v == 1}
		if v > 1 {
			h.Diff = configDiff(versions[v-1].Config, versions[v].Config)
		}
		entries = append(entries, h)
	}
	d.render(c, http.StatusOK, "history", "History of "+exp.Name, "experiments", struct {
		Exp     experiments.Experiment
		Entries []historyEntry
	}{exp, entries})
}
