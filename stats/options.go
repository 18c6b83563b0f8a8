package stats

import "fmt"

// Defaults applied to zero-valued Options fields.
const (
	DefaultAlpha    = 0.05
	DefaultMaxDraws = 10_000
	// DefaultMaxWork bounds draws × values per draw for the resampling
	// tests, so a large arm with a large plan budget still finishes in
	// tens of seconds on two cores.
	DefaultMaxWork = 10_000_000_000
	// minDraws keeps a work-capped resampling test able to reach p = 0.01.
	minDraws = 100
)

// Options tunes a comparison. The zero value means: alpha 0.05, 10,000
// draws, seed 0, work bounded by DefaultMaxWork.
type Options struct {
	Alpha    float64 // two-sided level; the CI has coverage 1 - Alpha
	MaxDraws int     // permutation / bootstrap draw budget (plan's max_permutations)
	Seed     uint64  // same seed and input give the same resampling result
	MaxWork  int64   // cap on draws × values resampled per draw; reduces DrawsUsed
	// NStar is the total sample size at which the always-valid confidence
	// sequence is tightest (sequential_tuning); 0 means DefaultNStar.
	NStar float64
}

// withDefaults fills zero fields and rejects values that make no sense.
func (o Options) withDefaults() (Options, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return o, fmt.Errorf("stats: alpha %v outside (0, 1)", o.Alpha)
	}
	if o.MaxDraws == 0 {
		o.MaxDraws = DefaultMaxDraws
	}
	if o.MaxDraws < 0 {
		return o, fmt.Errorf("stats: max draws %d is negative", o.MaxDraws)
	}
	if o.MaxWork == 0 {
		o.MaxWork = DefaultMaxWork
	}
	if o.MaxWork < 0 {
		return o, fmt.Errorf("stats: max work %d is negative", o.MaxWork)
	}
	if o.NStar == 0 {
		o.NStar = DefaultNStar
	}
	if err := validNStar(o.NStar); err != nil {
		return o, err
	}
	return o, nil
}

// drawsFor is the number of resampling draws to run when each draw touches
// perDraw values: the budget, cut by MaxWork but never below minDraws.
func (o Options) drawsFor(perDraw int) int {
	byWork := o.MaxWork / int64(max(perDraw, 1))
	draws := int64(o.MaxDraws)
	if byWork < draws {
		draws = max(byWork, int64(min(o.MaxDraws, minDraws)))
	}
	return int(draws)
}
