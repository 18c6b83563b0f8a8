package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/phases"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/usecases"
	"github.com/expd/expd/verdict"
	"github.com/expd/expd/vocab"
)

// maxTimelineDays bounds the traffic timeline, as the traffic route does.
const maxTimelineDays = 366

type resultsData struct {
	Exp      experiments.Experiment
	Days     []runOption
	Run      *results.Run
	RunLabel string
	SRM      results.SRMSummary
	Rows     []resultRow
	Verdict  *verdict.Verdict
	Forest   []template.HTML // one small plot per metric, each on its own axis
	Drawn    int             // intervals in the forest plots
	Undrawn  []string        // rows without a relative-lift interval, and why
	Notes    []string        // plan limits in plain words
	Warnings []string
	Timeline template.HTML
	Variants []string
	Shares   []share       // each variant's computed share of traffic
	Pending  *usecases.Run // a run started from the dashboard, still going
	Empty    string        // a run asked for that has no results
	Dist     *dist         // the distribution asked for, if any
	Workflow string
	Limits   plans.Limit
	Buttons  lifecycleButtons // shown to admins only
	// Events is the lifecycle timeline (audit log), oldest first;
	// MoreEvents: older entries were left out.
	Events     []lifecycleEvent
	MoreEvents bool
	Phases     []phaseRow // of the shown run's window
}

type runOption struct {
	ID, Label string
	Selected  bool
}

type resultRow struct {
	results.Row
	A            results.RowAnalysis // sequential/CUPED/crossover/non-inferiority details, when stored
	Other        string              // the other inference mode's interval and p, in words
	Lift, LiftCI string
	Goal         string
	Judgement    verdict.Judgement
	Badge, Class string
	// ControlMean and ArmMean are each arm's absolute value (the mean of
	// its per-user values), "" when the distribution is missing.
	ControlMean, ArmMean string
	DistURL              string
	Quality              *rowQuality // score metrics only
}

// rowQuality is a score metric's coverage beside its effect, with links to
// the calls behind each arm's number (docs/quality.md).
type rowQuality struct {
	Coverage, Unscored  string // "control / arm"
	Control, Arm        string
	ControlCalls, Calls string // the call explorer, filtered by arm and score
}

type dist struct {
	Metric, Variant string
	Arms            []armDist
	Chart           template.HTML
}

type armDist struct {
	Name string
	results.ArmDistribution
}

// GET /experiments/:id[?run=&pending=&dm=&dv=]: the results page. It
// reads runs through the same results functions as GET /v1/.../results.
func (d *Dashboard) resultsPage(c *gin.Context) {
	ctx := c.Request.Context()
	exp, ok := d.experimentParam(c)
	if !ok {
		return
	}
	data := resultsData{Exp: exp, Variants: variantsOf(exp), Shares: shares(exp.Allocation)}
	if p := c.Query("pending"); p != "" {
		run, err := d.runState(ctx, orgID(c), exp.ID, p)
		switch {
		case errors.Is(err, results.ErrRunNotFound):
		case err != nil:
			d.fail(c, err)
			return
		case run.Status == results.StatusCompleted:
			c.Redirect(http.StatusSeeOther, "/experiments/"+exp.ID+"?run="+url.QueryEscape(run.RunID))
			return
		default:
			data.Pending = &run
			data.Workflow = d.workflowURL(run.WorkflowID)
		}
	}
	days, err := results.AvailableDays(ctx, d.deps.DB, orgID(c), exp.ID)
	if err != nil {
		d.fail(c, err)
		return
	}
	if err := d.loadTimeline(c, &data); err != nil {
		d.fail(c, err)
		return
	}
	if data.Events, data.MoreEvents, err = lifecycleEvents(ctx, d.deps.DB, orgID(c), exp.ID); err != nil {
		d.fail(c, err)
		return
	}
	if len(days) == 0 {
		data.Empty = c.Query("run")
	}
	if len(days) > 0 {
		selected := days[0]
		if r := c.Query("run"); contains(days, r) {
			selected = r
		} else if r != "" {
			data.Empty = r
		}
		for _, day := range days {
			data.Days = append(data.Days, runOption{ID: day, Label: runLabel(day), Selected: day == selected})
		}
		if err := d.loadRun(c, &data, selected); err != nil {
			d.fail(c, err)
			return
		}
	}
	suggested := ""
	if data.Verdict != nil && data.Verdict.Recommendation == verdict.Ship {
		suggested = data.Verdict.Variant
	}
	data.Buttons = buttonsFor(exp, suggested)
	d.render(c, http.StatusOK, "results", exp.Name, "experiments", data)
}

