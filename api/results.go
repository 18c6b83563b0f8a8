package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/phases"
	"github.com/expd/expd/results"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/verdict"
)

// resultsView is the body of GET /v1/experiments/:id/results.
type resultsView struct {
	ExperimentID      string          `json:"experiment_id"`
	ComputedFor       string          `json:"computed_for"`
	Kind              string          `json:"kind"`
	AvailableDays     []string        `json:"available_days"`
	ExperimentVersion int             `json:"experiment_version"`
	Window            results.Window  `json:"window"`
	SRMGate           string          `json:"srm_gate"`
	SRM               json.RawMessage `json:"srm"`
	// Phases: the allocation's phases over the window (docs/results.md,
	// "Phases"), derived from the stored versions.
	Phases      []experiments.Phase `json:"phases"`
	Preliminary bool                `json:"preliminary"`
	ComputedAt  *time.Time          `json:"computed_at"`
	// OrphanScores: the run's scores of its score metrics whose call
	// never arrived (absent without score metrics; docs/quality.md).
	OrphanScores *int64 `json:"orphan_scores,omitempty"`
	// Verdict: ship, keep_running or stop (docs/results.md, "Verdict").
	Verdict verdict.Verdict    `json:"verdict"`
	Metrics []metricResultView `json:"metrics"`
}

// metricResultView is one MetricResult: a metric, a treatment arm against
// control.
type metricResultView struct {
	Metric         string `json:"metric"`
	Goal           string `json:"goal,omitempty"`
	MetricVersion  int    `json:"metric_version"`
	Category       string `json:"category"`
	Kind           string `json:"kind"`
	Origin         string `json:"origin"`
	Variant        string `json:"variant"`
	ControlVariant string `json:"control_variant"`

	Test      string  `json:"test"`
	Statistic float64 `json:"statistic"`
	PValue    float64 `json:"p_value"`
	PValueFDR float64 `json:"p_value_fdr"`
	Effect    float64 `json:"effect"`
	CILow     float64 `json:"ci_low"`
	CIHigh    float64 `json:"ci_high"`
	// RelativeLift is null when undefined, with the reason beside it.
	RelativeLift          *liftView `json:"relative_lift"`
	RelativeLiftUndefined string    `json:"relative_lift_undefined,omitempty"`

	NPerArm            map[string]int64 `json:"n_per_arm"`
	SRMP               float64          `json:"srm_p"`
	PermutationsUsed   int              `json:"permutations_used"`
	SampleCapUsed      bool             `json:"sample_cap_used"`
	WindowDays         int              `json:"window_days"`
	RetentionTruncated bool             `json:"retention_truncated"`
	Preliminary        bool             `json:"preliminary"`
	Undefined          string           `json:"undefined,omitempty"`
	Distribution       json.RawMessage  `json:"distribution"`

	// Judgement: the row read against its goal on the interval it shows
	// (the badge; verdict.Judge).
	Judgement verdict.Judgement `json:"judgement"`

	// Sequential: the headline p_value, ci_low, ci_high and relative_lift
	// are always-valid; the analysis fields follow flattened (docs/results.md).
	Sequential bool `json:"sequential"`
	results.RowAnalysis
}

