package bucketing_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/expd/expd/bucketing"
)

// servedAfterChange is a running experiment after 50/50 -> 0/100 with no
// sticky filters: every bucket is b's, so only a stored pin keeps a user on a.
func servedAfterChange() *bucketing.Served {
	return &bucketing.Served{ID: "e1", Salt: "s", BucketCount: 100, BucketMap: bucketing.Map{{Variant: "b", Start: 0, End: 100}},
		Allocated: map[string]bool{"a": true, "b": true}}
}

func TestEvaluateHonoursAStoredPin(t *testing.T) {
	s := servedAfterChange()
	for _, c := range []struct {
		pin, variant string
		reason       bucketing.ReasonCode
	}{
		{"", "b", bucketing.ReasonBucketed},
		{"a", "a", bucketing.ReasonPinned},   // the pin keeps the user off the bucket's variant
		{"b", "b", bucketing.ReasonBucketed}, // a pin equal to the bucket's variant: the map decided
		{"gone", "b", bucketing.ReasonBucketed},
	} {
		got, err := bucketing.Evaluate(s, "u1", nil, c.pin)
		want := bucketing.Decision{Variant: c.variant, Bucket: bucketing.Bucket("e1", "s", "u1", 100), InExperiment: true, Reason: c.reason}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("pin %q: Evaluate = %+v, %v; want %+v", c.pin, got, err, want)
		}
	}
}

func TestEvaluateIgnoresPinsOfAClosedExperiment(t *testing.T) {
	for _, code := range []bucketing.ReasonCode{bucketing.ReasonNotRunning, bucketing.ReasonShipped} {
		s := servedAfterChange()
		s.Closed = code
		got, err := bucketing.Evaluate(s, "u1", nil, "a")
		if err != nil || got.Variant != "b" || got.InExperiment || got.Reason != code {
			t.Errorf("%s: Evaluate = %+v, %v; want b outside the experiment", code, got, err)
		}
	}
}

func TestEvaluateRefusesABucketOutsideTheMap(t *testing.T) {
	s := servedAfterChange()
	s.BucketMap = bucketing.Map{{Variant: "b", Start: 0, End: 1}}
	user := "u1"
	for i := 0; bucketing.Bucket("e1", "s", user, 100) == 0; i++ {
		user = string(rune('a' + i))
	}
	if _, err := bucketing.Evaluate(s, user, nil, ""); !errors.Is(err, bucketing.ErrUnownedBucket) {
		t.Fatalf("Evaluate = %v, want ErrUnownedBucket", err)
	}
}
