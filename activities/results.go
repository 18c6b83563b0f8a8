package activities

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/holdouts"
	"github.com/expd/expd/results"
	"github.com/expd/expd/telemetry"
)

// heartbeatEvery paces heartbeats of long activities while the database
// works on a query that reports no progress of its own: five beats fit in
// their 10 s heartbeat timeout (workflows/results.go says why).
const heartbeatEvery = 2 * time.Second

// RunInput names one results run of one experiment.
type RunInput struct {
	OrgID        string
	ExperimentID string
	ComputedFor  string // YYYY-MM-DD or manual-<RFC 3339 instant>
	WorkflowID   string
	// Holdout: ExperimentID names a holdout, whose run compares its two
	// sides (results.LoadHoldoutDesign).
	Holdout bool `json:",omitempty"`
}

// RunPlan is the small summary LoadRunPlan hands to the next steps: the
// versions and window the run is computed at.
type RunPlan struct {
	Skip              string // non-empty: nothing to compute, and why
	Kind              string
	ExperimentVersion int
	Plan              string
	Window            results.Window
	Metrics           int
	UnresolvedMetrics []string
}

// LoadRunPlan loads the experiment at the config version in force at the
// window's end, resolves its metric definitions at their versions, applies
// the org's plan retention to the window, and records the run as running.
func (a *Activities) LoadRunPlan(ctx context.Context, in RunInput) (RunPlan, error) {
	key, d, plan, err := a.design(ctx, in)
	if err != nil {
		return plan, err
	}
	if plan.Skip == results.SkipNotCreated {
		// Recorded so the run's status and the results route say why it
		// has nothing (a nightly day before the experiment, or a manual
		// run id for an instant before it).
		at := a.now()
		skipped := results.Run{ExperimentID: in.ExperimentID, ComputedFor: key.ComputedFor, OrgID: in.OrgID, Kind: key.Kind,
			WorkflowID: in.WorkflowID, WindowStart: key.WindowEnd, WindowEnd: key.WindowEnd, StartedAt: at, FinishedAt: &at}
		reason := plan.Skip + " (" + key.WindowEnd.Format(time.RFC3339) + "): nothing to count"
		return plan, results.RecordSkippedRun(ctx, a.DB, skipped, reason)
	}
	if plan.Skip != "" {
		return plan, nil
	}
	run := results.Run{
		ExperimentID: in.ExperimentID, ComputedFor: key.ComputedFor, OrgID: in.OrgID, Kind: key.Kind,
		WorkflowID: in.WorkflowID, ExperimentVersion: plan.ExperimentVersion,
		WindowStart: d.Window.Start, WindowEnd: d.Window.End, WindowDays: d.Window.Days,
		RetentionTruncated: d.Window.RetentionTruncated, StartedAt: a.now(),
	}
	if err := results.StartRun(ctx, a.DB, run); err != nil {
		return RunPlan{}, err
	}
	return plan, nil
}

// design reads the run's key and loads what the run analyses
// (results.LoadDesign) and the plan that reports it.
func (a *Activities) design(ctx context.Context, in RunInput) (results.Key, results.Design, RunPlan, error) {
	key, err := results.ParseKey(in.ComputedFor)
	if err != nil {
		return key, results.Design{}, RunPlan{}, temporal.NewNonRetryableApplicationError("bad computed_for", "BadRunKey", err)
	}
	plan := RunPlan{Kind: key.Kind}
	load := results.LoadDesign
	if in.Holdout {
		load = results.LoadHoldoutDesign
	}
	p, err := load(ctx, a.DB, in.OrgID, in.ExperimentID, key.WindowEnd)
	if err != nil || p.Skip != "" {
		plan.Skip = p.Skip
		return key, results.Design{}, plan, err
	}
	d := p.Design
	plan.ExperimentVersion, plan.Plan, plan.Window, plan.Metrics = p.Version, string(d.Limits.Plan), d.Window, len(d.Metrics)
	for _, m := range d.Metrics {
		if m.Problem != "" {
			plan.UnresolvedMetrics = append(plan.UnresolvedMetrics, m.Name)
		}
	}
	return key, d, plan, nil
}

