package power

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/results"
	"github.com/expd/expd/validate"
)

// Of the org's recent data a draft is planned from: the days read and how
// many of its most recently created started experiments.
const (
	RecentDays        = 14
	MaxRecentExpts    = 20
	hoursPerDay       = 24
	minDataDays       = 1.0
	retentionForDraft = RecentDays
)

// Reader reads what a power answer needs.
type Reader struct {
	DB         *gorm.DB
	Aggregator results.Aggregator
}

// Selected returns the metrics a question is about: the named one
// (any category), else every primary metric. An unknown name is a field
// error on field.
func Selected(cfg *experiments.Config, name, field string) ([]experiments.Metric, error) {
	var out []experiments.Metric
	for _, m := range cfg.Metrics {
		if (name == "" && m.Category == "primary") || (name != "" && m.Name == name) {
			out = append(out, m)
		}
	}
	if name != "" && len(out) == 0 {
		return nil, validate.New(field, "%q is not a metric of the experiment", name)
	}
	return out, nil
}

// ForExperiment answers q for exp from its own data up to now; an
// experiment that has not started yet (draft, scheduled) has none and is
// planned as a draft. metric names one metric ("" for the primaries).
func (r Reader) ForExperiment(ctx context.Context, orgID string, exp experiments.Experiment, q Question, metric string, now time.Time) (Answer, error) {
	selected, err := Selected(&exp.Config, metric, "metric")
	if err != nil {
		return Answer{}, err
	}
	if exp.Status == experiments.StatusDraft || exp.Status == experiments.StatusScheduled {
		a, err := r.forConfig(ctx, orgID, &exp.Config, selected, q, now)
		a.ExperimentID = exp.ID
		return a, err
	}
	planned, err := results.LoadDesign(ctx, r.DB, orgID, exp.ID, now)
	if err != nil {
		return Answer{}, err
	}
	d := planned.Design
	ms := make([]metrics.Resolved, 0, len(selected))
	for _, m := range d.Metrics {
		if slices.ContainsFunc(selected, func(s experiments.Metric) bool { return s.Name == m.Name }) {
			ms = append(ms, m)
		}
	}
	data := Data{Source: SourceExperiment, Metrics: ms, Control: d.Control, Arms: d.Allocation, Days: minDataDays}
	data.NStar, data.NStarSource = exp.NStar()
	if planned.Skip == "" && !d.Window.Empty() {
		data.Sample, _, err = r.Aggregator.Aggregate(ctx, orgID, exp.ID, d.Window, d.Arms(), ms, now, nil)
		if err != nil {
			return Answer{}, fmt.Errorf("power: aggregate experiment %s: %w", exp.ID, err)
		}
		data.Days = math.Max(minDataDays, d.Window.End.Sub(d.Window.Start).Hours()/hoursPerDay)
		for _, a := range data.Sample.Arms {
			data.Users += a.Exposed()
		}
	}
	a := Compute(data, q, inferenceOf(&exp.Config))
	a.ExperimentID = exp.ID
	return a, nil
}

// ForDraft answers q for a config that has no data yet (POST /v1/power):
// its metrics' variance and the traffic come from the org's recent data.
func (r Reader) ForDraft(ctx context.Context, orgID string, cfg *experiments.Config, q Question, metric string, now time.Time) (Answer, error) {
	selected, err := Selected(cfg, metric, "metric")
	if err != nil {
		return Answer{}, err
	}
	return r.forConfig(ctx, orgID, cfg, selected, q, now)
}

func (r Reader) forConfig(ctx context.Context, orgID string, cfg *experiments.Config, selected []experiments.Metric, q Question, now time.Time) (Answer, error) {
	ms, err := metrics.Resolve(ctx, metrics.Store{DB: r.DB}, orgID, selected)
	if err != nil {
		return Answer{}, err
	}
	data, err := r.recent(ctx, orgID, ms, now)
	if err != nil {
		return Answer{}, err
	}
	data.Control, data.Arms = cfg.ControlVariant(), cfg.Allocation
	data.NStar, data.NStarSource = cfg.NStar()
	return Compute(data, q, inferenceOf(cfg)), nil
}

// recent pools the per-user values of ms over the org's started
// experiments in the last RecentDays days (at most MaxRecentExpts, the
// most recently created: a user of several counts once per experiment,
// each having measured the user apart), and takes the traffic from
// RecentUsers.
func (r Reader) recent(ctx context.Context, orgID string, ms []metrics.Resolved, now time.Time) (Data, error) {
	data := Data{Source: SourceOrgRecent, Metrics: ms, Days: RecentDays}
	pooled := &results.Arm{Values: make([][]float64, len(ms)), Den: make([][]float64, len(ms))}
	data.Pooled = pooled
	list, err := experiments.Store{DB: r.DB}.List(ctx, orgID, "")
	if err != nil {
		return data, err
	}
	earliest := now
	read := 0
	for _, e := range list { // newest first
		if e.Status == experiments.StatusDraft || e.Status == experiments.StatusScheduled {
			continue
		}
		w := results.NewWindow(e.CreatedAt, now, retentionForDraft)
		if w.Empty() {
			continue
		}
		if read++; read > MaxRecentExpts {
			break
		}
		arms := make([]string, len(e.Allocation))
		for i, s := range e.Allocation {
			arms[i] = s.Variant
		}
		s, _, err := r.Aggregator.Aggregate(ctx, orgID, e.ID, w, arms, ms, now, nil)
		if err != nil {
			return data, fmt.Errorf("power: aggregate recent experiment %s: %w", e.ID, err)
		}
		if w.Start.Before(earliest) {
			earliest = w.Start
		}
		for _, a := range s.Arms {
			for mi := range ms {
				if mi >= len(a.Values) {
					continue
				}
				pooled.Values[mi] = append(pooled.Values[mi], a.Values[mi]...)
				if mi < len(a.Den) && len(a.Den[mi]) == len(a.Values[mi]) {
					pooled.Den[mi] = append(pooled.Den[mi], a.Den[mi]...)
				}
			}
		}
	}
	if data.Users, err = r.RecentUsers(ctx, orgID, now); err != nil {
		return data, err
	}
	// An org younger than the span has had fewer days of traffic.
	data.Days = math.Max(minDataDays, math.Min(RecentDays, now.Sub(earliest).Hours()/hoursPerDay))
	return data, nil
}

// RecentUsers is the org's recent traffic: its distinct exposed users
// over the last RecentDays days, a user of several experiments once.
func (r Reader) RecentUsers(ctx context.Context, orgID string, now time.Time) (int64, error) {
	n, err := r.Aggregator.ExposedUsers(ctx, orgID, now.AddDate(0, 0, -RecentDays), now)
	if err != nil {
		return 0, fmt.Errorf("power: the org's recent traffic: %w", err)
	}
	return n, nil
}
