// Package power answers the planning questions of an experiment: the
// minimum detectable effect after some days of traffic, or the days a
// given effect needs, per primary metric and treatment arm, for the
// fixed-horizon test and for the always-valid (sequential) reading, and
// what sequential reading costs against a fixed horizon (docs/power.md).
//
// Compute is the arithmetic on an aggregated sample (stats.MDE,
// stats.UsersForMDE, stats.DaysForMDE, checked against R); ForExperiment
// reads a running experiment's own data, ForDraft the org's recent data
// for a config that has none yet. Both read events only through
// results.Aggregator, so they work on every analytics engine.
package power

import (
	"errors"
	"fmt"
	"math"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/results"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// Bounds of a question; documented in docs/power.md.
const (
	MaxDays = 3650
	MaxMDE  = 1e6 // as a metric's mde: a fraction of control
	// DefaultDays is the horizon asked about when neither days nor mde is.
	DefaultDays = 14
)

// Question is what a power request asks: the MDE after Days more days of
// traffic, or the further days needed to detect a relative change MDE
// (a fraction of the control mean, as a metric's mde). Exactly one is set.
type Question struct {
	Days int
	MDE  float64
}

// Data is what Compute reads: the aggregated users and where they come
// from.
type Data struct {
	// Source is SourceExperiment (the arms of the running experiment) or
	// SourceOrgRecent (every user of the org's recent experiments, pooled
	// in Pooled: a draft has no arms yet).
	Source  string
	Sample  results.Sample
	Pooled  *results.Arm
	Metrics []metrics.Resolved
	Control string
	Arms    []bucketing.Slice
	// Days is the span the data covers, in days (at least 1); Users the
	// distinct exposed users in it (all arms). Their ratio is the traffic
	// the answer extrapolates.
	Days  float64
	Users int64
	// NStar is the sequential tuning in force and NStarSource where it
	// comes from (experiments.NStarSource...).
	NStar       float64
	NStarSource string
}

// Where the variance and traffic of an answer come from.
const (
	SourceExperiment = "experiment" // the running experiment's own data
	SourceOrgRecent  = "org_recent" // the org's recent experiments' data (a draft)
)

// Answer is the response of both power routes.
type Answer struct {
	ExperimentID string  `json:"experiment_id,omitempty"`
	Source       string  `json:"source"`
	DataDays     float64 `json:"data_days"`
	ExposedUsers int64   `json:"exposed_users"`
	UsersPerDay  float64 `json:"users_per_day"`
	// Days or MDE echo the question; the other is null.
	Days        *int     `json:"days"`
	MDE         *float64 `json:"mde"`
	Alpha       float64  `json:"alpha"`
	Power       float64  `json:"power"`
	Inference   string   `json:"inference"`
	NStar       float64  `json:"n_star"`
	NStarSource string   `json:"n_star_source"`
	Metrics     []Metric `json:"metrics"`
}

// Metric is the answer for one metric and treatment arm.
type Metric struct {
	Metric  string `json:"metric"`
	Variant string `json:"variant"`
	// Proportion: the fixed-horizon numbers are the two-proportion
	// z-test's; Baseline is then the control rate, else the control mean.
	Proportion bool    `json:"proportion"`
	Baseline   float64 `json:"baseline"`
	// SD is the per-user standard deviation pooled within arms (for a
	// ratio, of the delta method's linearised values; for a proportion,
	// sqrt(p(1-p)) at the baseline).
	SD float64 `json:"sd"`
	// UsersSoFar are the pair's users already measured (0 for a draft);
	// PairUsersPerDay the pair's share of the traffic; TreatmentShare the
	// treatment's share of the pair.
	UsersSoFar      int64   `json:"users_so_far"`
	PairUsersPerDay float64 `json:"pair_users_per_day"`
	TreatmentShare  float64 `json:"treatment_share"`
	FixedHorizon    *Plan   `json:"fixed_horizon"`
	Sequential      *Plan   `json:"sequential"`
	// SequentialCost is how many times the fixed-horizon test's users the
	// sequential reading needs to detect the same effect with the same
	// power (for a days question, the fixed-horizon MDE at that horizon).
	SequentialCost *float64 `json:"sequential_cost"`
	// Problem says why there are no numbers (no data, no variance, an
	// effect out of reach); the plans are then null or partial.
	Problem string `json:"problem,omitempty"`
}

// Plan is one inference's answer: the users (the pair's, in total) at
// which the effect is detected with the answer's power, the absolute and
// relative effect, and the further days.
type Plan struct {
	Users       float64  `json:"users"`
	MDE         float64  `json:"mde_absolute"`
	MDERelative *float64 `json:"mde_relative"`
	Days        *float64 `json:"days"`
}

// Compute answers q on d for every metric of d.Metrics and every
// treatment arm.
func Compute(d Data, q Question, inference string) Answer {
	rate := 0.0
	if d.Days > 0 {
		rate = float64(d.Users) / d.Days
	}
	a := Answer{Source: d.Source, DataDays: d.Days, ExposedUsers: d.Users, UsersPerDay: rate,
		Alpha: stats.DefaultAlpha, Power: stats.DefaultPower, Inference: inference,
		NStar: d.NStar, NStarSource: d.NStarSource, Metrics: []Metric{}}
	if q.Days > 0 {
		a.Days = &q.Days
	} else {
		a.MDE = &q.MDE
	}
	total, wc := 0.0, 0.0
	for _, s := range d.Arms {
		total += s.Weight
		if s.Variant == d.Control {
			wc = s.Weight
		}
	}
	for mi, m := range d.Metrics {
		for _, s := range d.Arms {
			if s.Variant == d.Control {
				continue
			}
			out := Metric{Metric: m.Name, Variant: s.Variant}
			if !(wc > 0 && s.Weight > 0) {
				// A parked arm (weight 0) gets no new users to plan with.
				out.Problem = "the variant or control has weight 0: no new users to plan with"
				a.Metrics = append(a.Metrics, out)
				continue
			}
			out.TreatmentShare = s.Weight / (wc + s.Weight)
			out.PairUsersPerDay = rate * (wc + s.Weight) / total
			out.Problem = d.compute(&out, m, mi, s.Variant, q)
			a.Metrics = append(a.Metrics, out)
		}
	}
	return a
}

// compute fills out for metric m (index mi) against treatment variant;
// a non-empty result says why it could not.
func (d Data) compute(out *Metric, m metrics.Resolved, mi int, variant string, q Question) string {
	if m.Problem != "" {
		return m.Problem
	}
	if m.Kind.Spec().Compare == vocab.ByCall {
		return fmt.Sprintf("power is not computed for %s metrics: their comparison is over calls, not users", m.Kind)
	}
	var groups [][]float64 // the per-user values whose variance is pooled
	var base []float64     // the values the baseline is the mean of
	switch {
	case d.Pooled != nil:
		base = userValues(d.Pooled, m, mi)
		groups = [][]float64{base}
	default:
		c, t := d.Sample.Arms[d.Control], d.Sample.Arms[variant]
		base = userValues(c, m, mi)
		groups = [][]float64{base, userValues(t, m, mi)}
		out.UsersSoFar = users(c) + users(t)
	}
	sd, n := pooledSD(groups)
	out.Baseline = mean(base)
	if n < 2 {
		return "no data for this metric's source yet: at least 2 users with a value are needed"
	}
	design := stats.PowerDesign{TreatmentShare: out.TreatmentShare, NStar: d.NStar}
	if m.MethodDefault == string(stats.ZTest) {
		out.Proportion, design.Proportion, design.Baseline = true, true, out.Baseline
		if !(out.Baseline > 0 && out.Baseline < 1) {
			return fmt.Sprintf("the control rate is %v: a rate of 0 or 1 has no variance to plan with", out.Baseline)
		}
		sd = math.Sqrt(out.Baseline * (1 - out.Baseline))
	}
	out.SD, design.SD = sd, sd
	if !(sd > 0) {
		return "the metric's values do not vary: there is no variance to plan with"
	}
	return d.plan(out, design, q)
}

// plan answers q for one comparison, both inferences.
func (d Data) plan(out *Metric, design stats.PowerDesign, q Question) string {
	seq := design
	seq.Sequential = true
	var problems []string
	relative := func(abs float64) *float64 {
		if out.Baseline == 0 {
			return nil
		}
		r := abs / math.Abs(out.Baseline)
		return &r
	}
	if q.Days > 0 {
		n := float64(out.UsersSoFar) + out.PairUsersPerDay*float64(q.Days)
		if !(n > 2) {
			return fmt.Sprintf("%g users after %d days: no traffic to plan with", n, q.Days)
		}
		days := float64(q.Days)
		for _, p := range []struct {
			d   stats.PowerDesign
			dst **Plan
		}{{design, &out.FixedHorizon}, {seq, &out.Sequential}} {
			mde, err := stats.MDE(p.d, n)
			if err != nil {
				problems = append(problems, reason(err))
				continue
			}
			*p.dst = &Plan{Users: n, MDE: mde, MDERelative: relative(mde), Days: &days}
		}
		if out.FixedHorizon != nil {
			out.SequentialCost = cost(design, seq, out.FixedHorizon.MDE)
		}
		return join(problems)
	}
	if out.Baseline == 0 {
		return "the control mean is 0: a relative mde has no absolute size"
	}
	abs := q.MDE * math.Abs(out.Baseline)
	for _, p := range []struct {
		d   stats.PowerDesign
		dst **Plan
	}{{design, &out.FixedHorizon}, {seq, &out.Sequential}} {
		need, err := stats.UsersForMDE(p.d, abs)
		if err != nil {
			problems = append(problems, reason(err))
			continue
		}
		plan := &Plan{Users: need, MDE: abs, MDERelative: &q.MDE}
		if days, err := stats.DaysForMDE(p.d, abs, float64(out.UsersSoFar), out.PairUsersPerDay); err == nil {
			plan.Days = &days
		} else {
			problems = append(problems, reason(err))
		}
		*p.dst = plan
	}
	if out.FixedHorizon != nil && out.Sequential != nil {
		r := out.Sequential.Users / out.FixedHorizon.Users
		out.SequentialCost = &r
	}
	return join(problems)
}

// cost is the sequential reading's users over the fixed horizon's for
// detecting effect; nil when either is out of reach.
func cost(fixed, seq stats.PowerDesign, effect float64) *float64 {
	nf, err := stats.UsersForMDE(fixed, effect)
	if err != nil {
		return nil
	}
	ns, err := stats.UsersForMDE(seq, effect)
	if err != nil {
		return nil
	}
	r := ns / nf
	return &r
}

func reason(err error) string {
	if errors.Is(err, stats.ErrUnreachable) {
		return "out of reach: " + err.Error()
	}
	return err.Error()
}

func join(ps []string) string {
	out := ""
	for i, p := range ps {
		if i > 0 {
			out += "; "
		}
		out += p
	}
	return out
}

// users is an arm's users in the comparison (crossover users are left
// out, as the results leave them out).
func users(a *results.Arm) int64 {
	if a == nil {
		return 0
	}
	return int64(len(a.UserIDs))
}

// userValues are the arm's per-user values of metric mi, users without a
// value left out. A ratio metric's are the delta method's linearised
// values (num − R·den)/mean(den), R the arm's ratio, whose variance over
// n is the ratio's; their mean is shifted to R so the baseline is the
// ratio.
func userValues(a *results.Arm, m metrics.Resolved, mi int) []float64 {
	if a == nil || mi >= len(a.Values) {
		return nil
	}
	vals := a.Values[mi]
	if m.Kind.Spec().Compare != vocab.ByRatio {
		out := make([]float64, 0, len(vals))
		for _, v := range vals {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				out = append(out, v)
			}
		}
		return out
	}
	if mi >= len(a.Den) || len(vals) == 0 || len(a.Den[mi]) != len(vals) {
		return nil
	}
	var num, den float64
	for u, v := range vals {
		num += v
		den += a.Den[mi][u]
	}
	if !(den > 0) {
		return nil
	}
	r, meanDen := num/den, den/float64(len(vals))
	out := make([]float64, len(vals))
	for u, v := range vals {
		out[u] = r + (v-r*a.Den[mi][u])/meanDen
	}
	return out
}

// pooledSD is the within-group pooled standard deviation of groups (the
// effect's variance does not include the difference of the arms' means)
// and their total size.
func pooledSD(groups [][]float64) (float64, int) {
	var ss float64
	n, df := 0, 0
	for _, g := range groups {
		if len(g) < 2 {
			n += len(g)
			continue
		}
		mu := mean(g)
		for _, v := range g {
			ss += (v - mu) * (v - mu)
		}
		n += len(g)
		df += len(g) - 1
	}
	if df == 0 {
		return 0, n
	}
	return math.Sqrt(ss / float64(df)), n
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, v := range xs {
		s += v
	}
	return s / float64(len(xs))
}

// inferenceOf names a config's headline inference.
func inferenceOf(cfg *experiments.Config) string {
	if cfg.Sequential() {
		return experiments.InferenceSequential
	}
	return experiments.InferenceFixedHorizon
}
