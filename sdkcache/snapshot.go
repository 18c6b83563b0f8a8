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
	// Body is the encoded GET /v1/config answer (running experiments only).
	Body  []byte
	byKey map[string]*Experiment
}

// Experiment is what assignment needs of one experiment, running or stopped.
type Experiment struct {
	ID          string
	Name        string
	Status      string
	Salt        string
	BucketCount uint32
	Control     string
	BucketMap   bucketing.Map
	// Sticky keeps users pinned before a weight change on their variant
	// (bucketing/doc.go); nil when nobody needs keeping.
	Sticky   *bucketing.Sticky
	variants map[string]bool
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

// Stopped tells whether the experiment is stopped (assign answers control).
func (e *Experiment) Stopped() bool { return e.Status == experiments.StatusStopped }

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
		if p := pins[e.ID]; len(p) > 0 {
			view.Sticky = bucketing.BuildSticky(e.ID, e.Salt, e.BucketCount, e.BucketMap, view.HasVariant, p)
		}
		views = append(views, view)
		if e.Status != experiments.StatusRunning {
			continue
		}
		variants := e.Variants
		if variants == nil {
			variants = map[string]experiments.Variant{}
		}
		body.Experiments = append(body.Experiments, configExperiment{ID: e.ID, Name: e.Name, Version: e.Version,
			Status: e.Status, Salt: e.Salt, BucketCount: e.BucketCount, Control: control, Allocation: e.Allocation,
			BucketMap: e.BucketMap, Sticky: view.Sticky, Variants: variants, Metrics: e.Metrics})
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

// ETag is the entity tag of a config_version: the number, quoted.
func ETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }
