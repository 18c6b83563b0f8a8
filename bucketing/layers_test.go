package bucketing_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/sdk/go/targeting"
)

// layered is a running 50/50 experiment of 10,000 buckets in slot (nil:
// none) and in the scope of holdouts.
func layered(t *testing.T, id string, slot *bucketing.Slot, holdouts ...bucketing.Slot) *bucketing.Served {
	t.Helper()
	m, err := bucketing.InitialMap([]bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}}, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	return &bucketing.Served{ID: id, Salt: "salt-" + id, BucketCount: 10_000, BucketMap: m, Control: "control",
		Allocated: map[string]bool{"control": true, "treatment": true}, Layer: slot, Holdouts: holdouts}
}

func inLayer(start, end float64) *bucketing.Slot {
	const buckets = 10_000
	return &bucketing.Slot{ID: "layer-1", Salt: "layer-salt", BucketCount: buckets,
		Start: bucketing.BucketOfFraction(start, buckets), End: bucketing.BucketOfFraction(end, buckets)}
}

// A layer with three experiments ([0, 0.2), [0.2, 0.55), [0.55, 0.9);
// 10 % free): over 100,000 users no user is in two, everyone outside an
// experiment's range gets control with reason layer, and each experiment's
// share is within 1.5 % (relative) of its range's width.
func TestLayerKeepsExperimentsExclusive(t *testing.T) {
	const users = 100_000
	ranges := [][2]float64{{0, 0.2}, {0.2, 0.55}, {0.55, 0.9}}
	var exps []*bucketing.Served
	for i, r := range ranges {
		exps = append(exps, layered(t, fmt.Sprintf("exp-%d", i), inLayer(r[0], r[1])))
	}
	in := make([]int, len(exps))
	none := 0
	for u := range users {
		user := fmt.Sprintf("user-%d", u)
		count := 0
		for i, e := range exps {
			d, err := bucketing.Evaluate(e, user, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case d.InExperiment:
				in[i]++
				count++
			case d.Reason != bucketing.ReasonLayer || d.Variant != "control":
				t.Fatalf("%s in %s: %+v, want control with reason layer", user, e.ID, d)
			}
		}
		if count > 1 {
			t.Fatalf("%s is in %d experiments of one layer", user, count)
		}
		if count == 0 {
			none++
		}
	}
	for i, r := range ranges {
		share, want := float64(in[i])/users, r[1]-r[0]
		if math.Abs(share-want) > 0.015*want {
			t.Errorf("experiment %d: share %.4f, range %.2f (more than 1.5 %% off)", i, share, want)
		}
		t.Logf("experiment %d: share %.4f of range %.2f", i, share, want)
	}
	if free := float64(none) / users; math.Abs(free-0.1) > 0.015*0.1 {
		t.Errorf("free part: %.4f of users in no experiment, want 0.1", free)
	}
}

// A 5 % holdout over every experiment (three of a layer and one outside
// it): no held-out user is in any of them, and 5 % of users are held out.
func TestHoldoutKeepsItsUsersOutOfEveryExperiment(t *testing.T) {
	const users = 100_000
	holdout := bucketing.Slot{ID: "holdout-1", Salt: "holdout-salt", BucketCount: 10_000, End: bucketing.BucketOfFraction(0.05, 10_000)}
	exps := []*bucketing.Served{
		layered(t, "a", inLayer(0, 0.3), holdout), layered(t, "b", inLayer(0.3, 0.6), holdout),
		layered(t, "c", inLayer(0.6, 1), holdout), layered(t, "d", nil, holdout),
	}
	held := 0
	for u := range users {
		user := fmt.Sprintf("user-%d", u)
		isHeld := holdout.Holds(user)
		if isHeld {
			held++
		}
		for _, e := range exps {
			d, err := bucketing.Evaluate(e, user, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if isHeld && (d.InExperiment || d.Reason != bucketing.ReasonHoldout || d.Variant != "control") {
				t.Fatalf("held-out %s in %s: %+v", user, e.ID, d)
			}
			if !isHeld && d.Reason == bucketing.ReasonHoldout {
				t.Fatalf("%s is not held out but %s says holdout", user, e.ID)
			}
		}
	}
	if share := float64(held) / users; math.Abs(share-0.05) > 0.015*0.05 {
		t.Errorf("held out: %.4f of users, want 0.05", share)
	}
}

// The order of the rules: the lifecycle before the holdout, the holdout
// before the layer, the layer before targeting; a stored pin or the
// assigned filter skips the holdout and targeting, never the layer.
func TestEvaluateOrderWithHoldoutsAndLayers(t *testing.T) {
	holdout := bucketing.Slot{ID: "h", Salt: "holdout-salt", BucketCount: 100, End: 50}
	layer := inLayer(0, 0.5)
	pro, _ := targeting.Compile(map[string]any{"plan": "pro"})
	var heldOutside, heldInside, freeOutside, freeInside string
	for i := 0; heldOutside == "" || heldInside == "" || freeOutside == "" || freeInside == ""; i++ {
		u := fmt.Sprintf("u-%d", i)
		switch h, l := holdout.Holds(u), layer.Holds(u); {
		case h && !l:
			heldOutside = u
		case h && l:
			heldInside = u
		case !h && !l:
			freeOutside = u
		default:
			freeInside = u
		}
	}
	e := layered(t, "ordered", layer, holdout)
	e.Targeting = pro
	free := bucketing.Attributes{"plan": "free"}
	for _, tc := range []struct {
		name   string
		closed bucketing.ReasonCode
		user   string
		attrs  bucketing.Attributes
		pin    string
		want   bucketing.ReasonCode
	}{
		{"stopped: the lifecycle first", bucketing.ReasonNotRunning, heldOutside, free, "", bucketing.ReasonNotRunning},
		{"held out and outside the range", "", heldOutside, free, "", bucketing.ReasonHoldout},
		{"outside the range, not matching", "", freeOutside, free, "", bucketing.ReasonLayer},
		{"in range, not matching", "", freeInside, free, "", bucketing.ReasonNotTargeted},
		{"in range, matching", "", freeInside, bucketing.Attributes{"plan": "pro"}, "", bucketing.ReasonBucketed},
		{"held out but pinned, not matching", "", heldInside, free, "treatment", bucketing.ReasonBucketed},
		{"pinned but outside the range", "", heldOutside, free, "treatment", bucketing.ReasonLayer},
	} {
		s := *e
		s.Closed = tc.closed
		d, err := bucketing.Evaluate(&s, tc.user, tc.attrs, tc.pin)
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == bucketing.ReasonBucketed && tc.pin != "" {
			// The pin decides the variant; the reason is bucketed or pinned.
			if !d.InExperiment || d.Variant != tc.pin {
				t.Errorf("%s: %+v, want %s in the experiment", tc.name, d, tc.pin)
			}
			continue
		}
		if d.Reason != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, d, tc.want)
		}
	}
}

// BucketOfFraction rounds: fractions whose product with the bucket count
// lands just below an integer in float64 still give that integer.
func TestBucketOfFractionRounds(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		n    uint32
		want uint32
	}{{0.29, 100, 29}, {0.3, 10_000, 3000}, {0, 10_000, 0}, {1, 10_000, 10_000}, {0.00005, 10_000, 1}, {0.57, 100, 57}} {
		if got := bucketing.BucketOfFraction(tc.f, tc.n); got != tc.want {
			t.Errorf("BucketOfFraction(%g, %d) = %d, want %d", tc.f, tc.n, got, tc.want)
		}
	}
}

// The weight-change scenario (10,000 users, 3,000 assigned before 50/50 ->
// 60/40) of an experiment in a layer, targeted and in a holdout's scope,
// when the holdout grows from 5 % to 20 % with the weight change: 0
// assigned users move (the assigned filter skips the holdout for them);
// new users the grown holdout holds are held out.
func TestHoldoutGrowthKeepsAssignedUsers(t *testing.T) {
	const buckets, users, assigned = 10_000, 10_000, 3_000
	holdout := bucketing.Slot{ID: "h", Salt: "holdout-salt", BucketCount: buckets, End: bucketing.BucketOfFraction(0.05, buckets)}
	v1 := layered(t, "grown", inLayer(0.1, 0.9), holdout)
	v1.Targeting, _ = targeting.Compile(map[string]any{"plan": "pro"})
	pro := bucketing.Attributes{"plan": "pro"}
	var pins []bucketing.PinnedUser
	first := map[string]string{}
	for i := 0; len(pins) < assigned; i++ {
		u := fmt.Sprintf("user-%d", i)
		d, err := bucketing.Evaluate(v1, u, pro, "")
		if err != nil {
			t.Fatal(err)
		}
		if d.InExperiment {
			pins = append(pins, bucketing.PinnedUser{UserID: u, Variant: d.Variant})
			first[u] = d.Variant
		}
	}
	after, err := bucketing.Rebalance(v1.BucketMap, []bucketing.Slice{{Variant: "control", Weight: 60}, {Variant: "treatment", Weight: 40}}, buckets)
	if err != nil {
		t.Fatal(err)
	}
	v2 := *v1
	v2.BucketMap = after
	v2.Holdouts = []bucketing.Slot{{ID: "h", Salt: "holdout-salt", BucketCount: buckets, End: bucketing.BucketOfFraction(0.2, buckets)}}
	v2.Sticky = bucketing.BuildSticky(v1.ID, v1.Salt, buckets, after, func(string) bool { return true }, pins)
	v2.Sticky.Assigned = bucketing.BuildAssigned(v1.ID, v1.Salt, pins, bucketing.StickyBitsPerMember)
	moved, keptDespiteHoldout, newHeld, heldFresh, fresh := 0, 0, 0, 0, 0
	for i := range users {
		u := fmt.Sprintf("user-%d", i)
		d, err := bucketing.Evaluate(&v2, u, pro, "")
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := first[u]; ok {
			if d.Variant != v || !d.InExperiment {
				moved++
			}
			if v2.Holdouts[0].Holds(u) {
				keptDespiteHoldout++
			}
			continue
		}
		fresh++
		if v2.Holdouts[0].Holds(u) {
			heldFresh++
		}
		if d.Reason == bucketing.ReasonHoldout {
			newHeld++
		}
	}
	if moved != 0 || keptDespiteHoldout == 0 {
		t.Errorf("%d of %d assigned users moved (%d of them in the grown holdout)", moved, len(first), keptDespiteHoldout)
	}
	// Every new user the grown holdout holds is held out, but for the
	// assigned filter's false positives (0.1 %).
	if newHeld > heldFresh || newHeld < heldFresh-fresh/100 || heldFresh < fresh/10 {
		t.Errorf("%d of %d new users held out; the grown holdout holds %d of them", newHeld, fresh, heldFresh)
	}
}
