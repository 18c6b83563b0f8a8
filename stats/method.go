package stats

import "fmt"

// Method names a two-sample test as it appears in a MetricDefinition's
// method_default.
type Method string

// The tests Compare can run.
const (
	WelchT      Method = "welch_t"
	ZTest       Method = "z_test"
	MannWhitney Method = "mann_whitney"
	Permutation Method = "permutation"
	Bootstrap   Method = "bootstrap"
)

// Methods lists every supported method in a stable order.
var Methods = []Method{WelchT, ZTest, MannWhitney, Permutation, Bootstrap}

// ParseMethod returns the Method named s, or an error naming the valid ones.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("stats: unknown method %q (want one of %v)", s, Methods)
}
