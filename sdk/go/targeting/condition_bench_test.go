package targeting

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

var sinkBool bool

// BenchmarkMatch evaluates the benchmark rule of docs/targeting.md
// (testdata/targeting/bench.json: five conditions, attributes that match):
// the per-call cost of a targeted decision, which must not allocate.
func BenchmarkMatch(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "targeting", "bench.json"))
	if err != nil {
		b.Fatal(err)
	}
	var bench struct {
		Config struct {
			Experiments []struct {
				Targeting json.RawMessage `json:"targeting"`
			} `json:"experiments"`
		} `json:"config"`
		Attributes map[string]any `json:"attributes"`
	}
	if err := json.Unmarshal(raw, &bench); err != nil {
		b.Fatal(err)
	}
	var cond *Condition
	for _, e := range bench.Config.Experiments {
		if len(e.Targeting) > 0 && string(e.Targeting) != "null" {
			var errs []FieldError
			if cond, errs = Parse(e.Targeting); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	}
	if cond == nil || !cond.Match(bench.Attributes) {
		b.Fatal("the benchmark rule must match its attributes")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkBool = cond.Match(bench.Attributes)
	}
}
