package expd

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/expd/expd/sdk/go/targeting"
)

// Variant is a variant's configured prompt and custom variables.
type Variant struct {
	Prompt    *string        `json:"prompt"`
	Variables map[string]any `json:"variables"`
}

// experiment is one experiment of a config, ready for local assignment.
type experiment struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Version     int                `json:"version"`
	Status      string             `json:"status"`
	Salt        string             `json:"salt"`
	BucketCount uint32             `json:"bucket_count"`
	Control     string             `json:"control"`
	BucketMap   []Range            `json:"bucket_map"`
	Sticky      *Sticky            `json:"sticky"`
	Targeting   json.RawMessage    `json:"targeting"`
	Holdouts    []slot             `json:"holdouts"`
	Layer       *slot              `json:"layer"`
	Variants    map[string]Variant `json:"variants"`

	ranges    BucketMap
	closed    ReasonCode           // closedBy(Status)
	targeting *targeting.Condition // nil: everyone
	prefix    string
	gen       uint64 // this parse: assignments cached in the exposure log are valid for it only
}

var configGen atomic.Uint64

// snapshot is one org config version: experiments by id or name (ids win).
type snapshot struct {
	version int64
	etag    string
	byKey   map[string]*experiment
}

func parseConfig(body []byte, etag string) (*snapshot, error) {
	var raw struct {
		ConfigVersion *int64        `json:"config_version"`
		Experiments   []*experiment `json:"experiments"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("config body: %w", err)
	}
	if raw.ConfigVersion == nil {
		return nil, fmt.Errorf("config body: no config_version")
	}
	s := &snapshot{version: *raw.ConfigVersion, etag: etag, byKey: make(map[string]*experiment, 2*len(raw.Experiments))}
	for _, e := range raw.Experiments {
		if e.BucketCount == 0 || len(e.BucketMap) == 0 {
			return nil, fmt.Errorf("experiment %q: bucket_count and bucket_map are required", e.Name)
		}
		if e.Sticky != nil {
			if err := e.Sticky.validate(); err != nil {
				return nil, fmt.Errorf("experiment %q: %w", e.Name, err)
			}
			if len(e.Sticky.Filters) == 0 && len(e.Sticky.Exceptions) == 0 && e.Sticky.Assigned == nil {
				e.Sticky = nil
			}
		}
		if len(e.Targeting) > 0 && string(e.Targeting) != "null" {
			// The server refuses invalid conditions; one that does not
			// compile here matches no one rather than everyone.
			if e.targeting, _ = targeting.Parse(e.Targeting); e.targeting == nil {
				e.targeting = targeting.Nobody
			}
		}
		for i := range e.Holdouts {
			if err := e.Holdouts[i].prepare(); err != nil {
				return nil, fmt.Errorf("experiment %q: holdout: %w", e.Name, err)
			}
		}
		if e.Layer != nil {
			if err := e.Layer.prepare(); err != nil {
				return nil, fmt.Errorf("experiment %q: layer: %w", e.Name, err)
			}
		}
		e.ranges = NewBucketMap(e.BucketMap)
		e.closed = closedBy(e.Status)
		e.prefix = e.ID + "." + e.Salt + "."
		e.gen = configGen.Add(1)
		s.byKey[e.Name] = e
	}
	for _, e := range raw.Experiments {
		s.byKey[e.ID] = e
	}
	return s, nil
}

// slot is a range of a layer's or a holdout's own bucket space (the
// server's bucketing/doc.go, "Layers and holdouts"): the user is in it
// when start <= their bucket there < end.
type slot struct {
	ID          string `json:"id"`
	Salt        string `json:"salt"`
	BucketCount uint32 `json:"bucket_count"`
	Start       uint32 `json:"start"`
	End         uint32 `json:"end"`
	prefix      string
}

func (s *slot) holds(userID string) bool {
	d := digest(s.prefix, userID)
	b := bucketOfDigest(&d, s.BucketCount)
	return s.Start <= b && b < s.End
}

// prepare checks the slot and encodes its hash prefix once.
func (s *slot) prepare() error {
	if s.BucketCount == 0 || s.Start > s.End {
		return fmt.Errorf("%q: bucket_count must be positive and start <= end", s.ID)
	}
	s.prefix = s.ID + "." + s.Salt + "."
	return nil
}
