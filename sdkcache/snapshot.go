package sdkcache

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/plans"
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
	Body  []byte
	byKey map[string]*Experiment
}

// Experiment is what assignment needs of one experiment, in any status.
type Experiment struct {
	ID          string
	Name        string
	Status      string
	Reason      string // why it is not running, when it is not
	Salt        string
	BucketCount uint32
	Control     string
	BucketMap   bucketing.Map // the served map: one range when not running
	// Sticky keeps users pinned before a weight change on their variant
	// (bucketing/doc.go); nil when nobody needs keeping.
	Sticky   *bucketing.Sticky
	variants map[string]bool
	serves   string
}

// Variant is the user's variant as every client computes it from the
// config: the bucket map's answer unless the sticky filters keep the user
// on an earlier one. ok is false when the map leaves the bucket unowned.
func (e *Experiment) Variant(userID string) (variant string, bucket uint32, ok bool) {
	d := bucketing.Digest(e.ID, e.Salt, userID)
	bucket = bucketing.BucketOfDigest(&d, e.BucketCount)
	mapped, ok := e.BucketMap.Lookup(bucket)
	if !ok {
		return "", bucket, false
	}
	return e.Sticky.Resolve(&d, mapped), bucket, true
}

// Serves is the variant everyone gets when the experiment is not running
// (control while draft, scheduled or stopped; the shipped variant once
// shipped), "" while it runs.
func (e *Experiment) Serves() string { return e.serves }

// Stopped tells whether everyone gets control (draft, scheduled, stopped).
func (e *Experiment) Stopped() bool { return e.serves != "" && e.Status != experiments.StatusShipped }

// HasVariant tells whether the current allocation names v.
func (e *Experiment) HasVariant(v string) bool { return e.variants[v] }

// Find returns an experiment of the org by id or unique name. Ids win over
// names, as in the SDKs.
func (s *Snapshot) Find(idOrName string) (*Experiment, bool) {
	e, ok := s.byKey[idOrName]
	return e, ok
}

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
	Variants    map[string]experiments.Variant `json:"variants"`
	Metrics     []experiments.Metric           `json:"metrics"`
}

// newSnapshot builds a snapshot from the org's experiments (any status) at
// config_version; pins are the stored pins of experiments whose weights
// changed, by experiment id.
func newSnapshot(orgID string, version int64, plan plans.Name, exps []experiments.Experiment, pins map[string][]bucketing.PinnedUser) (*Snapshot, error) {
	body := configBody{ConfigVersion: version, Experiments: []configExperiment{}}
	s := &Snapshot{OrgID: orgID, ConfigVersion: version, Plan: plan, ETag: ETag(version), byKey: make(map[string]*Experiment, 2*len(exps))}
	views := make([]*Experiment, 0, len(exps))
	for i := range exps {
		e := &exps[i]
		control := e.ControlVariant()
		view := &Experiment{ID: e.ID, Name: e.Name, Status: e.Status, Salt: e.Salt, BucketCount: e.BucketCount,
			Control: control, BucketMap: e.BucketMap, variants: make(map[string]bool, len(e.Allocation))}
		for _, sl := range e.Allocation {
			view.variants[sl.Variant] = true
		}
		allocation := e.Allocation
		if view.serves, view.Reason = served(e); view.serves != "" {
			// Clients read the bucket map, so one range of the served
			// variant makes every client serve it without knowing why.
			view.BucketMap = bucketing.Map{{Variant: view.serves, Start: 0, End: e.BucketCount}}
			allocation = []bucketing.Slice{{Variant: view.serves, Weight: 100}}
		} else if p := pins[e.ID]; len(p) > 0 {
			view.Sticky = bucketing.BuildSticky(e.ID, e.Salt, e.BucketCount, e.BucketMap, view.HasVariant, p)
		}
		views = append(views, view)
		variants := e.Variants
		if variants == nil {
			variants = map[string]experiments.Variant{}
		}
		body.Experiments = append(body.Experiments, configExperiment{ID: e.ID, Name: e.Name, Version: e.Version,
			Status: e.Status, Reason: view.Reason, Salt: e.Salt, BucketCount: e.BucketCount, Control: control, Allocation: allocation,
			BucketMap: view.BucketMap, Sticky: view.Sticky, Variants: variants, Metrics: e.Metrics})
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

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ETag is the entity tag of a config_version: the number, quoted.
func ETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }
