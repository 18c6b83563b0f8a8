package verdict

import (
	"encoding/json"
	"math"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/results"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// Recommendations.
const (
	Ship        = "ship"
	KeepRunning = "keep_running"
	Stop        = "stop"
)

// Reason codes (docs/results.md, "Verdict").
const (
	ReasonPrimaryBetter       = "primary_better"     // the shipped arm's primary metric is better
	ReasonNonInferior         = "non_inferior"       // ... or non-inferior within its margin
	ReasonBetter              = "better"             // another metric of the shipped arm is better (what it wins)
	ReasonSRM                 = "srm_mismatch"       // the arms' shares do not match the weights: stop and investigate
	ReasonGuardrailBreached   = "guardrail_breached" // a guardrail rule's interval lies beyond its allowed change
	ReasonGuardrailWorse      = "guardrail_worse"    // a guardrail metric (no rule) is worse
	ReasonGuardrailNoData     = "guardrail_not_enough_data"
	ReasonInferior            = "inferior"             // a non-inferiority margin is crossed
	ReasonPrimaryWorse        = "primary_worse"        // every candidate arm is worse on a primary metric
	ReasonPrimaryInconclusive = "primary_inconclusive" // no primary metric has decided yet
	ReasonGoalNotSet          = "goal_not_set"         // a primary metric has no goal: its direction is unknown
	ReasonNoPrimary           = "no_primary_metric"    // the experiment has no primary metric
	ReasonPreliminary         = "preliminary"          // too little data (results.MinWindowDays, MinArmUsers)
	ReasonCrossover           = "crossover"            // more than 1 % of an arm saw several variants
	ReasonMDEOutOfReach       = "mde_out_of_reach"     // the MDE cannot be reached within the planned duration
	ReasonNoData              = "no_data"              // the run has no comparison
)

// Guardrail statuses.
const (
	GuardrailPass   = "pass"
	GuardrailBreach = "breached"
	GuardrailNoData = "not_enough_data"
)

// Verdict is one run's recommendation.
type Verdict struct {
	Recommendation string   `json:"recommendation"`
	Variant        string   `json:"variant,omitempty"` // ship: the arm to ship
	Reasons        []Reason `json:"reasons"`
	// DaysToMDE (keep_running): the further days until the primary
	// metric's interval could exclude its MDE; null when unknown.
	DaysToMDE *float64 `json:"days_to_mde"`
	Arms      []Arm    `json:"arms"`
}

// Reason is one reason of a verdict.
type Reason struct {
	Code    string `json:"code"`
	Metric  string `json:"metric,omitempty"`
	Variant string `json:"variant,omitempty"`
}

// Arm is how one treatment arm read.
type Arm struct {
	Variant        string          `json:"variant"`
	Primary        []MetricCall    `json:"primary"`
	Guardrails     []GuardrailCall `json:"guardrails"`
	NonInferiority []MarginCall    `json:"non_inferiority"`
	SRM            string          `json:"srm"`
	DataHealth     string          `json:"data_health"` // ok | preliminary | crossover
	Shippable      bool            `json:"shippable"`
}

// MetricCall is a primary metric of an arm.
type MetricCall struct {
	Metric string `json:"metric"`
	Goal   string `json:"goal,omitempty"`
	Judgement
}

// GuardrailCall is a guardrail rule of an arm.
type GuardrailCall struct {
	Metric string `json:"metric"`
	Status string `json:"status"`
}

// MarginCall is a non-inferiority decision of an arm.
type MarginCall struct {
	Metric   string `json:"metric"`
	Decision string `json:"decision"`
}

// Input is what Decide reads: a run's rows and SRM gate, the metrics of
// the config version the run analysed (goals resolved), and how long the
// experiment has run and may run.
type Input struct {
	Control  string
	Variants []string // treatment arms, allocation order
	Metrics  []experiments.Metric
	Rows     []results.Row
	SRMGate  string
	// WindowDays the run covered; PlannedDays the experiment's planned
	// duration from its start (0: none planned).
	WindowDays  int
	PlannedDays int
	// DaysToMDE estimates the further days a row needs before a relative
	// change of mde would be detected; ok false when it cannot tell. Nil:
	// PowerDays.
	DaysToMDE func(r results.Row, mde float64, windowDays int) (days float64, ok bool)
}

// Decide applies the rules of docs/results.md ("Verdict") in order: a
// failed SRM stops; every arm breaching a guardrail stops; an arm whose
// primary metrics are each better or non-inferior, with something better,
// no guardrail breached or short of data, no margin crossed and healthy
// data ships (the best such arm); every arm worse on a primary stops; an
// MDE out of reach within the planned duration stops; else keep running.
func Decide(in Input) Verdict {
	byKey := map[[2]string]results.Row{}
	for _, r := range in.Rows {
		byKey[[2]string{r.Metric, r.Variant}] = r
	}
	v := Verdict{Reasons: []Reason{}, Arms: []Arm{}}
	if len(in.Rows) == 0 {
		v.Recommendation = KeepRunning
		v.Reasons = append(v.Reasons, Reason{Code: ReasonNoData})
		return v
	}
	var primaries []experiments.Metric
	for _, m := range in.Metrics {
		if m.Category == "primary" {
			primaries = append(primaries, m)
			if m.Goal == "" {
				v.Reasons = append(v.Reasons, Reason{Code: ReasonGoalNotSet, Metric: m.Name})
			}
		}
	}
	if len(primaries) == 0 {
		v.Reasons = append(v.Reasons, Reason{Code: ReasonNoPrimary})
	}
	srm := in.SRMGate
	if srm == "" {
		srm = stats.GateInsufficient
	}
	var candidates []armState // not breached
	var breachReasons, blockReasons []Reason
	for _, variant := range in.Variants {
		st := readArm(in, variant, primaries, byKey, srm)
		v.Arms = append(v.Arms, st.Arm)
		breachReasons = append(breachReasons, st.breaches...)
		if len(st.breaches) == 0 {
			candidates = append(candidates, st)
			blockReasons = append(blockReasons, st.blocks...)
		}
	}
	switch {
	case srm == stats.GateFail:
		v.Recommendation = Stop
		v.Reasons = append([]Reason{{Code: ReasonSRM}}, v.Reasons...)
		return v
	case len(candidates) == 0 && len(breachReasons) > 0:
		v.Recommendation = Stop
		v.Reasons = append(breachReasons, v.Reasons...)
		return v
	}
	if best, ok := bestShippable(candidates); ok {
		v.Recommendation, v.Variant = Ship, best.Variant
		v.Reasons = append(best.wins, breachReasons...)
		return v
	}
	allWorse := len(candidates) > 0
	for _, c := range candidates {
		allWorse = allWorse && c.primaryWorse
	}
	v.Reasons = append(v.Reasons, breachReasons...)
	v.Reasons = append(v.Reasons, blockReasons...)
	if allWorse && len(primaries) > 0 {
		v.Recommendation = Stop
		return v
	}
	v.Recommendation = KeepRunning
	v.DaysToMDE = daysToMDE(in, primaries, candidates, byKey)
	if v.DaysToMDE != nil && in.PlannedDays > 0 && float64(in.WindowDays)+*v.DaysToMDE > float64(in.PlannedDays) {
		v.Recommendation = Stop
		v.Reasons = append([]Reason{{Code: ReasonMDEOutOfReach, Metric: firstWithMDE(primaries)}}, v.Reasons...)
	}
	return v
}

// armState is an arm's reading plus what the recommendation needs.
type armState struct {
	Arm
	breaches     []Reason // guardrail rules breached: the arm is out
	blocks       []Reason // why it cannot ship yet
	wins         []Reason // what it wins, when shippable
	primaryWorse bool
	better       int     // primary metrics better
	lead         float64 // the first primary's estimate in the goal's direction
}

func readArm(in Input, variant string, primaries []experiments.Metric, byKey map[[2]string]results.Row, srm string) armState {
	st := armState{Arm: Arm{Variant: variant, Primary: []MetricCall{}, Guardrails: []GuardrailCall{}, NonInferiority: []MarginCall{},
		SRM: srm, DataHealth: "ok"}}
	block := func(code, metric string) {
		st.blocks = append(st.blocks, Reason{Code: code, Metric: metric, Variant: variant})
	}
	prelim, crossover := false, false
	for _, r := range in.Rows {
		if r.Variant != variant {
			continue
		}
		prelim = prelim || r.Preliminary
		crossover = crossover || analysisOf(r).CrossoverHealth == "fail"
	}
	switch {
	case crossover:
		st.DataHealth = "crossover"
		block(ReasonCrossover, "")
	case prelim:
		st.DataHealth = "preliminary"
		block(ReasonPreliminary, "")
	}
	nonInferior := map[string]bool{}
	anyBetter := false
	for _, m := range in.Metrics {
		r, ok := byKey[[2]string{m.Name, variant}]
		if !ok {
			continue
		}
		if m.NonInferiorityMargin != nil {
			d := stats.Inconclusive
			if ni := analysisOf(r).NonInferiority; ni != nil {
				d = ni.Decision
			}
			st.NonInferiority = append(st.NonInferiority, MarginCall{Metric: m.Name, Decision: d})
			nonInferior[m.Name] = d == stats.NonInferior
			if d == stats.Inferior {
				block(ReasonInferior, m.Name)
			}
		}
		if g := m.Guardrail; g != nil {
			status := guardrailStatus(g, r)
			st.Guardrails = append(st.Guardrails, GuardrailCall{Metric: m.Name, Status: status})
			switch status {
			case GuardrailBreach:
				st.breaches = append(st.breaches, Reason{Code: ReasonGuardrailBreached, Metric: m.Name, Variant: variant})
			case GuardrailNoData:
				block(ReasonGuardrailNoData, m.Name)
			}
		}
		j := Judge(r, m.Goal)
		switch {
		case j.Outcome == Better && m.Category != "primary":
			anyBetter = true
			st.wins = append(st.wins, Reason{Code: ReasonBetter, Metric: m.Name, Variant: variant})
		case j.Outcome == Worse && m.Category == "guardrail" && m.Guardrail == nil:
			block(ReasonGuardrailWorse, m.Name)
		}
	}
	shippable := len(primaries) > 0
	for i, m := range primaries {
		r, ok := byKey[[2]string{m.Name, variant}]
		j := Judgement{Outcome: NoTest}
		if ok {
			j = Judge(r, m.Goal)
		}
		st.Primary = append(st.Primary, MetricCall{Metric: m.Name, Goal: m.Goal, Judgement: j})
		switch {
		case m.Goal == "":
			shippable = false
		case j.Outcome == Better:
			st.better++
			anyBetter = true
			st.wins = append([]Reason{{Code: ReasonPrimaryBetter, Metric: m.Name, Variant: variant}}, st.wins...)
		case j.Outcome == Worse:
			st.primaryWorse = true
			shippable = false
			block(ReasonPrimaryWorse, m.Name)
		case nonInferior[m.Name]:
			st.wins = append(st.wins, Reason{Code: ReasonNonInferior, Metric: m.Name, Variant: variant})
		default:
			shippable = false
			block(ReasonPrimaryInconclusive, m.Name)
		}
		if i == 0 {
			st.lead = j.Estimate
			if m.Goal == experiments.GoalDecrease {
				st.lead = -st.lead
			}
		}
	}
	st.Shippable = shippable && anyBetter && len(st.breaches) == 0 && len(st.blocks) == 0
	return st
}

// guardrailStatus reads a rule on the interval its scale names, as the
// guardrails package does (experiments.Guardrail.Breached).
func guardrailStatus(g *experiments.Guardrail, r results.Row) string {
	if r.Undefined != "" || r.Preliminary {
		return GuardrailNoData
	}
	low, high := r.CILow, r.CIHigh
	if g.Relative {
		if r.RelCILow == nil || r.RelCIHigh == nil {
			return GuardrailNoData
		}
		low, high = *r.RelCILow, *r.RelCIHigh
	}
	breached, ok := g.Breached(low, high)
	switch {
	case !ok:
		return GuardrailNoData
	case breached:
		return GuardrailBreach
	}
	return GuardrailPass
}

// bestShippable is the shippable arm with the most better primary
// metrics, then the largest first-primary estimate in its goal's
// direction.
func bestShippable(arms []armState) (armState, bool) {
	var best armState
	found := false
	for _, a := range arms {
		if !a.Shippable {
			continue
		}
		if !found || a.better > best.better || a.better == best.better && a.lead > best.lead {
			best, found = a, true
		}
	}
	return best, found
}

// daysToMDE is the further days until the first primary metric with an
// MDE could exclude it in every candidate arm still undecided on it.
func daysToMDE(in Input, primaries []experiments.Metric, arms []armState, byKey map[[2]string]results.Row) *float64 {
	est := in.DaysToMDE
	if est == nil {
		est = PowerDays
	}
	name := firstWithMDE(primaries)
	if name == "" {
		return nil
	}
	var mde float64
	for _, m := range primaries {
		if m.Name == name {
			mde = *m.MDE
		}
	}
	worst, found := 0.0, false
	for _, a := range arms {
		r, ok := byKey[[2]string{name, a.Variant}]
		if !ok {
			continue
		}
		d, ok := est(r, mde, in.WindowDays)
		if !ok {
			return nil
		}
		worst, found = math.Max(worst, d), true
	}
	if !found {
		return nil
	}
	worst = math.Ceil(math.Max(worst, 0))
	return &worst
}

func firstWithMDE(primaries []experiments.Metric) string {
	for _, m := range primaries {
		if m.MDE != nil && m.Goal != "" {
			return m.Name
		}
	}
	return ""
}

// PowerDays is the further days until the row's comparison detects a
// relative change of mde with 80 % power (stats.DaysForMDE, the power
// computation of docs/results.md "Power"), from its control arm's mean
// and standard deviation (a proportion: its rate), its arms' split, its
// inference mode, and the users per day it has seen so far. ok is false
// without a distribution or when the MDE is out of reach at any traffic.
func PowerDays(r results.Row, mde float64, windowDays int) (float64, bool) {
	var dd results.Distribution
	if r.Undefined != "" || windowDays < 1 || !(mde > 0) || json.Unmarshal(r.Distribution, &dd) != nil {
		return 0, false
	}
	ctl, ok := dd.Arms[r.ControlVariant]
	n := float64(r.NControl + r.NTreatment)
	if !ok || !(ctl.Mean != 0) || n <= 0 {
		return 0, false
	}
	d := stats.PowerDesign{SD: ctl.SD, TreatmentShare: float64(r.NTreatment) / n, Sequential: r.Sequential}
	if r.Kind == string(vocab.Proportion) && ctl.Mean > 0 && ctl.Mean < 1 {
		d.Proportion, d.Baseline = true, ctl.Mean
	}
	days, err := stats.DaysForMDE(d, mde*math.Abs(ctl.Mean), n, n/float64(windowDays))
	if err != nil || math.IsInf(days, 0) {
		return 0, false
	}
	return days, true
}

func analysisOf(r results.Row) results.RowAnalysis {
	var a results.RowAnalysis
	_ = decodeAnalysis(r, &a) // an unreadable column only hides its details
	return a
}
