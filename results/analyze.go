package results

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/stats"
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
// same answer. progress, if set, is called before each metric.
func Analyze(d Design, s Sample, computedAt time.Time, progress func(metric string)) (Analysis, error) {
	srm, err := checkSRM(d, s)
	if err != nil {
		return Analysis{}, err
	}
	kept := make(map[string]cappedArm, len(s.Arms))
	for name, arm := range s.Arms {
		keep, capped := stats.SampleCap(arm.UserIDs, d.Limits.MaxSamplePerArm)
		kept[name] = cappedArm{arm: arm, keep: keep, capped: capped}
	}
	var rows []Row
	for mi, m := range d.Metrics {
		if progress != nil {
			progress(m.Name)
		}
		for _, treatment := range d.Arms() {
			if treatment == d.Control {
				continue
			}
			row, err := compareArms(d, m, mi, kept[d.Control], kept[treatment], treatment, srm)
			if err != nil {
				return Analysis{}, err
			}
			row.ComputedAt = computedAt
			rows = append(rows, row)
		}
	}
	return Analysis{Rows: rows, SRM: srm}, nil
}

// cappedArm is an arm with the users the sample cap keeps.
type cappedArm struct {
	arm    *Arm
	keep   []int
	capped bool
}

// values returns the kept users' values of metric mi, leaving out users
// without a value (NaN: a mean metric with no matching events).
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

func compareArms(d Design, m metrics.Resolved, mi int, control, treatment cappedArm, variant string, srm SRMSummary) (Row, error) {
	row := Row{
		OrgID: d.OrgID, ExperimentID: d.ExperimentID, Metric: m.Name, Variant: variant,
		ControlVariant: d.Control, MetricVersion: m.MetricVersion, Category: m.Category, Kind: m.Kind,
		Origin: m.Origin, Test: m.MethodDefault, SRMP: srm.PValue,
		SampleCapUsed: control.capped || treatment.capped,
		WindowDays:    d.Window.Days, RetentionTruncated: d.Window.RetentionTruncated,
	}
	cv, tv := control.values(mi), treatment.values(mi)
	row.NControl, row.NTreatment = int64(len(cv)), int64(len(tv))
	row.Preliminary = IsPreliminary(d.Window.Days, row.NControl, row.NTreatment, srm.Gate)
	dist, err := distribution(d.Control, variant, cv, tv)
	if err != nil {
		return Row{}, err
	}
	row.Distribution = dist
	if m.Problem != "" {
		row.Undefined = m.Problem
		return row, nil
	}
	method, err := stats.ParseMethod(m.MethodDefault)
	if err != nil {
		row.Undefined = err.Error()
		return row, nil
	}
	cmp, err := stats.Compare(method, cv, tv, stats.Options{MaxDraws: d.Limits.MaxPermutations, Seed: seed(d.ExperimentID, m.Name, variant)})
	if err != nil {
		// Input the test refuses (say, z_test on values other than 0/1) is
		// a property of the metric, not a failure of the run.
		row.Undefined = err.Error()
		return row, nil
	}
	fillComparison(&row, cmp)
	return row, nil
}

func fillComparison(row *Row, c stats.Comparison) {
	row.Test, row.Undefined = c.Test, c.Undefined
	row.Statistic, row.PValue = c.Statistic, c.PValue
	row.Effect, row.CILow, row.CIHigh = c.Effect, c.CILow, c.CIHigh
	row.RelLift, row.RelCILow, row.RelCIHigh, row.RelUndefinedReason = c.RelLift, c.RelCILow, c.RelCIHigh, c.RelUndefinedReason
	row.PermutationsUsed = c.DrawsUsed
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
			n = int64(len(arm.UserIDs))
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
	return sum, nil
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
