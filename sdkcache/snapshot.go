package sdkcache

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/holdouts"
	"github.com/expd/expd/layers"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/sdk/go/targeting"
)

// Snapshot is one org as the SDK routes see it at one config_version. It is
// immutable once built; a change of the org builds a new one.
type Snapshot struct {
	OrgID         string
	ConfigVersion int64
	Plan          plans.Name
	// ETag is the quoted config_version, the entity tag of Body.
	ETag string
	// Body is the encoded GET /v1/config answer.
	Body []byte
	// Payload is the org's payload policy, applied to every event the
	// SDK routes store (ingest); PUT /v1/privacy raises config_version,
	// which rebuilds the snapshot on every instance.
	Payload  *privacy.Payload
	byKey    map[string]*Experiment
	holdouts map[string]bool
}

// Experiment is one experiment of the snapshot, in any status: what
// bucketing.Evaluate decides from, and what POST /v1/assign tells beside.
type Experiment struct {
	bucketing.Served
	Name   string
	Status string
	Reason string // why it is not running, when it is not
	// PayloadPolicy is the experiment's stricter payload policy, if any.
	PayloadPolicy privacy.Policy
}

// Find returns an experiment of the org by id or unique name. Ids win over
// names, as in the SDKs.
func (s *Snapshot) Find(idOrName string) (*Experiment, bool) {
	e, ok := s.byKey[idOrName]
	return e, ok
}

// Holdout tells whether id is one of the org's holdouts at this version.
func (s *Snapshot) Holdout(id string) bool { return s.holdouts[id] }

// configBody is the wire shape of GET /v1/config; the SDKs code against it.
type configBody struct {
	ConfigVersion int64              `json:"config_version"`
	Experiments   []configExperiment `json:"experiments"`
}

type configExperiment struct {
	ID          string                         `json:"id"`
	Name        string                         `json:"name"`
	Version     int                            `json:"version"`
	Status      string                         `json:"status"`
	Reason      string                         `json:"reason,omitempty"`
	Salt        string                         `json:"salt"`
	BucketCount uint32                         `json:"bucket_count"`
	Control     string                         `json:"control"`
	Allocation  []bucketing.Slice              `json:"allocation"`
	BucketMap   bucketing.Map                  `json:"bucket_map"`
	Sticky      *bucketing.Sticky              `json:"sticky,omitempty"`
	Targeting   json.RawMessage                `json:"targeting,omitempty"`
	Holdouts    []bucketing.Slot               `json:"holdouts,omitempty"`
	Layer       *bucketing.Slot                `json:"layer,omitempty"`
	Variants    map[string]experiments.Variant `json:"variants"`
	Metrics     []experiments.Metric           `json:"metrics"`
}

// scopes are the org's layers (by id) and holdouts: what turns an
// experiment's range and the holdouts covering it into slots.
type scopes struct {
	layers   map[string]layers.Layer
	holdouts []holdouts.Holdout
}

// holdoutsOf are the held-out slots of the holdouts covering e.
func (sc scopes) holdoutsOf(e *experiments.Experiment) []bucketing.Slot {
	var out []bucketing.Slot
	for i := range sc.holdouts {
		if sc.holdouts[i].Covers(layerOf(e)) {
			out = append(out, sc.holdouts[i].Slot())
		}
	}
	return out
}

