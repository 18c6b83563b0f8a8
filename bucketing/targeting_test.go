package bucketing_test

import (
	"fmt"
	"testing"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/sdk/go/targeting"
)

// The weight-change scenario of the sticky filters (10,000 users, 3,000
// assigned before 50/50 -> 60/40) with targeting on, decided as a client
// does (no stored pins): 0 assigned users move, also those whose
// attributes no longer match; a targeting change leaves them in too; new
// users who do not match stay out.
func TestTargetingKeepsAssignedUsersAcrossWeightAndTargetingChanges(t *testing.T) {
	const id, salt, buckets, users, assigned = "e-targeted", "s", 10_000, 10_000, 3_000
	before, err := bucketing.InitialMap([]bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}}, buckets)
	if err != nil {
		t.Fatal(err)
	}
	after, err := bucketing.Rebalance(before, []bucketing.Slice{{Variant: "control", Weight: 60}, {Variant: "treatment", Weight: 40}}, buckets)
	if err != nil {
		t.Fatal(err)
	}
	pro, _ := targeting.Compile(map[string]any{"plan": "pro"})
	attrs := func(i int) bucketing.Attributes {
		if i%2 == 0 {
			return bucketing.Attributes{"plan": "pro"}
		}
		return bucketing.Attributes{"plan": "free"}
	}
	v1 := &bucketing.Served{ID: id, Salt: salt, BucketCount: buckets, BucketMap: before, Control: "control", Targeting: pro}
	var pins []bucketing.PinnedUser
	first := map[string]string{}
	for i := 0; len(pins) < assigned; i++ {
		u := fmt.Sprintf("user-%d", i)
		d, err := bucketing.Evaluate(v1, u, attrs(i), "")
		if err != nil {
			t.Fatal(err)
		}
		if d.InExperiment {
			pins = append(pins, bucketing.PinnedUser{UserID: u, Variant: d.Variant})
			first[u] = d.Variant
		}
	}
	live := func(string) bool { return true }
	sticky := bucketing.BuildSticky(id, salt, buckets, after, live, pins)
	sticky.Assigned = bucketing.BuildAssigned(id, salt, pins, bucketing.StickyBitsPerMember)
	nobody, _ := targeting.Compile(map[string]any{"plan": "enterprise"})
	for _, tc := range []struct {
		name string
		cond *targeting.Condition
	}{{"weights changed, same targeting", pro}, {"weights and targeting changed", nobody}} {
		v2 := &bucketing.Served{ID: id, Salt: salt, BucketCount: buckets, BucketMap: after, Sticky: sticky, Control: "control", Targeting: tc.cond,
			Allocated: map[string]bool{"control": true, "treatment": true}}
		moved, lostAttrs, newIn, newOut, newMatching := 0, 0, 0, 0, 0
		for i := range users {
			u := fmt.Sprintf("user-%d", i)
			// Assigned users now carry attributes that no longer match.
			a := attrs(i)
			if _, ok := first[u]; ok && i%4 == 0 {
				a, lostAttrs = bucketing.Attributes{"plan": "free"}, lostAttrs+1
			}
			d, err := bucketing.Evaluate(v2, u, a, "")
			if err != nil {
				t.Fatal(err)
			}
			if v, ok := first[u]; ok {
				if d.Variant != v || !d.InExperiment {
					moved++
				}
				continue
			}
			if tc.cond.Match(a) {
				newMatching++
			}
			if d.InExperiment {
				newIn++
			} else if d.Reason == bucketing.ReasonNotTargeted && d.Variant == "control" {
				newOut++
			}
		}
		if moved != 0 || lostAttrs == 0 {
			t.Errorf("%s: %d of %d assigned users moved (%d with attributes that no longer match)", tc.name, moved, len(first), lostAttrs)
		}
		// New users enter when they match, or (0.1 % of the others) by a
		// false positive of the assigned filter; the rest get control.
		fresh := users - len(first)
		if newIn < newMatching || newIn > newMatching+fresh/100 || newIn+newOut != fresh {
			t.Errorf("%s: %d of %d new users in (%d match), %d not targeted", tc.name, newIn, fresh, newMatching, newOut)
		}
	}
}
