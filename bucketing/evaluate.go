package bucketing

import (
	"errors"
	"fmt"

	"github.com/expd/expd/sdk/go/targeting"
)

// ReasonCode says which rule of Evaluate decided a user's variant: the
// reason_code of POST /v1/assign and of every client's local assignment.
type ReasonCode string

// The reason codes, one per rule of Evaluate (doc.go, "Decision").
const (
	ReasonNotRunning  ReasonCode = "not_running"  // draft, scheduled or stopped: everyone gets control
	ReasonShipped     ReasonCode = "shipped"      // everyone gets the shipped variant
	ReasonHoldout     ReasonCode = "holdout"      // held out of every experiment in scope: control, outside the experiment
	ReasonLayer       ReasonCode = "layer"        // outside the experiment's range of its layer: control, outside the experiment
	ReasonNotTargeted ReasonCode = "not_targeted" // the targeting condition does not match: control, outside the experiment
	ReasonPinned      ReasonCode = "pinned"       // a stored pin or the sticky filters keep the user off their bucket's variant
	ReasonBucketed    ReasonCode = "bucketed"     // the bucket map's variant
)

// ErrUnownedBucket: the served map leaves the user's bucket without a
// variant, so the config is not canonical.
var ErrUnownedBucket = errors.New("bucket has no variant in the map")

// Served is one experiment as a config version serves it (GET /v1/config):
// everything Evaluate reads.
type Served struct {
	ID          string
	Salt        string
	BucketCount uint32
	// Closed is why the experiment takes nobody in: ReasonNotRunning or
	// ReasonShipped; "" while it runs. BucketMap is then one range of the
	// variant everyone gets.
	Closed    ReasonCode
	BucketMap Map
	Sticky    *Sticky
	// Allocated names the current allocation's variants: a stored pin to
	// another one stays recorded for analysis but no longer decides.
	Allocated map[string]bool
	// Control is what a user outside the experiment gets.
	Control string
	// Targeting is who may enter (nil: everyone); docs/targeting.md.
	Targeting *targeting.Condition
	// Holdouts in whose scope the experiment is: a user one holds out
	// gets control (docs/targeting.md, "Holdouts").
	Holdouts []Slot
	// Layer is the experiment's range of its layer (nil: none): a user
	// outside it gets control (docs/targeting.md, "Layers").
	Layer *Slot
}

// Attributes are what a user is known by beyond their id: the input of
// targeting conditions (JSON-like values).
type Attributes map[string]any

// Decision is a user's assignment in one experiment.
type Decision struct {
	Variant      string
	Bucket       uint32
	InExperiment bool // counted in the experiment's analysis: pinned or bucketed
	Reason       ReasonCode
	// Holdouts is the user's membership in each holdout whose step the
	// decision evaluated (the experiment runs and the user was not
	// assigned): what the decision's caller records as holdout exposures
	// (docs/targeting.md, "Holdout exposures"). Nil when none was.
	Holdouts []Membership
}

// The variants of a holdout exposure: held out, or let through into the
// experiments of the holdout's scope.
const (
	HoldoutHeld    = "holdout"
	HoldoutExposed = "exposed"
)

// Membership is a user's side of one holdout: an exposure whose
// experiment is the holdout's id and whose variant is HoldoutHeld or
// HoldoutExposed.
type Membership struct {
	HoldoutID string
	Variant   string
}

// Evaluate decides the variant of userID in s, applying the rules of
// doc.go ("Decision") in order: the lifecycle (not running, shipped), the
// holdouts, the layer, targeting (holdouts and targeting are skipped for a
// user already assigned: a stored pin, "" when none, only the server has
// them; or the sticky assigned filter), then the sticky filters and the
// stored pin, then the bucket map. Reading and recording pins is the
// caller's business.
func Evaluate(s *Served, userID string, attrs Attributes, pin string) (Decision, error) {
	d := Digest(s.ID, s.Salt, userID)
	dec := Decision{Bucket: BucketOfDigest(&d, s.BucketCount)}
	mapped, ok := s.BucketMap.Lookup(dec.Bucket)
	if !ok {
		return dec, fmt.Errorf("experiment %s, bucket %d: %w", s.ID, dec.Bucket, ErrUnownedBucket)
	}
	if s.Closed != "" {
		dec.Variant, dec.Reason = mapped, s.Closed
		return dec, nil
	}
	// Whether the user was assigned is read once, and only when asked.
	assigned := func() bool { return pin != "" || s.Sticky.WasAssigned(&d) }
	outside := ReasonCode("")
	if len(s.Holdouts) > 0 && !assigned() {
		dec.Holdouts = memberships(s.Holdouts, userID)
	}
	switch {
	case heldOut(dec.Holdouts):
		outside = ReasonHoldout
	case s.Layer != nil && !s.Layer.Holds(userID):
		// Ranges never move, so an assigned user is always inside.
		outside = ReasonLayer
	case s.Targeting != nil && !s.Targeting.Match(attrs) && !assigned():
		outside = ReasonNotTargeted
	}
	if outside != "" {
		dec.Variant, dec.Reason = s.Control, outside
		return dec, nil
	}
	dec.Variant, dec.InExperiment, dec.Reason = s.Sticky.Resolve(&d, mapped), true, ReasonBucketed
	if pin != "" && s.Allocated[pin] {
		dec.Variant = pin
	}
	if dec.Variant != mapped {
		dec.Reason = ReasonPinned
	}
	return dec, nil
}

// memberships is userID's side of each holdout.
func memberships(holdouts []Slot, userID string) []Membership {
	out := make([]Membership, len(holdouts))
	for i := range holdouts {
		out[i] = Membership{HoldoutID: holdouts[i].ID, Variant: HoldoutExposed}
		if holdouts[i].Holds(userID) {
			out[i].Variant = HoldoutHeld
		}
	}
	return out
}

// heldOut tells whether one of the memberships holds the user out.
func heldOut(ms []Membership) bool {
	for _, m := range ms {
		if m.Variant == HoldoutHeld {
			return true
		}
	}
	return false
}
