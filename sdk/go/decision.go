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
	return e.decideFrom(e.facts(userID), attrs)
}

// facts are what a user's decision owes to hashing alone: fixed for one
// parse of the config whatever the attributes, so the exposure log keeps
// them and a warm targeted decision only evaluates the condition again.
type facts struct {
	ok       bool   // the map owns the user's bucket
	mapped   string // the bucket map's variant
	kept     string // the sticky filters' answer
	assigned bool   // the assigned filter holds the user
	// held is, per holdout of the experiment, whether it holds the user
	// out; nil when the holdout step is not evaluated (no holdouts, the
	// experiment is closed or the user was assigned).
	held    []bool
	outside bool // the user's layer bucket is outside the experiment's range
}

// heldOut tells whether one of the holdouts holds the user out.
func (f *facts) heldOut() bool {
	for _, h := range f.held {
		if h {
			return true
		}
	}
	return false
}

func (e *experiment) facts(userID string) facts {
	d := digest(e.prefix, userID)
	mapped, ok := e.ranges.Lookup(bucketOfDigest(&d, e.BucketCount))
	if !ok || e.closed != "" {
		return facts{ok: ok, mapped: mapped}
	}
	f := facts{ok: true, mapped: mapped, kept: e.Sticky.resolve(&d, mapped), assigned: e.Sticky.wasAssigned(&d),
		outside: e.Layer != nil && !e.Layer.holds(userID)}
	if len(e.Holdouts) > 0 && !f.assigned {
		f.held = make([]bool, len(e.Holdouts))
		for i := range e.Holdouts {
			f.held[i] = e.Holdouts[i].holds(userID)
		}
	}
	return f
}

// decideFrom applies the rules in order to the user's facts and attributes.
func (e *experiment) decideFrom(f facts, attrs map[string]any) (Decision, bool) {
	switch {
	case !f.ok:
		return Decision{}, false
	case e.closed != "":
		return Decision{Variant: f.mapped, ReasonCode: e.closed}, true
	case f.heldOut(): // held is nil for an assigned user
		return Decision{Variant: e.Control, ReasonCode: ReasonHoldout}, true
	case f.outside:
		return Decision{Variant: e.Control, ReasonCode: ReasonLayer}, true // ranges never move: an assigned user is inside
	case e.targeting != nil && !f.assigned && !e.targeting.Match(attrs):
		return Decision{Variant: e.Control, ReasonCode: ReasonNotTargeted}, true
	}
	dec := Decision{Variant: f.kept, InExperiment: true, ReasonCode: ReasonBucketed}
	if f.kept != f.mapped {
		dec.ReasonCode = ReasonPinned
	}
	return dec, true
}

// The variants of a holdout exposure (the server's bucketing.HoldoutHeld
// and HoldoutExposed): held out, or let through.
const (
	holdoutHeld    = "holdout"
	holdoutExposed = "exposed"
)

// holdoutVariant is the variant of the exposure of holdout i of the
// experiment whose facts f are.
func (f *facts) holdoutVariant(i int) string {
	if f.held[i] {
		return holdoutHeld
	}
	return holdoutExposed
}
