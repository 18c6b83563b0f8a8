package bucketing

import "math"

// Slot is a range of a bucket space that is not an experiment's own: a
// layer's range given to one experiment, or a holdout's held-out part.
// A user's bucket in it is Bucket(ID, Salt, user, BucketCount), the
// experiment formula with the layer's or holdout's id and salt; the user
// is in the slot when Start <= bucket < End (doc.go, "Layers and
// holdouts").
type Slot struct {
	ID          string `json:"id"`
	Salt        string `json:"salt"`
	BucketCount uint32 `json:"bucket_count"`
	Start       uint32 `json:"start"`
	End         uint32 `json:"end"`
}

// Holds tells whether userID falls in the slot.
func (s *Slot) Holds(userID string) bool {
	b := Bucket(s.ID, s.Salt, userID, s.BucketCount)
	return s.Start <= b && b < s.End
}

// BucketOfFraction is the bucket bound of a fraction f in [0, 1] of a
// space of n buckets: f*n rounded to the nearest integer (halves up).
// Rounding, not truncating: 0.29*100 is 28.999999999999996 in float64.
// The server computes the bounds once; clients only compare buckets.
func BucketOfFraction(f float64, n uint32) uint32 {
	return uint32(math.Floor(f*float64(n) + 0.5))
}
