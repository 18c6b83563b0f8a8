package growthbook

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	expd "github.com/expd/expd/sdk/go"
	gb "github.com/growthbook/growthbook-golang"
)

// bench is testdata/targeting/bench.json: the plain experiment, the same
// with a five-condition rule and a layer, the matching attributes, and the
// condition and namespace in GrowthBook's terms (docs/targeting.md,
// "Benchmark").
type bench struct {
	Config     json.RawMessage `json:"config"`
	Attributes map[string]any  `json:"attributes"`
	GrowthBook struct {
		Condition json.RawMessage `json:"condition"`
		Namespace json.RawMessage `json:"namespace"`
	} `json:"growthbook"`
}

func readBench(tb testing.TB) bench {
	var b bench
	readTestdata(tb, filepath.Join("targeting", "bench.json"), &b)
	return b
}

// targetedClient serves bench.json's config, every user assigned once in
// both experiments (warm).
func targetedClient(tb testing.TB, b bench) *expd.Client {
	return newExpd(tb, b.Config, b.Attributes, "plain", "targeted")
}

// gbTargeted is the targeted experiment in GrowthBook's terms, as an
// inline experiment and as a feature's rule, with per-user children
// carrying the attributes.
func gbTargeted(tb testing.TB, b bench) (*gb.Experiment, []*gb.Client) {
	rule := fmt.Sprintf(`{"key": "targeted", "variations": ["control", "treatment"], "weights": [0.5, 0.5], "hashAttribute": "id", "condition": %s, "namespace": %s}`,
		b.GrowthBook.Condition, b.GrowthBook.Namespace)
	var exp gb.Experiment
	if err := json.Unmarshal([]byte(rule), &exp); err != nil {
		tb.Fatal(err)
	}
	return &exp, gbChildren(tb, gbClient(tb, rule), b.Attributes)
}

// Every SDK really evaluates the rule and lets every user in: expd's
// decision is in the experiment for each user, and GrowthBook's
// experiment and feature come from the experiment; each splits about
// 50/50. Without the attributes, nobody is in.
func TestTargetedRunsTheRule(t *testing.T) {
	ctx := context.Background()
	b := readBench(t)
	e := targetedClient(t, b)
	exp, children := gbTargeted(t, b)
	counts := map[string]int{}
	for i, u := range users {
		d, ok := e.AssignDetail(expd.WithAttributes(ctx, b.Attributes), "targeted", u)
		if !ok || !d.InExperiment {
			t.Fatalf("expd: %s: %+v", u, d)
		}
		if d, _ := e.AssignDetail(expd.WithAttributes(ctx, map[string]any{"plan": "free"}), "targeted", u); d.ReasonCode != expd.ReasonNotTargeted {
			t.Fatalf("expd without matching attributes: %s: %+v", u, d)
		}
		res := children[i].RunExperiment(ctx, exp)
		f := children[i].EvalFeature(ctx, "checkout")
		if !res.InExperiment || f.Source != gb.ExperimentResultSource {
			t.Fatalf("GrowthBook: %s not in the experiment (%+v, %s)", u, res, f.Source)
		}
		for name, v := range map[string]any{"expd": d.Variant, "run": res.Value, "feature": f.Value} {
			if v == "control" {
				counts[name]++
			}
		}
	}
	for name, n := range counts {
		if n < 430 || n > 570 {
			t.Errorf("%s: %d of 1,000 users in control", name, n)
		}
	}
}

// BenchmarkExpdAssignWith is the warm AssignWith of both experiments, for
// -benchmem: the targeted call must allocate no more than the plain one.
func BenchmarkExpdAssignWith(b *testing.B) {
	bn := readBench(b)
	e := targetedClient(b, bn)
	ctx := context.Background()
	for _, name := range []string{"plain", "targeted"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sinkString, _ = e.AssignWith(ctx, name, users[i%1000], bn.Attributes)
			}
		})
	}
}

// BenchmarkTargetedSideBySide compares the targeted calls with expd's
// plain AssignWith (the same call on the experiment without targeting and
// layer) and with the targeted one. Run: go test -run '^$' -bench
// TargetedSideBySide
func BenchmarkTargetedSideBySide(b *testing.B) {
	ctx := context.Background()
	bn := readBench(b)
	e := targetedClient(b, bn)
	exp, children := gbTargeted(b, bn)
	attrs := bn.Attributes
	sideBySide([]call{
		sha256Baseline(),
		{"expd AssignWith, no targeting", func(i int) { sinkString, _ = e.AssignWith(ctx, "plain", users[i%1000], attrs) }},
		{"expd AssignWith, 5 conditions + layer", func(i int) { sinkString, _ = e.AssignWith(ctx, "targeted", users[i%1000], attrs) }},
		{"GrowthBook RunExperiment, same", func(i int) { sink = children[i%1000].RunExperiment(ctx, exp).Value }},
		{"GrowthBook EvalFeature, same", func(i int) { sink = children[i%1000].EvalFeature(ctx, "checkout").Value }},
	}, ratioTo{"no-target", 1}, ratioTo{"targeted", 2})
}