type liftView struct {
	Value  float64 `json:"value"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// GET /v1/experiments/:id/results[?day=YYYY-MM-DD|manual-<instant>]
func (h *handlers) getResults(c *gin.Context) {
	exp, ok := h.experimentParam(c)
	if !ok {
		return
	}
	var requested string
	if day, ok := c.GetQuery("day"); ok {
		key, err := results.ParseKey(day)
		if err != nil {
			invalid(c, validate.New("day", "%v", err))
			return
		}
		requested = key.ComputedFor
	}
	days, ok := h.resultDays(c, exp.ID, "the daily pipeline (or a manual run) has not produced any for this experiment",
		"GET /v1/experiments/"+exp.ID+"/runs/")
	if !ok {
		return
	}
	computedFor := days[0]
	if requested != "" {
		if !contains(days, requested) {
			problem(c, http.StatusNotFound, CodeRunNotFound, "no results computed for "+requested+"; see available_days of the latest results")
			return
		}
		computedFor = requested
	}
	view, err := h.resultsOf(c, exp.ID, computedFor)
	if err != nil {
		internalError(c, err)
		return
	}
	view.AvailableDays = days
	c.JSON(http.StatusOK, view)
}

// resultDays lists the days with results of a subject (an experiment,
// or a holdout), newest first. With none it has answered 404
// results_collecting, saying why (collectingDetail), and ok is false; so
// too on an error.
func (h *handlers) resultDays(c *gin.Context, subjectID, noRun, follow string) (days []string, ok bool) {
	days, err := results.AvailableDays(c.Request.Context(), h.deps.DB, orgID(c), subjectID)
	if err != nil {
		internalError(c, err)
		return nil, false
	}
	if len(days) > 0 {
		return days, true
	}
	detail, err := h.collectingDetail(c, subjectID, noRun, follow)
	if err != nil {
		internalError(c, err)
		return nil, false
	}
	writeProblem(c, Problem{Status: http.StatusNotFound, Code: CodeResultsCollecting, Hint: "collecting", Detail: detail})
	return nil, false
}

// collectingDetail says why a subject (an experiment, or a holdout) has
// no results yet, from its latest run: none yet (noRun), still running
// (followed at follow + the run's key, when follow is set), failed, or
// completed without rows (and why, with what it counted and left out).
func (h *handlers) collectingDetail(c *gin.Context, subjectID, noRun, follow string) (string, error) {
	run, err := results.LatestRun(c.Request.Context(), h.deps.DB, orgID(c), subjectID)
	if errors.Is(err, results.ErrRunNotFound) {
		return "no results yet: " + noRun, nil
	}
	if err != nil {
		return "", err
	}
	latest := "no results yet: the latest run " + run.ComputedFor
	switch run.Status {
	case results.StatusRunning:
		if follow == "" {
			return latest + " is still running", nil
		}
		return latest + " is still running; follow it at " + follow + run.ComputedFor, nil
	case results.StatusFailed:
		return latest + " failed: " + run.Error, nil
	}
	detail := latest + " completed with no result rows"
	if run.NoResults != "" {
		detail += ": " + run.NoResults
	}
	cov, ok, err := run.DecodeCoverage()
	if err != nil {
		return "", err
	}
	if ok {
		detail += "; " + cov.Summary()
	}
	return detail, nil
}

// storedRun is one stored run (of an experiment or a holdout) and its
// rows, as the results routes serve them.
type storedRun struct {
	run         results.Run
	rows        []results.Row
	metrics     []metricResultView
	srmGate     string
	preliminary bool // a row of the run is
}

// loadStoredRun reads the run computedFor of subjectID (an experiment or
// a holdout of the org) and its rows.
func (h *handlers) loadStoredRun(ctx context.Context, org, subjectID, computedFor string) (storedRun, error) {
	var s storedRun
	var err error
	if s.run, err = results.LoadRun(ctx, h.deps.DB, org, subjectID, computedFor); err != nil {
		return s, err
	}
	if s.rows, err = results.LoadRows(ctx, h.deps.DB, org, subjectID, computedFor); err != nil {
		return s, err
	}
	var srm struct {
		Gate string `json:"gate"`
	}
	if err := json.Unmarshal(s.run.SRM, &srm); err != nil {
		return s, errors.Join(errors.New("decode srm of run "+computedFor), err)
	}
	s.srmGate = srm.Gate
	s.metrics = make([]metricResultView, len(s.rows))
	for i, r := range s.rows {
		if s.metrics[i], err = metricResult(r); err != nil {
			return s, err
		}
		s.preliminary = s.preliminary || r.Preliminary
	}
	return s, nil
}

// window is the run's window as it was computed.
func (s storedRun) window() results.Window {
	return results.Window{Start: s.run.WindowStart, End: s.run.WindowEnd, Days: s.run.WindowDays, RetentionTruncated: s.run.RetentionTruncated}
}

func (h *handlers) resultsOf(c *gin.Context, experimentID, computedFor string) (resultsView, error) {
	ctx := c.Request.Context()
	s, err := h.loadStoredRun(ctx, orgID(c), experimentID, computedFor)
	if err != nil {
		return resultsView{}, err
	}
	run, rows := s.run, s.rows
	v := resultsView{
		ExperimentID: experimentID, ComputedFor: computedFor, Kind: run.Kind, ExperimentVersion: run.ExperimentVersion,
		Window: s.window(), SRMGate: s.srmGate, SRM: json.RawMessage(run.SRM), ComputedAt: run.FinishedAt,
		Metrics: s.metrics, Preliminary: s.preliminary,
	}
	if v.Phases, err = phases.Of(ctx, h.deps.DB, orgID(c), experimentID, run.WindowStart, run.WindowEnd); err != nil {
		return resultsView{}, err
	}
	cov, _, err := run.DecodeCoverage()
	if err != nil {
		return resultsView{}, err
	}
	v.OrphanScores = cov.OrphanScores
	in, err := verdict.Load(ctx, h.deps.DB, run, rows)
	if err != nil {
		return resultsView{}, err
	}
	if v.Verdict, err = verdict.OfRun(run, in); err != nil {
		return resultsView{}, err
	}
	for i, r := range rows {
		v.Metrics[i].Goal = in.Goal(r.Metric)
		v.Metrics[i].Judgement = verdict.Judge(r, v.Metrics[i].Goal)
	}
	return v, nil
}

func metricResult(r results.Row) (metricResultView, error) {
	v := metricResultView{
		Metric: r.Metric, MetricVersion: r.MetricVersion, Category: r.Category, Kind: r.Kind, Origin: r.Origin,
		Variant: r.Variant, ControlVariant: r.ControlVariant,
		Test: r.Test, Statistic: r.Statistic, PValue: r.PValue, PValueFDR: r.PValueFDR,
		Effect: r.Effect, CILow: r.CILow, CIHigh: r.CIHigh, RelativeLiftUndefined: r.RelUndefinedReason,
		NPerArm: map[string]int64{r.ControlVariant: r.NControl, r.Variant: r.NTreatment},
		SRMP:    r.SRMP, PermutationsUsed: r.PermutationsUsed, SampleCapUsed: r.SampleCapUsed,
		WindowDays: r.WindowDays, RetentionTruncated: r.RetentionTruncated, Preliminary: r.Preliminary,
		Undefined: r.Undefined, Distribution: json.RawMessage(r.Distribution),
	}
	if r.RelLift != nil && r.RelCILow != nil && r.RelCIHigh != nil {
		v.RelativeLift = &liftView{Value: *r.RelLift, CILow: *r.RelCILow, CIHigh: *r.RelCIHigh}
	}
	v.Sequential = r.Sequential
	// Rows from before always-valid inference have no analysis: they were
	// fixed-horizon, without CUPED or crossover accounting.
	v.RowAnalysis = results.RowAnalysis{Inference: "fixed_horizon"}
	if len(r.Analysis) > 0 && string(r.Analysis) != "null" {
		if err := json.Unmarshal(r.Analysis, &v.RowAnalysis); err != nil {
			return v, errors.Join(errors.New("decode analysis of "+r.Metric+"/"+r.Variant), err)
		}
	}
	return v, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