// AnalyzeResult summarises an analysis; the comparisons themselves are
// staged in the database.
type AnalyzeResult struct {
	Users        int
	Unattributed int64
	Rows         int
	SRMGate      string
	// How the per-user values were read (docs/results.md, "Incremental
	// results"): days read from rollups, of which rolled up by this run,
	// and why the whole window was read from events instead, if it was.
	DaysFromRollups int
	DaysRolledUp    int
	ReadInFull      string
}

// AnalyzeExperiment aggregates the per-user values of every metric in one
// SQL GROUP BY, runs the statistics per metric and treatment arm, checks
// SRM, and stages the comparisons. It heartbeats while it works; a retry
// recomputes the same comparisons (resampling is seeded) and restages them.
func (a *Activities) AnalyzeExperiment(ctx context.Context, in RunInput) (AnalyzeResult, error) {
	key, d, plan, err := a.design(ctx, in)
	if err != nil {
		return AnalyzeResult{}, err
	}
	if plan.Skip != "" {
		return AnalyzeResult{}, temporal.NewNonRetryableApplicationError(plan.Skip, "RunSkipped", nil)
	}
	beat := startHeartbeat(ctx, "aggregating")
	defer beat.stop()
	sample, use, err := a.aggregator().Aggregate(ctx, in.OrgID, in.ExperimentID, d.Window, d.Arms(), d.Metrics, a.now(), func(n int) {
		beat.set(fmt.Sprintf("aggregated %d users", n))
	})
	if err != nil {
		return AnalyzeResult{}, err
	}
	analysis, err := results.Analyze(d, sample, a.now(), func(metric string) {
		beat.set("comparing " + metric)
	})
	if err != nil {
		return AnalyzeResult{}, err
	}
	if sample.Coverage == nil {
		beat.set("counting what was left out")
		c, err := a.aggregator().Coverage(ctx, in.OrgID, in.ExperimentID, d.Window, d.Arms())
		if err != nil {
			return AnalyzeResult{}, err
		}
		sample.Coverage = &c
	}
	if o := sample.Orphans; o != nil {
		sample.Coverage.OrphanScores = &o.Total
	}
	if err := results.RecordCoverage(ctx, a.DB, in.ExperimentID, key.ComputedFor, *sample.Coverage, noResults(d, plan, len(analysis.Rows))); err != nil {
		return AnalyzeResult{}, err
	}
	beat.set("staging")
	if err := results.Stage(ctx, a.DB, in.ExperimentID, key.ComputedFor, analysis); err != nil {
		return AnalyzeResult{}, err
	}
	users := 0
	for _, arm := range sample.Arms {
		users += len(arm.UserIDs)
	}
	return AnalyzeResult{Users: users, Unattributed: sample.Unattributed, Rows: len(analysis.Rows), SRMGate: analysis.SRM.Gate,
		DaysFromRollups: use.Reused + use.Rolled, DaysRolledUp: use.Rolled, ReadInFull: use.Full}, nil
}

// noResults says why an analysis of d produced no rows ("" when it did):
// rows are one per metric and treatment arm, so only a design without
// either has none.
func noResults(d results.Design, plan RunPlan, rows int) string {
	switch {
	case rows > 0:
		return ""
	case len(d.Metrics) == 0:
		return fmt.Sprintf("experiment version %d has no metrics: there is nothing to compare", plan.ExperimentVersion)
	case len(d.Arms()) < 2:
		return fmt.Sprintf("experiment version %d allocates to control only: there is no treatment arm to compare", plan.ExperimentVersion)
	}
	return "the analysis produced no comparisons"
}

// PublishResult is the number of rows a run published.
type PublishResult struct{ Rows int }

// PublishResults applies Benjamini–Hochberg across the run's staged
// comparisons and upserts them as result rows in one transaction.
func (a *Activities) PublishResults(ctx context.Context, in RunInput) (PublishResult, error) {
	beat := startHeartbeat(ctx, "publishing")
	defer beat.stop()
	n, err := results.Publish(ctx, a.DB, in.ExperimentID, in.ComputedFor, a.now())
	if err == nil {
		a.observeRun(ctx, in)
	}
	return PublishResult{Rows: n}, err
}

