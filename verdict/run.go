package verdict

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/results"
)

// Load assembles the Input of a stored run: its rows, its SRM and the
// config version it analysed (metrics resolved, so built-ins carry their
// goals). The same run gives the same verdict.
func Load(ctx context.Context, db *gorm.DB, run results.Run, rows []results.Row) (Input, error) {
	exp, err := experiments.Store{DB: db}.GetVersion(ctx, run.OrgID, run.ExperimentID, run.ExperimentVersion)
	switch {
	case errors.Is(err, experiments.ErrNotFound):
		// A run whose version is gone (or was never recorded) still has its
		// rows: without metric roles the verdict says no primary is set.
	case err != nil:
		return Input{}, fmt.Errorf("load version %d of %s: %w", run.ExperimentVersion, run.ExperimentID, err)
	}
	resolved, err := metrics.Resolve(ctx, metrics.Store{DB: db}, run.OrgID, exp.Metrics)
	if err != nil {
		return Input{}, err
	}
	var srm results.SRMSummary
	if len(run.SRM) > 0 {
		if err := json.Unmarshal(run.SRM, &srm); err != nil {
			return Input{}, fmt.Errorf("decode srm of run %s: %w", run.ComputedFor, err)
		}
	}
	in := Input{Control: exp.ControlVariant(), SRMGate: srm.Gate, Rows: rows, WindowDays: run.WindowDays,
		PlannedDays: plannedDays(exp.Config, run.WindowStart)}
	for _, s := range exp.Allocation {
		if s.Variant != in.Control {
			in.Variants = append(in.Variants, s.Variant)
		}
	}
	for _, m := range resolved {
		in.Metrics = append(in.Metrics, m.Metric)
	}
	return in, nil
}

// Goal is the goal of the named metric of in ("" when unset).
func (in Input) Goal(metric string) string {
	for _, m := range in.Metrics {
		if m.Name == metric {
			return m.Goal
		}
	}
	return ""
}

// OfRun is the verdict of a stored run: the one stored with it, else
// (a run published before verdicts existed) decided now from in.
func OfRun(run results.Run, in Input) (Verdict, error) {
	v, ok, err := Stored(run)
	if err != nil || ok {
		return v, err
	}
	return Decide(in), nil
}

// Stored reads a run's stored verdict; ok is false for a run without one
// (published before verdicts existed, or not yet published).
func Stored(run results.Run) (v Verdict, ok bool, err error) {
	if len(run.Verdict) == 0 || string(run.Verdict) == "null" {
		return Verdict{}, false, nil
	}
	if err := json.Unmarshal(run.Verdict, &v); err != nil {
		return Verdict{}, false, fmt.Errorf("decode verdict of run %s: %w", run.ComputedFor, err)
	}
	return v, true, nil
}

// plannedDays is the experiment's planned duration in days from the
// window's start: to planned_end_date (the end of that UTC day), else to
// stop_at; 0 when neither is set.
func plannedDays(cfg experiments.Config, start time.Time) int {
	var end time.Time
	if d, err := time.Parse(time.DateOnly, cfg.PlannedEndDate); err == nil {
		end = d.AddDate(0, 0, 1)
	} else if cfg.StopAt != nil {
		end = *cfg.StopAt
	}
	if end.IsZero() || !end.After(start) {
		return 0
	}
	return int(math.Ceil(end.Sub(start).Hours() / 24))
}

func decodeAnalysis(r results.Row, a *results.RowAnalysis) error {
	if len(r.Analysis) == 0 || string(r.Analysis) == "null" {
		return nil
	}
	return json.Unmarshal(r.Analysis, a)
}