func (d *Dashboard) loadTimeline(c *gin.Context, data *resultsData) error {
	to := time.Now().UTC()
	from := data.Exp.CreatedAt.UTC()
	if earliest := to.AddDate(0, 0, 1-maxTimelineDays); from.Before(earliest) {
		from = earliest
	}
	days, err := d.deps.Aggregator.Traffic(c.Request.Context(), orgID(c), data.Exp.ID, from, to, data.Variants)
	if err != nil {
		return err
	}
	data.Timeline = timeline(days, data.Variants)
	return nil
}

func (d *Dashboard) loadRun(c *gin.Context, data *resultsData, computedFor string) error {
	ctx := c.Request.Context()
	run, err := results.LoadRun(ctx, d.deps.DB, orgID(c), data.Exp.ID, computedFor)
	if err != nil {
		return err
	}
	rows, err := results.LoadRows(ctx, d.deps.DB, orgID(c), data.Exp.ID, computedFor)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(run.SRM, &data.SRM); err != nil {
		return fmt.Errorf("decode srm of run %s: %w", computedFor, err)
	}
	org, err := orgs.Get(ctx, d.deps.DB, orgID(c))
	if err != nil {
		return err
	}
	data.Limits = plans.Get(plans.Name(org.Plan))
	data.Run, data.RunLabel = &run, runLabel(computedFor)
	phases, err := phases.Of(ctx, d.deps.DB, orgID(c), data.Exp.ID, run.WindowStart, run.WindowEnd)
	if err != nil {
		return err
	}
	data.Phases = phasesOf(phases, data.SRM)
	if data.Workflow == "" {
		data.Workflow = d.workflowURL(run.WorkflowID)
	}
	in, err := verdict.Load(ctx, d.deps.DB, run, rows)
	if err != nil {
		return err
	}
	v, err := verdict.OfRun(run, in)
	if err != nil {
		return err
	}
	data.Verdict = &v
	var forestRows []forestRow
	for _, r := range rows {
		row := d.resultRow(data.Exp, computedFor, r, in.Goal(r.Metric))
		data.Rows = append(data.Rows, row)
		label := r.Metric + " · " + r.Variant
		switch {
		case r.Undefined != "":
			data.Undrawn = append(data.Undrawn, label+": no test ("+r.Undefined+")")
		case r.RelLift == nil || r.RelCILow == nil || r.RelCIHigh == nil:
			data.Undrawn = append(data.Undrawn, label+": relative lift undefined ("+r.RelUndefinedReason+")")
		default:
			forestRows = append(forestRows, forestRow{Metric: r.Metric, Label: r.Variant, Est: 100 * *r.RelLift, Lo: 100 * *r.RelCILow, H: 100 * *r.RelCIHigh, Direction: row.Class})
		}
		if dm, dv := c.Query("dm"), c.Query("dv"); dm == r.Metric && dv == r.Variant {
			data.Dist = distOf(r)
		}
	}
	data.Drawn = len(forestRows)
	data.Forest = forests(forestRows)
	data.Notes = planNotes(rows, data.Limits)
	data.Warnings = healthWarnings(data.SRM, data.Rows)
	return nil
}

func (d *Dashboard) resultRow(exp experiments.Experiment, computedFor string, r results.Row, goal string) resultRow {
	expID := exp.ID
	row := resultRow{Row: r, Goal: goal, Judgement: verdict.Judge(r, goal)}
	if len(r.Analysis) > 0 {
		_ = json.Unmarshal(r.Analysis, &row.A) // an unreadable detail column only hides the details
	}
	if o := row.A.OtherMode; o != nil {
		row.Other = fmt.Sprintf("%s: %s to %s, p %s", o.Mode, fmtNum(o.CILow), fmtNum(o.CIHigh), fmtP(o.PValue))
	}
	if r.RelLift != nil {
		row.Lift = fmtPct(100 * *r.RelLift)
		if r.RelCILow != nil && r.RelCIHigh != nil {
			row.LiftCI = fmtPct(100**r.RelCILow) + " to " + fmtPct(100**r.RelCIHigh)
		}
	}
	row.Badge, row.Class = badge(row.Judgement)
	if r.Preliminary && row.Class != "flat" && row.Class != "none" {
		row.Badge += ", preliminary"
	}
	var dd results.Distribution
	if json.Unmarshal(r.Distribution, &dd) == nil {
		if a, ok := dd.Arms[r.ControlVariant]; ok {
			row.ControlMean = fmtNum(a.Mean)
		}
		if a, ok := dd.Arms[r.Variant]; ok {
			row.ArmMean = fmtNum(a.Mean)
		}
	}
	q := url.Values{"run": {computedFor}, "dm": {r.Metric}, "dv": {r.Variant}}
	row.DistURL = "/experiments/" + expID + "?" + q.Encode() + "#distribution"
	row.Quality = scoreQuality(exp, r, row.A)
	return row
}

// badge words a judgement as good or bad by the metric's goal; a metric
// without one is neutral (docs/dashboard.md, "Results").
func badge(j verdict.Judgement) (text, class string) {
	switch j.Outcome {
	case verdict.NoTest:
		return "no test", "none"
	case verdict.Better:
		return "better", "good"
	case verdict.Worse:
		return "worse", "bad"
	case verdict.Higher, verdict.Lower:
		return j.Outcome + " (no goal set)", "neutral"
	}
	if j.HeldBackByFDR {
		return "inconclusive after FDR", "flat"
	}
	return "inconclusive", "flat"
}

// scoreQuality is the coverage line of a score metric's row: the share of
// each arm's calls that carry a score, the users left out for having none,
// and links to each arm's scored calls in the explorer.
func scoreQuality(exp experiments.Experiment, r results.Row, a results.RowAnalysis) *rowQuality {
	var score string
	for _, m := range exp.Metrics {
		if m.Name == r.Metric && m.Source != nil && m.Source.EventType == vocab.TypeScore {
			score = m.Source.Score
		}
	}
	if score == "" {
		return nil
	}
	pct := func(arm string) string {
		if v, ok := a.ScoreCoverage[arm]; ok {
			return fmtNum(100*v) + "%"
		}
		return "–"
	}
	calls := func(arm string) string {
		return "/experiments/" + exp.ID + "/calls?" + url.Values{"variant": {arm}, "score": {score}}.Encode()
	}
	return &rowQuality{
		Coverage:     pct(r.ControlVariant) + " / " + pct(r.Variant),
		Unscored:     fmt.Sprintf("%d / %d", a.UnscoredUsers[r.ControlVariant], a.UnscoredUsers[r.Variant]),
		Control:      r.ControlVariant,
		Arm:          r.Variant,
		ControlCalls: calls(r.ControlVariant),
		Calls:        calls(r.Variant),
	}
}

func distOf(r results.Row) *dist {
	var dd results.Distribution
	if err := json.Unmarshal(r.Distribution, &dd); err != nil {
		return nil
	}
	out := &dist{Metric: r.Metric, Variant: r.Variant}
	var names []string
	var counts [][]int
	for _, name := range []string{r.ControlVariant, r.Variant} {
		a, ok := dd.Arms[name]
		if !ok {
			continue
		}
		out.Arms = append(out.Arms, armDist{Name: name, ArmDistribution: a})
		names, counts = append(names, name), append(counts, a.Histogram)
	}
	out.Chart = histogram(dd.Edges, names, counts)
	return out
}

