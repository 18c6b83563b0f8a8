package expd

// ReasonCode says which rule decided a user's variant: the reason_code of
// POST /v1/assign, decided here by the same rules (bucketing/doc.go of the
// repository, "Decision").
type ReasonCode string

// The reason codes.
const (
	ReasonNotRunning  ReasonCode = "not_running"  // draft, scheduled or stopped: control for everyone
	ReasonShipped     ReasonCode = "shipped"      // the shipped variant for everyone
	ReasonHoldout     ReasonCode = "holdout"      // held out of every experiment in scope
	ReasonLayer       ReasonCode = "layer"        // another experiment of the layer owns the user
	ReasonNotTargeted ReasonCode = "not_targeted" // the targeting condition does not match
	ReasonPinned      ReasonCode = "pinned"       // the sticky filters keep the user off their bucket's variant
	ReasonBucketed    ReasonCode = "bucketed"     // the bucket map's variant
)

// Decision is a user's assignment in one experiment.
type Decision struct {
	Variant string
	// InExperiment: the user counts in the experiment's analysis (reason
	// pinned or bucketed).
	InExperiment bool
	ReasonCode   ReasonCode
}

// closedBy is the reason code of a status in which everyone gets the served
// map's one variant, "" while the experiment runs (also for a config
// without statuses).
func closedBy(status string) ReasonCode {
	switch status {
	case "running", "":
		return ""
	case "shipped":
		return ReasonShipped
	default:
		return ReasonNotRunning
	}
}

// outside tells whether the decision keeps the user out of the experiment
// while it runs: no exposure, and wrapped calls record nothing.
func (d Decision) outside() bool {
	return d.ReasonCode == ReasonNotTargeted || d.ReasonCode == ReasonHoldout || d.ReasonCode == ReasonLayer
}

// decide is the user's assignment: the lifecycle, the holdouts, the
// layer, targeting (holdouts and targeting not for a user the assigned
// filter holds), then the sticky filters, then the bucket map. ok is false
// when the map leaves the bucket unowned.
func (e *experiment) decide(userID string, attrs map[string]any) (dec Decision, ok bool) {
	d := digest(e.prefix, userID)
	mapped, ok := e.ranges.Lookup(bucketOfDigest(&d, e.BucketCount))
	if !ok {
		return Decision{}, false
	}
	if e.closed != "" {
		return Decision{Variant: mapped, ReasonCode: e.closed}, true
	}
	outside := ReasonCode("")
	switch {
	case len(e.Holdouts) > 0 && e.heldOut(userID) && !e.Sticky.wasAssigned(&d):
		outside = ReasonHoldout
	case e.Layer != nil && !e.Layer.holds(userID):
		outside = ReasonLayer // ranges never move: an assigned user is inside
	case e.targeting != nil && !e.targeting.Match(attrs) && !e.Sticky.wasAssigned(&d):
		outside = ReasonNotTargeted
	}
	if outside != "" {
		return Decision{Variant: e.Control, ReasonCode: outside}, true
	}
	dec = Decision{Variant: e.Sticky.resolve(&d, mapped), InExperiment: true, ReasonCode: ReasonBucketed}
	if dec.Variant != mapped {
		dec.ReasonCode = ReasonPinned
	}
	return dec, true
}

// heldOut tells whether one of the experiment's holdouts holds userID out.
func (e *experiment) heldOut(userID string) bool {
	for i := range e.Holdouts {
		if e.Holdouts[i].holds(userID) {
			return true
		}
	}
	return false
}
