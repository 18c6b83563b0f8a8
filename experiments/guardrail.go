package experiments

import (
	"math"

	"github.com/expd/expd/validate"
)

// Guardrail is a metric's automatic protection (docs/lifecycle.md): when a
// run's headline interval of a treatment shows the metric moved in
// BadDirection by more than MaxChange, Action is taken.
type Guardrail struct {
	BadDirection string  `json:"bad_direction"` // increase | decrease
	MaxChange    float64 `json:"max_change"`    // >= 0; a fraction when Relative
	Relative     bool    `json:"relative"`
	Action       string  `json:"action"` // stop | alert
}

// Guardrail directions and actions.
const (
	GuardrailIncrease = "increase"
	GuardrailDecrease = "decrease"
	GuardrailStop     = "stop"
	GuardrailAlert    = "alert"
)

// maxGuardrailChange bounds max_change: a larger allowance guards nothing
// and would only hide a typo.
const maxGuardrailChange = 1e6

func (g *Guardrail) validate(errs *validate.Errors, field, goal string) {
	badDirection(errs, field+".bad_direction", &g.BadDirection, goal)
	checkEnum(errs, field+".action", g.Action, set(GuardrailStop, GuardrailAlert))
	switch {
	case math.IsNaN(g.MaxChange) || g.MaxChange < 0:
		errs.Add(field+".max_change", "must be a number >= 0")
	case g.MaxChange > maxGuardrailChange:
		errs.Add(field+".max_change", "must be at most %g", float64(maxGuardrailChange))
	}
}

// Breached tells whether an interval [low, high] of the treatment's change
// excludes the allowed change in the bad direction: the whole interval
// lies beyond it. ok is false when the interval is undefined.
func (g *Guardrail) Breached(low, high float64) (breached, ok bool) {
	if math.IsNaN(low) || math.IsNaN(high) || math.IsInf(low, 0) && math.IsInf(high, 0) {
		return false, false
	}
	if g.BadDirection == GuardrailIncrease {
		return low > g.MaxChange, true
	}
	return high < -g.MaxChange, true
}