// newSnapshot builds a snapshot from the org's experiments (any status) at
// config_version; pins are the stored pins of experiments whose weights
// changed, that are targeted or in a holdout's scope, by experiment id;
// payload is the org's payload policy.
func newSnapshot(orgID string, version int64, plan plans.Name, exps []experiments.Experiment, pins map[string][]bucketing.PinnedUser, sc scopes, payload *privacy.Payload) (*Snapshot, error) {
	body := configBody{ConfigVersion: version, Experiments: []configExperiment{}}
	s := &Snapshot{OrgID: orgID, ConfigVersion: version, Plan: plan, ETag: ETag(version), Payload: payload, byKey: make(map[string]*Experiment, 2*len(exps))}
	views := make([]*Experiment, 0, len(exps))
	s.holdouts = make(map[string]bool, len(sc.holdouts))
	for _, h := range sc.holdouts {
		s.holdouts[h.ID] = true
	}
	for i := range exps {
		e := &exps[i]
		wire := configExperiment{ID: e.ID, Name: e.Name, Version: e.Version, Status: e.Status, Salt: e.Salt,
			BucketCount: e.BucketCount, Control: e.ControlVariant(), Allocation: e.Allocation, BucketMap: e.BucketMap,
			Variants: e.Variants, Metrics: e.Metrics}
		if e.Targeted() {
			wire.Targeting = e.Targeting
		}
		if l, ok := sc.layers[layerOf(e)]; ok {
			r := e.Layer.Span()
			slot := l.Slot(r.Start, r.End)
			wire.Layer = &slot
		}
		wire.Holdouts = sc.holdoutsOf(e)
		if wire.Variants == nil {
			wire.Variants = map[string]experiments.Variant{}
		}
		var serves string
		if serves, wire.Reason = served(e); serves != "" {
			// Clients read the bucket map, so one range of the served
			// variant makes every client serve it without knowing why.
			wire.BucketMap = bucketing.Map{{Variant: serves, Start: 0, End: e.BucketCount}}
			wire.Allocation = []bucketing.Slice{{Variant: serves, Weight: 100}}
		}
		view := &Experiment{Served: wire.served(), Name: e.Name, Status: e.Status, Reason: wire.Reason, PayloadPolicy: e.PayloadPolicy}
		if p := pins[e.ID]; serves == "" && len(p) > 0 {
			view.Sticky = bucketing.BuildSticky(e.ID, e.Salt, e.BucketCount, e.BucketMap, func(v string) bool { return view.Allocated[v] }, p)
			if e.Targeted() || len(wire.Holdouts) > 0 {
				// Assigned users stay in when the targeting or a holdout
				// changes.
				if view.Sticky == nil {
					view.Sticky = &bucketing.Sticky{}
				}
				view.Sticky.Assigned = bucketing.BuildAssigned(e.ID, e.Salt, p, bucketing.StickyBitsPerMember)
			}
			wire.Sticky = view.Sticky
		}
		body.Experiments = append(body.Experiments, wire)
		views = append(views, view)
	}
	// Ids are indexed after names so that an id always wins.
	for _, v := range views {
		s.byKey[v.Name] = v
	}
	for _, v := range views {
		s.byKey[v.ID] = v
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode config of org %s: %w", orgID, err)
	}
	s.Body = raw
	return s, nil
}

// served is the variant everyone gets and why, or "" while e runs.
func served(e *experiments.Experiment) (variant, reason string) {
	reason = e.StatusReason
	switch e.Status {
	case experiments.StatusRunning:
		return "", ""
	case experiments.StatusShipped:
		return e.ShippedVariant, firstNonEmpty(reason, "shipped: every user gets "+e.ShippedVariant)
	case experiments.StatusDraft:
		reason = firstNonEmpty(reason, "draft: not started yet")
	case experiments.StatusScheduled:
		reason = firstNonEmpty(reason, "scheduled: waiting for start_at")
	default:
		reason = firstNonEmpty(reason, "stopped")
	}
	return e.ControlVariant(), reason
}

// served is what bucketing.Evaluate reads of a served experiment; the
// shared decision vectors go through it too.
func (c *configExperiment) served() bucketing.Served {
	s := bucketing.Served{ID: c.ID, Salt: c.Salt, BucketCount: c.BucketCount, BucketMap: c.BucketMap, Sticky: c.Sticky,
		Allocated: make(map[string]bool, len(c.Allocation)), Control: c.Control, Holdouts: c.Holdouts, Layer: c.Layer}
	if len(c.Targeting) > 0 {
		// Validated when saved; a condition that no longer compiles
		// matches no one rather than everyone.
		cond, bad := targeting.Parse(c.Targeting)
		if len(bad) > 0 {
			cond = targeting.Nobody
		}
		s.Targeting = cond
	}
	for _, sl := range c.Allocation {
		s.Allocated[sl.Variant] = true
	}
	switch c.Status {
	case experiments.StatusRunning:
	case experiments.StatusShipped:
		s.Closed = bucketing.ReasonShipped
	default:
		s.Closed = bucketing.ReasonNotRunning
	}
	return s
}

// layerOf is the id of the layer e holds a range of, "" when none.
func layerOf(e *experiments.Experiment) string {
	if e.Layer == nil {
		return ""
	}
	return e.Layer.ID
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ETag is the entity tag of a config_version: the number, quoted.
func ETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }
