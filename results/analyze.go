package results

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// Preliminary thresholds (docs/results.md).
const (
	MinWindowDays = 7
	MinArmUsers   = 100
)

// Design is what a run analyses, loaded at the versions in force at the
// window's end.
type Design struct {
	OrgID        string
	ExperimentID string
	Control      string
	Allocation   []bucketing.Slice
	Metrics      []metrics.Resolved
	Window       Window
	Limits       plans.Limit
	// Sequential makes the always-valid numbers the headline (the
	// experiment's inference; the default). NStar is its sequential_tuning
	// (0: stats.DefaultNStar).
	Sequential bool
	NStar      float64
	// stratify is the number of strata (the window's phases) when more
	// than one phase has users; 0 compares users pooled.
	stratify int
	// Phases are the allocation's phases over the window
	// (experiments.Store.Phases); with more than one, users are tested
	// and compared by the phase of their first exposure.
	Phases []experiments.Phase
}

// Arms lists the allocation's variants in allocation order.
func (d Design) Arms() []string {
	out := make([]string, len(d.Allocation))
	for i, s := range d.Allocation {
		out[i] = s.Variant
	}
	return out
}

// SRMSummary is the sample-ratio check of a run: exposed users per arm
// against the allocation weights.
type SRMSummary struct {
	Gate         string             `json:"gate"`
	PValue       float64            `json:"p_value"`
	ChiSquare    float64            `json:"chi_square"`
	DF           int                `json:"df"`
	Observed     map[string]int64   `json:"observed"`
	Weights      map[string]float64 `json:"weights"`
	Unattributed int64              `json:"unattributed"`
	// With more than one phase in the window: the per-phase tests, which
	// PValue, ChiSquare, DF and Gate then summarise (checkPhaseSRM);
	// absent with one phase, where the test is the pooled one above.
	*SRMPhases
}

// Analysis is a run's outcome before publication: one row per metric and
// treatment arm (p_value_fdr not yet set) and the SRM check.
type Analysis struct {
	Rows []Row
	SRM  SRMSummary
}

