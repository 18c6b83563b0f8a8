package vocab

import (
	"github.com/expd/expd/stats"
)

// Kind is a metric's kind: what its per-user (or per-call) value is.
type Kind string

// The metric kinds. Each has one entry in Kinds.
const (
	Proportion Kind = "proportion"
	Mean       Kind = "mean"
	Sum        Kind = "sum"
	Count      Kind = "count"
	Quantile   Kind = "quantile"
	Ratio      Kind = "ratio"
)

// Selection says which events of a metric's source feed a user's sum and
// count.
type Selection int

const (
	// SelectAll takes every event of the source.
	SelectAll Selection = iota
	// SelectNotNull takes the events that carry the value.
	SelectNotNull
	// SelectNonZero takes the events whose value is non-zero (for error:
	// an error was recorded); a business event is its outcome whatever
	// its value, so it is always taken.
	SelectNonZero
)

// Reduce says how a user's sum and count of selected values become the
// per-user value.
type Reduce int

const (
	ReduceSum     Reduce = iota // the sum: 0 for an exposed user with none
	ReduceCount                 // the number of selected events
	ReduceAverage               // sum / count; no value (the user is left out) when count is 0
	ReduceAny                   // 1 when any event was selected, else 0
)

// PerUser turns a user's sum and count into the per-user value; ok is
// false when the user has no value (docs/results.md).
func (r Reduce) PerUser(sum float64, count int64) (v float64, ok bool) {
	switch r {
	case ReduceAny:
		if count > 0 {
			return 1, true
		}
		return 0, true
	case ReduceCount:
		return float64(count), true
	case ReduceAverage:
		if count == 0 {
			return 0, false
		}
		return sum / float64(count), true
	default:
		return sum, true
	}
}

// Comparison says what two arms are compared on.
type Comparison int

const (
	// ByUser compares per-user values with the metric's method_default
	// (and CUPED when the method has that form).
	ByUser Comparison = iota
	// ByCall compares a quantile of per-call values, clustered by user.
	ByCall
	// ByRatio compares ratios of per-user sums (delta method).
	ByRatio
)

// KindSpec is one metric kind: how a metric of it is validated, how its
// per-user value is aggregated from events, and how arms are compared.
type KindSpec struct {
	Name Kind

	// Validation. Test is the kind's one test (method_default must be it
	// or omitted); empty, method_default is one of stats.Methods, z_test
	// only when ZeroOne (per-user values are 0 or 1). NeedsQuantile and
	// NeedsDenominator: the metric's quantile or denominator field is
	// required with a source, and refused on other kinds. PerCall: the
	// source must be a Numeric model-call field, read call by call.
	Test             string
	ZeroOne          bool
	NeedsQuantile    bool
	NeedsDenominator bool
	PerCall          bool
	// Scores: the kind may read scores (source event_type score). Such a
	// metric aggregates per user as the mean over the user's scored calls
	// (ForSource); a ZeroOne kind reads a call's score as 1 when non-zero.
	Scores bool

	// Aggregation. Select and Reduce make the per-user value from the
	// source's events. AggregateAs, when set, names the kind whose
	// Select and Reduce apply instead (a ratio's numerator is a sum; a
	// quantile's calls are a mean's selection), so stored rollups keyed by
	// it are shared.
	Select      Selection
	Reduce      Reduce
	AggregateAs Kind

	// Comparison.
	Compare Comparison
}

// Kinds is every metric kind.
var Kinds = []KindSpec{
	{Name: Proportion, ZeroOne: true, Scores: true, Select: SelectNonZero, Reduce: ReduceAny, Compare: ByUser},
	{Name: Mean, Scores: true, Select: SelectNotNull, Reduce: ReduceAverage, Compare: ByUser},
	{Name: Sum, Select: SelectAll, Reduce: ReduceSum, Compare: ByUser},
	{Name: Count, Select: SelectAll, Reduce: ReduceCount, Compare: ByUser},
	{Name: Quantile, Test: stats.TestClusteredQuantile, NeedsQuantile: true, PerCall: true, AggregateAs: Mean, Compare: ByCall},
	{Name: Ratio, Test: stats.TestDeltaRatio, NeedsDenominator: true, AggregateAs: Sum, Compare: ByRatio},
}

// ForSource is s as it applies to a source of type t. Over scores, a
// user's value is the mean over their scored calls (the calls without a
// score are not selected; a user with none is left out, not 0), so it is
// not 0 or 1 even for a proportion: ZeroOne no longer holds
// (docs/quality.md, "Score metrics").
func (s KindSpec) ForSource(t RecordType) KindSpec {
	if t == TypeScore {
		s.Select, s.Reduce, s.ZeroOne = SelectNotNull, ReduceAverage, false
	}
	return s
}

// Spec returns the entry of kind k.
func Spec(k Kind) (KindSpec, bool) {
	i, ok := kindIndex[k]
	if !ok {
		return KindSpec{}, false
	}
	return Kinds[i], true
}

// kindIndex is each kind's index in Kinds. A run looks kinds up per user
// and metric; a scan of Kinds copied every entry (docs/scale.md).
var kindIndex = func() map[Kind]int {
	m := make(map[Kind]int, len(Kinds))
	for i, s := range Kinds {
		m[s.Name] = i
	}
	return m
}()

// Valid tells whether k is a metric kind.
func (k Kind) Valid() bool {
	_, ok := Spec(k)
	return ok
}

// Spec is k's entry; the zero KindSpec for an unknown kind.
func (k Kind) Spec() KindSpec {
	s, _ := Spec(k)
	return s
}

// AggregatedAs is the kind whose Select and Reduce give k's per-user
// column: its AggregateAs, or k itself.
func (k Kind) AggregatedAs() Kind {
	if s := k.Spec(); s.AggregateAs != "" {
		return s.AggregateAs
	}
	return k
}

// ByUser tells whether k is compared on per-user values (and has them:
// a quantile has calls, a ratio numerators and denominators).
func (k Kind) ByUser() bool { return k.Valid() && k.Spec().Compare == ByUser }

// KindNames lists the kinds; simple ones only lists those that need no
// option beyond a source (what the dashboard's form offers).
func KindNames(simple bool) []Kind {
	var out []Kind
	for _, s := range Kinds {
		if !simple || (!s.NeedsQuantile && !s.NeedsDenominator) {
			out = append(out, s.Name)
		}
	}
	return out
}

// ScoreKinds lists the kinds that may read scores.
func ScoreKinds() []Kind {
	var out []Kind
	for _, s := range Kinds {
		if s.Scores {
			out = append(out, s.Name)
		}
	}
	return out
}