// MarkRunFailedInput says why a run failed.
type MarkRunFailedInput struct {
	Run    RunInput
	Reason string
}

// MarkRunFailedResult is empty; it exists so fields can be added.
type MarkRunFailedResult struct{}

// MarkRunFailed records a failed run so the API can report it.
func (a *Activities) MarkRunFailed(ctx context.Context, in MarkRunFailedInput) (MarkRunFailedResult, error) {
	err := results.FailRun(ctx, a.DB, in.Run.ExperimentID, in.Run.ComputedFor, in.Reason, a.now())
	if err == nil {
		a.observeRun(ctx, in.Run)
	}
	return MarkRunFailedResult{}, err
}

// observeRun counts a finished run in the results metrics, by its kind and
// final status, with its duration from the run record. A metric is not
// worth failing the activity for: a read error skips it.
func (a *Activities) observeRun(ctx context.Context, in RunInput) {
	r, err := results.LoadRun(ctx, a.DB, in.OrgID, in.ExperimentID, in.ComputedFor)
	if err != nil || r.FinishedAt == nil {
		return
	}
	telemetry.ResultsRuns.WithLabelValues(r.Kind, r.Status).Observe(r.FinishedAt.Sub(r.StartedAt).Seconds())
}

// ListRunningInput pages through running experiments by id.
type ListRunningInput struct {
	AfterID string
	Limit   int
	OrgID   string // only this org's experiments (a backfill); "": every org
}

// ExperimentRef names an experiment, or a holdout, and its org.
type ExperimentRef struct {
	OrgID   string
	ID      string
	Holdout bool `json:",omitempty"`
}

// ListRunningResult is one page; Next is "" on the last page.
type ListRunningResult struct {
	Experiments []ExperimentRef
	Next        string
}

// ListRunningExperiments returns one page of the running experiments and
// the holdouts (each has its nightly run too) of every org that has not
// been deleted, by id (both are UUIDs: one order pages through both).
func (a *Activities) ListRunningExperiments(ctx context.Context, in ListRunningInput) (ListRunningResult, error) {
	running, err := experiments.Store{DB: a.DB}.ListRunning(ctx, in.OrgID, in.AfterID, in.Limit)
	if err != nil {
		return ListRunningResult{}, err
	}
	held, err := holdouts.Store{DB: a.DB}.ListAll(ctx, in.OrgID, in.AfterID, in.Limit)
	if err != nil {
		return ListRunningResult{}, err
	}
	refs := make([]ExperimentRef, 0, len(running)+len(held))
	for _, r := range running {
		refs = append(refs, ExperimentRef{OrgID: r.OrgID, ID: r.ID})
	}
	for _, h := range held {
		refs = append(refs, ExperimentRef{OrgID: h.OrgID, ID: h.ID, Holdout: true})
	}
	slices.SortFunc(refs, func(x, y ExperimentRef) int { return strings.Compare(x.ID, y.ID) })
	out := ListRunningResult{Experiments: refs}
	// A full page of either may have more after it: the next page starts
	// after the last id kept.
	if len(refs) > in.Limit || len(running) == in.Limit || len(held) == in.Limit {
		out.Experiments = refs[:min(len(refs), in.Limit)]
		out.Next = out.Experiments[len(out.Experiments)-1].ID
	}
	return out, nil
}

// heartbeat reports an activity's progress at a steady pace from its own
// goroutine, so a long query does not look like a dead worker.
type heartbeat struct {
	mu     sync.Mutex
	detail string
	done   chan struct{}
}

func startHeartbeat(ctx context.Context, detail string) *heartbeat {
	h := &heartbeat{detail: detail, done: make(chan struct{})}
	go func() {
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx, h.current())
			select {
			case <-h.done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heartbeat) set(detail string) {
	h.mu.Lock()
	h.detail = detail
	h.mu.Unlock()
}

func (h *heartbeat) current() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.detail
}

func (h *heartbeat) stop() { close(h.done) }
