package plans

import "testing"

// The table must keep docs/architecture.md §7's values: clients and the results
// pipeline read them through /v1/plans and every limit check.
func TestTableMatchesDesign(t *testing.T) {
	want := map[Name][4]int64{
		Free:       {30, 1_000, 10_000, 100_000},
		Pro:        {90, 10_000, 100_000, 5_000_000},
		Business:   {365, 50_000, 1_000_000, 50_000_000},
		Enterprise: {730, 100_000, 10_000_000, Unlimited},
	}
	all := All()
	if len(all) != len(want) {
		t.Fatalf("%d plans", len(all))
	}
	for _, l := range all {
		w := want[l.Plan]
		got := [4]int64{int64(l.RetentionDays), int64(l.MaxPermutations), int64(l.MaxSamplePerArm), l.MonthlyEventAllowance}
		if got != w {
			t.Errorf("%s: %v, want %v", l.Plan, got, w)
		}
		if l.RequestsPerSecond <= 0 || l.Burst < 1 {
			t.Errorf("%s: rate %v burst %d", l.Plan, l.RequestsPerSecond, l.Burst)
		}
	}
	all[0].RetentionDays = 1
	if Get(Free).RetentionDays != 30 {
		t.Fatal("All exposes the table for writing")
	}
	if Get("gold").Plan != Free || Get("").Plan != Free {
		t.Fatal("unknown plan is not free")
	}
	if _, err := Parse("gold"); err == nil {
		t.Fatal("Parse accepted an unknown plan")
	}
	if p, err := Parse("business"); err != nil || p != Business {
		t.Fatal("Parse business")
	}
	if !Purchasable(Pro) || !Purchasable(Business) || Purchasable(Free) || Purchasable(Enterprise) {
		t.Fatal("Purchasable")
	}
}
