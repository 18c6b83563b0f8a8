package stats

import (
	"math"
	"slices"
	"testing"
)

func TestDistributionsShareEdges(t *testing.T) {
	arms := [][]float64{{0, 1, 2, 3, 4}, {5, 10, 7.5}, {}}
	edges, dists := Distributions(arms, 4)
	wantEdges := []float64{0, 2.5, 5, 7.5, 10}
	if !slices.Equal(edges, wantEdges) {
		t.Fatalf("edges %v, want %v", edges, wantEdges)
	}
	// bins are [e_i, e_i+1), the last closed: 2.5 is not a value here; 5 and 7.5 sit on edges
	want := [][]int{{3, 2, 0, 0}, {0, 0, 1, 2}, {0, 0, 0, 0}}
	for i, d := range dists {
		if !slices.Equal(d.Histogram, want[i]) {
			t.Errorf("arm %d histogram %v, want %v", i, d.Histogram, want[i])
		}
	}
	if dists[2].N != 0 || dists[2].Mean != 0 {
		t.Errorf("empty arm described as %+v", dists[2])
	}
	if dists[1].N != 3 || dists[1].Min != 5 || dists[1].Max != 10 || dists[1].P50 != 7.5 {
		t.Errorf("arm 1 described as %+v", dists[1])
	}
}

func TestDistributionsOfEqualValues(t *testing.T) {
	edges, dists := Distributions([][]float64{{3, 3}, {3}}, 2)
	if !slices.Equal(edges, []float64{2.5, 3, 3.5}) {
		t.Errorf("edges %v for all-equal values", edges)
	}
	if dists[0].SD != 0 || dists[1].SD != 0 || dists[0].Histogram[1]+dists[1].Histogram[1] != 3 {
		t.Errorf("all-equal arms described as %+v", dists)
	}
}

func TestDistributionsWithoutValues(t *testing.T) {
	edges, dists := Distributions([][]float64{{}, {math.NaN(), math.Inf(1)}}, 0)
	if edges != nil || len(dists) != 2 || dists[1].N != 0 {
		t.Errorf("edges %v, dists %+v", edges, dists)
	}
}

func TestDistributionsDefaultBinsCountEveryValue(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = math.Sqrt(float64(i))
	}
	edges, dists := Distributions([][]float64{xs, {math.NaN(), 2}}, 0)
	if len(edges) != DefaultBins+1 {
		t.Fatalf("%d edges, want %d", len(edges), DefaultBins+1)
	}
	total := 0
	for _, c := range dists[0].Histogram {
		total += c
	}
	twoBin := slices.IndexFunc(edges, func(e float64) bool { return e > 2 }) - 1
	if total != len(xs) || dists[1].N != 1 || dists[1].Histogram[twoBin] != 1 {
		t.Errorf("histogram holds %d of %d values; NaN arm %+v", total, len(xs), dists[1])
	}
}