// Analyze compares every treatment arm with control on every metric. It
// applies the plan's sample cap per arm and its permutation budget, and
// seeds resampling tests by experiment, metric and arm so a rerun gives the
// same answer. progress, if set, is called as each metric's comparisons
// start (the metrics are compared side by side).
func Analyze(d Design, s Sample, computedAt time.Time, progress func(metric string)) (Analysis, error) {
	srm, err := checkSRM(d, s)
	if err != nil {
		return Analysis{}, err
	}
	phases := phaseIndex(d, s)
	kept := make(map[string]cappedArm, len(s.Arms))
	for name, arm := range s.Arms {
		keep, capped := stats.SampleCap(arm.UserIDs, d.Limits.MaxSamplePerArm)
		kept[name] = cappedArm{arm: arm, keep: keep, capped: capped, phase: phases[name]}
	}
	if phases != nil && phasesWithUsers(d, phases) > 1 {
		d.stratify = len(d.Phases)
	}
	// The metrics are compared side by side: each only reads the arms,
	// and a large run's statistics (sorting every value for the
	// distributions, resampling) would otherwise keep to one core.
	byMetric := make([][]Row, len(d.Metrics))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for mi, m := range d.Metrics {
		if progress != nil {
			progress(m.Name)
		}
		g.Go(func() error {
			for _, treatment := range d.Arms() {
				if treatment == d.Control {
					continue
				}
				row, err := compareArms(d, m, mi, kept[d.Control], kept[treatment], treatment, srm, s.Orphans)
				if err != nil {
					return err
				}
				row.ComputedAt = computedAt
				byMetric[mi] = append(byMetric[mi], row)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return Analysis{}, err
	}
	return Analysis{Rows: slices.Concat(byMetric...), SRM: srm}, nil
}

// cappedArm is an arm with the users the sample cap keeps, and, when
// the run has phases, the phase index of each user (phaseIndex).
type cappedArm struct {
	arm    *Arm
	keep   []int
	capped bool
	phase  []int
}

// values returns the kept users' values of metric mi, leaving out users
// without a value (NaN: a mean metric with no matching events).
func (c cappedArm) crossover() int64 {
	if c.arm == nil {
		return 0
	}
	return c.arm.Crossover
}

// withCovariate returns the kept users' values of CUPED metric mi and their
// pre-period values, pairwise, leaving out users without a value.
func (c cappedArm) withCovariate(mi int) (y, x []float64) {
	if c.arm == nil || len(c.arm.Values[mi]) == 0 {
		return nil, nil
	}
	var pre []float64
	if mi < len(c.arm.Pre) {
		pre = c.arm.Pre[mi]
	}
	y, x = make([]float64, 0, len(c.keep)), make([]float64, 0, len(c.keep))
	for _, u := range c.keep {
		if v := c.arm.Values[mi][u]; !math.IsNaN(v) {
			var xu float64 // no pre-period value: 0
			if u < len(pre) {
				xu = pre[u]
			}
			y, x = append(y, v), append(x, xu)
		}
	}
	return y, x
}

// ratio returns the kept users' numerators and denominators of metric mi.
func (c cappedArm) ratio(mi int) stats.RatioArm {
	if c.arm == nil || len(c.arm.Values[mi]) == 0 {
		return stats.RatioArm{}
	}
	r := stats.RatioArm{Num: make([]float64, 0, len(c.keep)), Den: make([]float64, 0, len(c.keep))}
	for _, u := range c.keep {
		r.Num, r.Den = append(r.Num, c.arm.Values[mi][u]), append(r.Den, c.arm.Den[mi][u])
	}
	return r
}

// calls returns the arm's calls of quantile metric mi. The sample cap does
// not apply: the memory is 16 bytes per call (docs/results.md).
func (c cappedArm) calls(mi int) stats.Calls {
	if c.arm == nil {
		return stats.Calls{}
	}
	return c.arm.Calls[mi]
}

// callValues are the arm's call values of quantile metric mi, for the
// per-arm distribution.
func (c cappedArm) callValues(mi int) []float64 { return c.calls(mi).Values }

func (c cappedArm) values(mi int) []float64 {
	if c.arm == nil || len(c.arm.Values[mi]) == 0 {
		return nil
	}
	out := make([]float64, 0, len(c.keep))
	for _, u := range c.keep {
		if v := c.arm.Values[mi][u]; !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

func compareArms(d Design, m metrics.Resolved, mi int, control, treatment cappedArm, variant string, srm SRMSummary, orphans *Orphans) (Row, error) {
	row := Row{
		OrgID: d.OrgID, ExperimentID: d.ExperimentID, Metric: m.Name, Variant: variant,
		ControlVariant: d.Control, MetricVersion: m.MetricVersion, Category: m.Category, Kind: string(m.Kind),
		Origin: m.Origin, Test: m.MethodDefault, SRMP: srm.PValue,
		SampleCapUsed: control.capped || treatment.capped,
		WindowDays:    d.Window.Days, RetentionTruncated: d.Window.RetentionTruncated,
	}
	an := RowAnalysis{Inference: inferenceName(d.Sequential), Quantile: m.Quantile,
		CrossoverUsers: map[string]int64{d.Control: control.crossover(), variant: treatment.crossover()}}
	an.CrossoverHealth = crossoverHealth(control, treatment)
	if ReadsScores(m) {
		scoreCoverage(&an, m.Name, mi, map[string]cappedArm{d.Control: control, variant: treatment}, orphans)
	}
	cv, tv := control.values(mi), treatment.values(mi)
	compare := m.Kind.Spec().Compare
	if compare == vocab.ByCall {
		cv, tv = control.callValues(mi), treatment.callValues(mi)
	}
	row.NControl, row.NTreatment = int64(len(cv)), int64(len(tv))
	dist, err := distribution(d.Control, variant, cv, tv)
	if err != nil {
		return Row{}, err
	}
	row.Distribution = dist
	cmp, undefined := compareMetric(d, m, mi, control, treatment, variant)
	if undefined != "" {
		row.Undefined = undefined
	} else {
		fillComparison(&row, &an, cmp, d.Sequential)
		nonInferiority(&an, m, cmp, row.Sequential, d.options(m, variant))
	}
	if compare != vocab.ByUser {
		// n is users with calls (quantile) or all kept users (ratio).
		row.NControl, row.NTreatment = int64(cmp.NControl), int64(cmp.NTreatment)
	}
	row.Preliminary = IsPreliminary(d.Window.Days, row.NControl, row.NTreatment, srm.Gate)
	if d.Sequential && !row.Sequential && row.Undefined == "" {
		an.Warnings = append(an.Warnings, "this test ("+row.Test+") has no always-valid form: its p-value and CI are fixed-horizon, and reading them every day inflates false positives; decide once, at a planned end")
	}
	if d.stratify > 1 {
		if stratifies(m) {
			an.StratifiedPhases = d.stratify
		} else if m.Problem == "" {
			an.Warnings = append(an.Warnings, fmt.Sprintf("the allocation changed during the window (%d phases): this test (%s) pools the users of every phase, so a trend in the outcome over time can bias it; welch_t and z_test metrics are estimated phase by phase", d.stratify, row.Test))
		}
	}
	if an.CrossoverHealth == HealthFail {
		an.Warnings = append(an.Warnings, "more than 1% of an arm's users were exposed to more than one variant; they are left out of every metric (check assignment and identity)")
	}
	b, err := json.Marshal(an)
	if err != nil {
		return Row{}, fmt.Errorf("encode row analysis: %w", err)
	}
	row.Analysis = b
	return row, nil
}

// scoreCoverage adds a score metric's unscored users and score coverage
// per arm (over the users the sample cap keeps, as n_per_arm) and its
// orphan scores.
func scoreCoverage(an *RowAnalysis, metric string, mi int, arms map[string]cappedArm, orphans *Orphans) {
	an.UnscoredUsers, an.ScoreCoverage = map[string]int64{}, map[string]float64{}
	for name, c := range arms {
		var unscored, calls, scored int64
		if c.arm != nil && len(c.arm.Scored[mi]) > 0 {
			for _, u := range c.keep {
				n, k := int64(c.arm.Den[mi][u]), c.arm.Scored[mi][u]
				if n > 0 && k == 0 {
					unscored++
				}
				calls, scored = calls+n, scored+k
			}
		}
		an.UnscoredUsers[name] = unscored
		if calls > 0 {
			an.ScoreCoverage[name] = float64(scored) / float64(calls)
		}
	}
	if orphans != nil {
		n := orphans.ByMetric[metric]
		an.OrphanScores = &n
	}
}

// compareMetric runs the comparison metric m calls for; a non-empty reason
// says why there is none.
func compareMetric(d Design, m metrics.Resolved, mi int, control, treatment cappedArm, variant string) (stats.Comparison, string) {
	if m.Problem != "" {
		return stats.Comparison{}, m.Problem
	}
	opt := d.options(m, variant)
	var cmp stats.Comparison
	var err error
	switch m.Kind.Spec().Compare {
	case vocab.ByCall:
		cmp, err = stats.CompareQuantile(control.calls(mi), treatment.calls(mi), *m.Quantile, opt)
	case vocab.ByRatio:
		cmp, err = stats.CompareRatio(control.ratio(mi), treatment.ratio(mi), opt)
	default:
		method, perr := stats.ParseMethod(m.MethodDefault)
		if perr != nil {
			return stats.Comparison{}, perr.Error()
		}
		switch {
		case d.stratify > 1 && stratifies(m):
			cmp, err = stats.CompareStratified(method, strata(d.stratify, control, treatment, mi, m.UsesCUPED()), opt)
		case m.UsesCUPED():
			yc, xc := control.withCovariate(mi)
			yt, xt := treatment.withCovariate(mi)
			cmp, err = stats.CompareCUPED(method, yc, xc, yt, xt, opt)
		default:
			cmp, err = stats.Compare(method, control.values(mi), treatment.values(mi), opt)
		}
	}
	if err != nil {
		// Input the test refuses (say, z_test on values other than 0/1) is
		// a property of the metric, not a failure of the run.
		return stats.Comparison{}, err.Error()
	}
	if cmp.Undefined != "" {
		return cmp, cmp.Undefined
	}
	return cmp, ""
}

// options are the stats options of one comparison: the plan's
// permutation budget, the experiment's N*, and a seed per experiment,
// metric and arm so a rerun gives the same answer.
func (d Design) options(m metrics.Resolved, variant string) stats.Options {
	return stats.Options{MaxDraws: d.Limits.MaxPermutations, Seed: seed(d.ExperimentID, m.Name, variant), NStar: d.NStar}
}

func inferenceName(sequential bool) string {
	if sequential {
		return "sequential"
	}
	return "fixed_horizon"
}

// Crossover health (RowAnalysis.CrossoverHealth).
const (
	HealthPass = "pass"
	HealthFail = "fail"
	// MaxCrossoverShare is the share of an arm's exposed users above which
	// crossover users fail the health check.
	MaxCrossoverShare = 0.01
)

func crossoverHealth(arms ...cappedArm) string {
	for _, a := range arms {
		if a.arm != nil && a.arm.Exposed() > 0 && float64(a.arm.Crossover) > MaxCrossoverShare*float64(a.arm.Exposed()) {
			return HealthFail
		}
	}
	return HealthPass
}

// fillComparison copies a comparison into the row: the headline numbers
// of the chosen mode (always-valid when sequential and the test has that
// form), the other mode's under OtherMode.
func fillComparison(row *Row, an *RowAnalysis, c stats.Comparison, sequential bool) {
	row.Test = c.Test
	row.Statistic = c.Statistic
	row.Effect = c.Effect
	row.RelLift, row.RelUndefinedReason = c.RelLift, c.RelUndefinedReason
	row.PermutationsUsed = c.DrawsUsed
	fixed := ModeNumbers{Mode: "fixed_horizon", PValue: c.PValue, CILow: c.CILow, CIHigh: c.CIHigh, RelCILow: c.RelCILow, RelCIHigh: c.RelCIHigh}
	headline := fixed
	if av := c.AlwaysValid; av != nil {
		seq := ModeNumbers{Mode: "sequential", PValue: av.PValue, CILow: av.CILow, CIHigh: av.CIHigh, RelCILow: av.RelCILow, RelCIHigh: av.RelCIHigh}
		if c.RelLift == nil || av.RelCILow == nil {
			seq.RelCILow, seq.RelCIHigh = nil, nil
		}
		if sequential {
			headline, an.OtherMode, row.Sequential = seq, &fixed, true
		} else {
			an.OtherMode = &seq
		}
	}
	row.PValue, row.CILow, row.CIHigh = headline.PValue, headline.CILow, headline.CIHigh
	row.RelCILow, row.RelCIHigh = headline.RelCILow, headline.RelCIHigh
	if row.RelLift != nil && row.RelCILow == nil {
		row.RelLift, row.RelUndefinedReason = nil, "no always-valid interval for the relative lift"
	}
	if cu := c.CUPED; cu != nil {
		theta, vr := cu.Theta, cu.VarianceReduction
		an.CUPED, an.Theta, an.VarianceReduction = true, &theta, &vr
	}
}

// nonInferiority adds the non-inferiority test when the metric has a margin.
func nonInferiority(an *RowAnalysis, m metrics.Resolved, c stats.Comparison, sequential bool, opt stats.Options) {
	nm := m.NonInferiorityMargin
	if nm == nil {
		return
	}
	res, ok, err := stats.NonInferiority(c, stats.Margin{Value: nm.Value, Relative: nm.Type == "relative", BadIsIncrease: nm.BadDirection == "increase"}, sequential, opt)
	view := &NonInferiorityView{Margin: nm.Value, Type: nm.Type, BadDirection: nm.BadDirection, PValue: 1, Decision: stats.Inconclusive}
	if err == nil && ok {
		view.PValue, view.Decision = res.PValue, res.Decision
	}
	an.NonInferiority = view
}

// IsPreliminary is the preliminary rule: a window under 7 days, an arm
// under 100 users, or an SRM gate other than pass.
func IsPreliminary(windowDays int, nControl, nTreatment int64, srmGate string) bool {
	return windowDays < MinWindowDays || nControl < MinArmUsers || nTreatment < MinArmUsers || srmGate != stats.GatePass
}

func distribution(control, treatment string, cv, tv []float64) ([]byte, error) {
	edges, dists := stats.Distributions([][]float64{cv, tv}, stats.DefaultBins)
	out := Distribution{Edges: edges, Arms: map[string]ArmDistribution{
		control: armDistribution(dists[0]), treatment: armDistribution(dists[1]),
	}}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode distribution: %w", err)
	}
	return b, nil
}

func armDistribution(d stats.Distribution) ArmDistribution {
	return ArmDistribution{N: d.N, Mean: d.Mean, SD: d.SD, Min: d.Min, Max: d.Max,
		P5: d.P5, P25: d.P25, P50: d.P50, P75: d.P75, P95: d.P95, Histogram: d.Histogram}
}

// checkSRM tests exposed users per arm (before any sample cap) against the
// allocation weights; arms of weight 0 take no part.
func checkSRM(d Design, s Sample) (SRMSummary, error) {
	sum := SRMSummary{Observed: map[string]int64{}, Weights: map[string]float64{}, Unattributed: s.Unattributed}
	var observed []int64
	var weights []float64
	for _, sl := range d.Allocation {
		n := int64(0)
		if arm := s.Arms[sl.Variant]; arm != nil {
			n = arm.Exposed()
		}
		sum.Observed[sl.Variant] = n
		sum.Weights[sl.Variant] = sl.Weight
		if sl.Weight > 0 {
			observed, weights = append(observed, n), append(weights, sl.Weight)
		}
	}
	if len(observed) < 2 {
		sum.Gate, sum.PValue = stats.GateInsufficient, 1
		return sum, nil
	}
	r, err := stats.SRM(observed, weights)
	if err != nil {
		return SRMSummary{}, fmt.Errorf("srm: %w", err)
	}
	sum.Gate, sum.PValue, sum.ChiSquare, sum.DF = r.Gate, r.PValue, r.ChiSquare, r.DF
	return checkPhaseSRM(d, s, sum)
}

// ApplyFDR sets p_value_fdr by Benjamini–Hochberg across all comparisons of
// a run that have a p-value; rows without one keep 0.
func ApplyFDR(rows []Row) {
	p := make([]float64, len(rows))
	for i, r := range rows {
		p[i] = r.PValue
		if r.Undefined != "" {
			p[i] = math.NaN()
		}
	}
	for i, adj := range stats.BenjaminiHochberg(p) {
		if !math.IsNaN(adj) {
			rows[i].PValueFDR = adj
		}
	}
}

// seed makes resampling reproducible per experiment, metric and arm.
func seed(experimentID, metric, variant string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s", experimentID, metric, variant)
	return h.Sum64()
}
