package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/results"
)

// A run that tested each phase shows each phase's users, settling users
// and adjusted p beside the phase, and marks the failed one.
func TestPhasesCarryTheirOwnTrafficCheck(t *testing.T) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	phases := []experiments.Phase{
		{Number: 1, Start: start, End: start.Add(48 * time.Hour), Version: 1,
			Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "b", Weight: 50}}},
		{Number: 2, Start: start.Add(48 * time.Hour), End: start.Add(96 * time.Hour), Version: 3,
			Allocation: []bucketing.Slice{{Variant: "control", Weight: 1}, {Variant: "b", Weight: 3}}},
	}
	adj1, adj2 := 0.8, 0.0002
	srm := results.SRMSummary{SRMPhases: &results.SRMPhases{FailedPhases: []int{2}, Phases: []results.PhaseSRM{
		{Phase: 1, Observed: map[string]int64{"control": 1000, "b": 990}, PValue: 0.4, PAdjusted: &adj1},
		{Phase: 2, Observed: map[string]int64{"control": 1500, "b": 1200}, Settling: 12, PValue: 0.0001, PAdjusted: &adj2},
	}}}
	rows := phasesOf(phases, srm)
	if len(rows) != 2 || rows[0].Split != "control 50%, b 50%" || rows[1].Split != "control 25%, b 75%" || rows[1].Version != 3 {
		t.Fatalf("phases: %+v", rows)
	}
	if rows[0].Observed != "control 1,000, b 990" || rows[0].Failed || !strings.Contains(rows[0].SRM, "adjusted 0.8") {
		t.Fatalf("phase 1: %+v", rows[0])
	}
	if rows[1].Observed != "control 1,500, b 1,200" || rows[1].Settling != 12 || !rows[1].Failed || !strings.Contains(rows[1].SRM, "adjusted") {
		t.Fatalf("phase 2: %+v", rows[1])
	}
	// One phase, no per-phase test: the phase without numbers.
	if one := phasesOf(phases[:1], results.SRMSummary{}); one[0].Observed != "" || one[0].SRM != "" || one[0].Failed {
		t.Fatalf("single phase: %+v", one[0])
	}
}
