package bucketing

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
)

// Sizing of a sticky filter (doc.go, "Stickiness across weight changes"):
// 10 probes and 14.4 bits per member give a false-positive rate of 0.1 %.
const (
	StickyHashes        = 10
	StickyBitsPerMember = 14.4
	minStickyBits       = 64
)

// StickyFilter is a Bloom filter of the users pinned to Variant whose
// bucket the current map gives to another variant.
type StickyFilter struct {
	Variant string `json:"variant"`
	Bits    uint32 `json:"bits"`
	Hashes  uint32 `json:"hashes"`
	Data    []byte `json:"data"` // base64 in JSON; bit i is Data[i/8] & (1 << (i%8))
}

// Sticky is what a config version ships so that every client keeps pinned
// users on their variant across weight changes without a network call.
// Exceptions (16 hex digits of digest bytes 8..16 -> variant) correct the
// pinned users the filters alone would misplace.
type Sticky struct {
	Filters    []StickyFilter    `json:"filters"`
	Exceptions map[string]string `json:"exceptions,omitempty"`
	// Assigned holds every pinned user of a targeted experiment (its
	// Variant is ""): they stay in the experiment when the targeting
	// changes or their attributes do (doc.go, "Stickiness across
	// targeting changes").
	Assigned *StickyFilter `json:"assigned,omitempty"`
}

// PinnedUser is one stored pin.
type PinnedUser struct {
	UserID  string
	Variant string
}

// Resolve returns the variant of the user with digest d whose bucket the
// current map gives to mapped: an exception, else the first filter (in
// order) of another variant holding the user, else mapped. A nil Sticky
// answers mapped.
func (s *Sticky) Resolve(d *[sha256.Size]byte, mapped string) string {
	if s == nil {
		return mapped
	}
	if len(s.Exceptions) > 0 {
		if v, ok := s.Exceptions[hex.EncodeToString(d[8:16])]; ok {
			return v
		}
	}
	h1, h2 := stickyHashes(d)
	for i := range s.Filters {
		f := &s.Filters[i]
		if f.Variant != mapped && f.has(h1, h2) {
			return f.Variant
		}
	}
	return mapped
}

// WasAssigned tells whether the assigned filter holds the user with digest
// d; false without one.
func (s *Sticky) WasAssigned(d *[sha256.Size]byte) bool {
	if s == nil || s.Assigned == nil {
		return false
	}
	h1, h2 := stickyHashes(d)
	return s.Assigned.has(h1, h2)
}

func stickyHashes(d *[sha256.Size]byte) (h1, h2 uint64) {
	return uint64(binary.BigEndian.Uint32(d[8:12])), uint64(binary.BigEndian.Uint32(d[12:16]) | 1)
}

func (f *StickyFilter) has(h1, h2 uint64) bool {
	for i := range uint64(f.Hashes) {
		bit := (h1 + i*h2) % uint64(f.Bits)
		if f.Data[bit>>3]&(1<<(bit&7)) == 0 {
			return false
		}
	}
	return true
}

func (f *StickyFilter) add(h1, h2 uint64) {
	for i := range uint64(f.Hashes) {
		bit := (h1 + i*h2) % uint64(f.Bits)
		f.Data[bit>>3] |= 1 << (bit & 7)
	}
}

// Valid tells whether every filter's sizes agree with its data, so that
// Resolve cannot index out of range.
func (s *Sticky) Valid() bool {
	for _, f := range s.Filters {
		if !f.valid() {
			return false
		}
	}
	return s.Assigned == nil || s.Assigned.valid()
}

func (f *StickyFilter) valid() bool {
	return f.Bits != 0 && f.Hashes != 0 && uint64(len(f.Data))*8 >= uint64(f.Bits)
}

// BuildAssigned is the assigned filter of a targeted experiment: every
// pinned user, whatever their variant; nil without pins.
func BuildAssigned(experimentID, salt string, pins []PinnedUser, bitsPerMember float64) *StickyFilter {
	if len(pins) == 0 {
		return nil
	}
	bits := max(minStickyBits, uint32(math.Ceil(float64(len(pins))*bitsPerMember)))
	f := &StickyFilter{Bits: bits, Hashes: StickyHashes, Data: make([]byte, (bits+7)/8)}
	for _, p := range pins {
		d := Digest(experimentID, salt, p.UserID)
		f.add(stickyHashes(&d))
	}
	return f
}

// BuildSticky builds the sticky part of a config version from the
// experiment's pins: a filter per variant of the users pinned to it whose
// bucket m gives to another variant, then exceptions for every pinned user
// the filters would misplace (a false positive in another variant's filter).
// Pins to variants that live says are gone are ignored: those users follow
// the map. It returns nil when no pinned user needs keeping.
func BuildSticky(experimentID, salt string, bucketCount uint32, m Map, live func(variant string) bool, pins []PinnedUser) *Sticky {
	return BuildStickySized(experimentID, salt, bucketCount, m, live, pins, StickyBitsPerMember)
}

// BuildStickySized is BuildSticky with another filter size; the vector
// generator uses tiny filters to make false positives and exceptions common.
func BuildStickySized(experimentID, salt string, bucketCount uint32, m Map, live func(variant string) bool, pins []PinnedUser, bitsPerMember float64) *Sticky {
	type member struct {
		d       [sha256.Size]byte
		mapped  string
		variant string
	}
	members := make([]member, 0, len(pins))
	counts := map[string]int{}
	for _, p := range pins {
		if !live(p.Variant) {
			continue
		}
		d := Digest(experimentID, salt, p.UserID)
		mapped, ok := m.Lookup(BucketOfDigest(&d, bucketCount))
		if !ok {
			continue
		}
		members = append(members, member{d, mapped, p.Variant})
		if mapped != p.Variant {
			counts[p.Variant]++
		}
	}
	if len(counts) == 0 {
		return nil
	}
	s := &Sticky{}
	variants := make([]string, 0, len(counts))
	for v := range counts {
		variants = append(variants, v)
	}
	slices.Sort(variants)
	index := map[string]int{}
	for i, v := range variants {
		bits := max(minStickyBits, uint32(math.Ceil(float64(counts[v])*bitsPerMember)))
		s.Filters = append(s.Filters, StickyFilter{Variant: v, Bits: bits, Hashes: StickyHashes, Data: make([]byte, (bits+7)/8)})
		index[v] = i
	}
	for i := range members {
		if mb := &members[i]; mb.mapped != mb.variant {
			h1, h2 := stickyHashes(&mb.d)
			s.Filters[index[mb.variant]].add(h1, h2)
		}
	}
	for i := range members {
		mb := &members[i]
		if s.Resolve(&mb.d, mb.mapped) != mb.variant {
			if s.Exceptions == nil {
				s.Exceptions = map[string]string{}
			}
			s.Exceptions[hex.EncodeToString(mb.d[8:16])] = mb.variant
		}
	}
	return s
}
