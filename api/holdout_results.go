package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/results"
	"github.com/expd/expd/usecases"
	"github.com/expd/expd/workflows"
)

// holdoutResultsView is the body of GET /v1/holdouts/:id/results: the
// latest run of the holdout, its rows shaped as an experiment's
// (docs/targeting.md, "Holdout results"): control_variant holdout,
// variant exposed, so an effect reads as what the experiments added.
type holdoutResultsView struct {
	HoldoutID string  `json:"holdout_id"`
	Percent   float64 `json:"percent"`
	// Experiments are the experiments in the holdout's scope now.
	Experiments   []holdoutScopeExperiment `json:"experiments"`
	ComputedFor   string                   `json:"computed_for"`
	Kind          string                   `json:"kind"`
	AvailableDays []string                 `json:"available_days"`
	Version       int                      `json:"holdout_version"`
	Window        results.Window           `json:"window"`
	SRMGate       string                   `json:"srm_gate"`
	SRM           json.RawMessage          `json:"srm"`
	Preliminary   bool                     `json:"preliminary"`
	ComputedAt    *time.Time               `json:"computed_at"`
	Metrics       []metricResultView       `json:"metrics"`
}

type holdoutScopeExperiment struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

// GET /v1/holdouts/:id/results (admin): the holdout's latest run; 404
// results_collecting before its first, saying why.
func (h *handlers) getHoldoutResults(c *gin.Context) {
	ctx := c.Request.Context()
	ho, err := h.holdoutStore().Get(ctx, orgID(c), c.Param("id"))
	if err != nil {
		h.holdoutError(c, err)
		return
	}
	days, ok := h.resultDays(c, ho.ID, "start a run with POST /v1/holdouts/"+ho.ID+"/runs (the nightly pipeline computes one every day)", "")
	if !ok {
		return
	}
	s, err := h.loadStoredRun(ctx, orgID(c), ho.ID, days[0])
	if err != nil {
		internalError(c, err)
		return
	}
	run, window := s.run, s.window()
	window.AllExperiments = true
	v := holdoutResultsView{HoldoutID: ho.ID, Percent: ho.Percent, Experiments: []holdoutScopeExperiment{},
		ComputedFor: run.ComputedFor, Kind: run.Kind, AvailableDays: days, Version: run.ExperimentVersion,
		Window: window, SRMGate: s.srmGate, SRM: json.RawMessage(run.SRM), ComputedAt: run.FinishedAt,
		Metrics: s.metrics, Preliminary: s.preliminary}
	list, err := experiments.Store{DB: h.deps.DB}.List(ctx, orgID(c), "")
	if err != nil {
		internalError(c, err)
		return
	}
	for _, e := range list {
		layer := ""
		if e.Layer != nil {
			layer = e.Layer.ID
		}
		if ho.Covers(layer) {
			v.Experiments = append(v.Experiments, holdoutScopeExperiment{ID: e.ID, Name: e.Name, Status: e.Status})
		}
	}
	c.JSON(http.StatusOK, v)
}

// POST /v1/holdouts/:id/runs (admin): a manual run of the holdout's
// results up to now, workflow results/holdout-<id>/manual-<instant>.
func (h *handlers) startHoldoutRun(c *gin.Context) {
	ho, err := h.holdoutStore().Get(c.Request.Context(), orgID(c), c.Param("id"))
	if err != nil {
		h.holdoutError(c, err)
		return
	}
	key := results.ManualKey(time.Now())
	wid, err := h.workflows.StartResults(c.Request.Context(), workflows.ExperimentResultsInput{OrgID: orgID(c), ExperimentID: ho.ID, ComputedFor: key.ComputedFor, Holdout: true})
	if err != nil {
		workflowStartFailed(c, err)
		return
	}
	c.JSON(http.StatusAccepted, usecases.StartedRun(key, wid))
}