// planNotes says in plain words where the plan's limits shaped a run.
func planNotes(rows []results.Row, l plans.Limit) []string {
	var capped, truncated, prelim bool
	draws := 0
	for _, r := range rows {
		capped = capped || r.SampleCapUsed
		truncated = truncated || r.RetentionTruncated
		prelim = prelim || r.Preliminary
		if r.Test == "permutation" || r.Test == "bootstrap" {
			draws = max(draws, r.PermutationsUsed)
		}
	}
	var notes []string
	if prelim {
		notes = append(notes, fmt.Sprintf("Preliminary: fewer than %d days of data, fewer than %d users in an arm, or a failed traffic check. The numbers can still move a lot; wait before deciding.", results.MinWindowDays, results.MinArmUsers))
	}
	if capped {
		notes = append(notes, fmt.Sprintf("Sampled: each arm was analysed on at most %s users (the %s plan's cap), picked by a hash of the user id. Estimates are a little less precise than with every user.", fmtInt(int64(l.MaxSamplePerArm)), l.Plan))
	}
	if truncated {
		notes = append(notes, fmt.Sprintf("Shortened window: the %s plan keeps events for %d days, so the analysis starts at that cutoff rather than at the experiment's start.", l.Plan, l.RetentionDays))
	}
	if draws > 0 {
		notes = append(notes, fmt.Sprintf("Resampling tests used %s random draws (plan limit), so p-values smaller than about %s cannot be told apart.", fmtInt(int64(draws)), fmtNum(1/float64(draws+1))))
	}
	return notes
}

// healthWarnings lists what makes a run's traffic suspect besides SRM.
func healthWarnings(srm results.SRMSummary, rows []resultRow) []string {
	var w []string
	if srm.Unattributed > 0 {
		w = append(w, fmt.Sprintf("%s exposures named a variant that is not in the allocation (a client with a stale config, or users crossing arms); they are left out of the analysis.", fmtInt(srm.Unattributed)))
	}
	crossover := false
	for _, r := range rows {
		if r.A.CrossoverHealth == "fail" && !crossover {
			crossover = true
			var parts []string
			for arm, n := range r.A.CrossoverUsers {
				parts = append(parts, fmt.Sprintf("%s %s", arm, fmtInt(n)))
			}
			sort.Strings(parts)
			w = append(w, "More than 1% of an arm's users saw more than one variant (crossover: "+strings.Join(parts, ", ")+"). They are left out of every metric, but assignment or exposure logging may be broken.")
		}
		for _, msg := range r.A.Warnings {
			w = append(w, r.Metric+" · "+r.Variant+": "+msg)
		}
	}
	return w
}

// srmFailed tells the template which banner to show.
func (r resultsData) SRMFailed() bool       { return r.SRM.Gate == stats.GateFail }
func (r resultsData) SRMInsufficient() bool { return r.SRM.Gate == stats.GateInsufficient }

func (d *Dashboard) workflowURL(workflowID string) string {
	if d.deps.TemporalUI == "" || workflowID == "" {
		return ""
	}
	return d.deps.TemporalUI + "/namespaces/" + url.PathEscape(d.deps.Namespace) + "/workflows/" + url.PathEscape(workflowID)
}

// experimentParam loads the :id experiment of the viewer's org, or shows
// a not-found page.
func (d *Dashboard) experimentParam(c *gin.Context) (experiments.Experiment, bool) {
	exp, err := experiments.Store{DB: d.deps.DB}.Get(c.Request.Context(), orgID(c), c.Param("id"))
	if errors.Is(err, experiments.ErrNotFound) {
		d.message(c, http.StatusNotFound, "No such experiment", "Your organization has no experiment with this id or name.")
		return exp, false
	}
	if err != nil {
		d.fail(c, err)
		return exp, false
	}
	return exp, true
}
