package expd

// ReasonCode says which rule decided a user's variant: the reason_code of
// POST /v1/assign, decided here by the same rules (bucketing/doc.go of the
// repository, "Decision").
type ReasonCode string

// The reason codes. Holdout, layer and not_targeted are reserved for
// holdouts, layers and targeting rules; nothing decides them yet.
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

// decide is the user's assignment: the lifecycle, then the sticky filters,
// then the bucket map. ok is false when the map leaves the bucket unowned.
func (e *experiment) decide(userID string) (dec Decision, ok bool) {
	d := digest(e.prefix, userID)
	mapped, ok := e.ranges.Lookup(bucketOfDigest(&d, e.BucketCount))
	if !ok {
		return Decision{}, false
	}
	if e.closed != "" {
		return Decision{Variant: mapped, ReasonCode: e.closed}, true
	}
	dec = Decision{Variant: e.Sticky.resolve(&d, mapped), InExperiment: true, ReasonCode: ReasonBucketed}
	if dec.Variant != mapped {
		dec.ReasonCode = ReasonPinned
	}
	return dec, true
}
