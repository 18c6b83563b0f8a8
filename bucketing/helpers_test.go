package bucketing

import (
	"fmt"
	"strings"
)

// slicesOf builds an allocation from comma-separated names and weights.
func slicesOf(names string, weights ...float64) []Slice {
	variants := strings.Split(names, ",")
	if len(variants) != len(weights) {
		panic(fmt.Sprintf("slicesOf(%q): %d names, %d weights", names, len(variants), len(weights)))
	}
	out := make([]Slice, len(variants))
	for i, v := range variants {
		out[i] = Slice{Variant: v, Weight: weights[i]}
	}
	return out
}
