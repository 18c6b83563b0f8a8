package results

import (
	"fmt"
	"math"
	"time"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// Phases (docs/results.md, "Phases"): an allocation change starts a new
// phase, and a user belongs to the phase of their first exposure in the
// window. With more than one phase, the sample-ratio check tests each
// phase against its own weights, and welch_t and z_test metrics are
// estimated phase by phase (stats.CompareStratified).

// PhaseSettle is how long after a phase starts its first exposures are
// left out of its sample-ratio test: clients poll the config every 60 s
// (docs/spec.md), so until every client has the new weights some still
// assign by the previous ones, and a busy experiment would fail the test
// on that alone. The users still count in the effect (their arm was drawn
// at random either way).
const PhaseSettle = 2 * time.Minute

// PhaseSRM is one phase's sample-ratio test: users first exposed in the
// phase (crossover users included, before any sample cap) against the
// phase's weights.
type PhaseSRM struct {
	Phase    int                `json:"phase"`
	Observed map[string]int64   `json:"observed"`
	Weights  map[string]float64 `json:"weights"`
	// Settling counts the users first exposed in the PhaseSettle after
	// the phase's start, left out of its test.
	Settling  int64   `json:"settling"`
	ChiSquare float64 `json:"chi_square"`
	DF        int     `json:"df"`
	PValue    float64 `json:"p_value"`
	// PAdjusted is PValue times the phases combined (Bonferroni), at
	// most 1; absent for a phase left out of the combination.
	PAdjusted *float64 `json:"p_adjusted,omitempty"`
	Gate      string   `json:"gate"`
}

// SRMPhases is the per-phase part of an SRMSummary, present when the
// window has more than one phase.
type SRMPhases struct {
	Phases []PhaseSRM `json:"phases"`
	// FailedPhases are the numbers of the phases whose adjusted p is
	// under stats.SRMFailP (empty when none).
	FailedPhases []int `json:"failed_phases"`
}

// phaseIndex places every user of the sample in a phase of d (by first
// exposure): per arm, the phase index of each of its users (UserIDs
// order). nil when d has one phase or none.
func phaseIndex(d Design, s Sample) map[string][]int {
	if len(d.Phases) < 2 || !placed(s) {
		return nil
	}
	out := make(map[string][]int, len(s.Arms))
	for name, arm := range s.Arms {
		idx := make([]int, len(arm.First))
		for u, t := range arm.First {
			idx[u] = experiments.PhaseAt(d.Phases, t)
		}
		out[name] = idx
	}
	return out
}

// placed tells whether the sample carries every user's first exposure
// (an engine that does not cannot be split into phases).
func placed(s Sample) bool {
	for _, arm := range s.Arms {
		if len(arm.First) != len(arm.UserIDs) || len(arm.CrossoverFirst) != int(arm.Crossover) {
			return false
		}
	}
	return true
}

// phasesWithUsers counts the phases in which at least one counted user
// was first exposed.
func phasesWithUsers(d Design, idx map[string][]int) int {
	seen := make([]bool, len(d.Phases))
	for _, phases := range idx {
		for _, k := range phases {
			seen[k] = true
		}
	}
	n := 0
	for _, s := range seen {
		if s {
			n++
		}
	}
	return n
}

// checkPhaseSRM replaces the pooled test of sum by the per-phase tests
// when the window has more than one phase: each phase's first exposures
// against its weights (arms of the run's allocation that the phase gives
// a positive weight; variants the run no longer has are unattributed, so
// the others are tested among themselves), combined by Bonferroni over
// the phases tested: srm_p = min(1, K × min p_k). Phases whose counts are
// too small for the chi-square approximation (the gate's insufficient
// rule) are left out of K when another phase has enough; the gate fails
// when a phase's adjusted p is under stats.SRMFailP, and is insufficient
// when no phase has enough users.
func checkPhaseSRM(d Design, s Sample, sum SRMSummary) (SRMSummary, error) {
	if len(d.Phases) < 2 || !placed(s) {
		return sum, nil
	}
	tests := make([]PhaseSRM, len(d.Phases))
	for k, p := range d.Phases {
		tests[k] = PhaseSRM{Phase: p.Number, Observed: map[string]int64{}, Weights: map[string]float64{}, Gate: stats.GateInsufficient, PValue: 1}
	}
	settles := func(k int, t time.Time) bool {
		p := d.Phases[k]
		return p.Number > 1 && p.Start.After(d.Window.Start) && t.Before(p.Start.Add(PhaseSettle))
	}
	for _, sl := range d.Allocation {
		arm := s.Arms[sl.Variant]
		for k := range tests {
			tests[k].Observed[sl.Variant] = 0
		}
		if arm == nil {
			continue
		}
		for _, firsts := range [][]time.Time{arm.First, arm.CrossoverFirst} {
			for _, t := range firsts {
				k := experiments.PhaseAt(d.Phases, t)
				if settles(k, t) {
					tests[k].Settling++
					continue
				}
				tests[k].Observed[sl.Variant]++
			}
		}
	}
	var tested, sufficient []int
	for k, p := range d.Phases {
		var observed []int64
		var weights []float64
		var total int64
		for _, sl := range d.Allocation {
			w := p.Weights[sl.Variant]
			tests[k].Weights[sl.Variant] = w
			if w > 0 {
				n := tests[k].Observed[sl.Variant]
				observed, weights, total = append(observed, n), append(weights, w), total+n
			}
		}
		if len(observed) < 2 || total == 0 {
			continue
		}
		r, err := stats.SRM(observed, weights)
		if err != nil {
			return SRMSummary{}, fmt.Errorf("srm of phase %d: %w", p.Number, err)
		}
		tests[k].Gate, tests[k].PValue, tests[k].ChiSquare, tests[k].DF = r.Gate, r.PValue, r.ChiSquare, r.DF
		tested = append(tested, k)
		if r.Gate != stats.GateInsufficient {
			sufficient = append(sufficient, k)
		}
	}
	family := sufficient
	if len(family) == 0 {
		family = tested
	}
	out := sum
	out.SRMPhases = &SRMPhases{Phases: tests, FailedPhases: []int{}}
	out.PValue, out.ChiSquare, out.DF, out.Gate = 1, 0, 0, stats.GateInsufficient
	best := -1
	for _, k := range family {
		adj := math.Min(1, float64(len(family))*tests[k].PValue)
		tests[k].PAdjusted = &adj
		if best < 0 || tests[k].PValue < tests[best].PValue {
			best = k
		}
		if len(sufficient) > 0 && adj < stats.SRMFailP {
			out.FailedPhases = append(out.FailedPhases, tests[k].Phase)
		}
	}
	if best >= 0 {
		out.PValue, out.ChiSquare, out.DF = *tests[best].PAdjusted, tests[best].ChiSquare, tests[best].DF
	}
	switch {
	case len(sufficient) == 0:
		out.Gate = stats.GateInsufficient
	case len(out.FailedPhases) > 0:
		out.Gate = stats.GateFail
	default:
		out.Gate = stats.GatePass
	}
	return out, nil
}

// stratifies tells whether metric m is estimated phase by phase when the
// window has more than one phase with users: per-user means compared by
// welch_t or z_test (with or without CUPED).
func stratifies(m metrics.Resolved) bool {
	if m.Problem != "" || m.Kind.Spec().Compare != vocab.ByUser {
		return false
	}
	method, err := stats.ParseMethod(m.MethodDefault)
	return err == nil && (method == stats.WelchT || method == stats.ZTest)
}

// strata splits the kept users of both arms with a value of metric mi by
// the phase of their first exposure (with their pre-period values when
// cuped), one stratum per phase of the window.
func strata(k int, control, treatment cappedArm, mi int, cuped bool) []stats.Stratum {
	out := make([]stats.Stratum, k)
	for side, c := range []cappedArm{control, treatment} {
		if c.arm == nil || len(c.arm.Values[mi]) == 0 {
			continue
		}
		var pre []float64
		if cuped && mi < len(c.arm.Pre) {
			pre = c.arm.Pre[mi]
		}
		for _, u := range c.keep {
			v := c.arm.Values[mi][u]
			if math.IsNaN(v) {
				continue
			}
			s := &out[c.phase[u]]
			var x float64 // no pre-period value: 0
			if u < len(pre) {
				x = pre[u]
			}
			if side == 0 {
				s.Control = append(s.Control, v)
				if cuped {
					s.ControlPre = append(s.ControlPre, x)
				}
			} else {
				s.Treatment = append(s.Treatment, v)
				if cuped {
					s.TreatmentPre = append(s.TreatmentPre, x)
				}
			}
		}
	}
	if cuped {
		// CompareStratified reads covariates when any stratum has them:
		// every stratum needs its (possibly empty) slices set.
		for i := range out {
			if out[i].ControlPre == nil {
				out[i].ControlPre = []float64{}
			}
			if out[i].TreatmentPre == nil {
				out[i].TreatmentPre = []float64{}
			}
		}
	}
	return out
}
