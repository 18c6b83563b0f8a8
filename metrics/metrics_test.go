package metrics_test

import (
	"context"
	"testing"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

func flag(b bool) *bool { return &b }

func TestBuiltinsAreCompleteAndCopies(t *testing.T) {
	all := metrics.Builtins()
	names := map[string]bool{}
	for _, m := range all {
		if m.Source == nil || m.MetricVersion != 1 || m.SharedOrgWide == nil || *m.SharedOrgWide {
			t.Errorf("built-in %s is incomplete: %+v", m.Name, m)
		}
		names[m.Name] = true
	}
	for _, want := range []string{metrics.LatencyMs, metrics.LatencyP95Ms, metrics.ErrorRate, metrics.TotalTokens, metrics.CostUSD, metrics.TimeToFirstTokenMs, metrics.Conversion, metrics.Revenue, metrics.ThumbsUpRate} {
		if !names[want] {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	all[0].Source.Field = "changed"
	if m, _ := metrics.Builtin(all[0].Name); m.Source.Field == "changed" {
		t.Fatal("editing a returned built-in changed the catalogue")
	}
}

func sharedDef(name string, field string) experiments.Metric {
	return experiments.Metric{Name: name, Kind: "mean", Category: "guardrail", MethodDefault: "welch_t", MetricVersion: 7,
		SharedOrgWide: flag(true), Source: &experiments.MetricSource{EventType: "model_call", Field: field}}
}

func TestSharedMetricsGetServerMintedVersions(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	store := metrics.Store{DB: db}
	first, err := store.Create(ctx, org.ID, "alice", sharedDef("tokens_out", "output_tokens"))
	if err != nil || first.MetricVersion != 1 {
		t.Fatalf("first create = v%d, %v", first.MetricVersion, err)
	}
	second, err := store.Create(ctx, org.ID, "alice", sharedDef("tokens_out", "input_tokens"))
	if err != nil || second.MetricVersion != 2 {
		t.Fatalf("second create = v%d, %v", second.MetricVersion, err)
	}
	list, err := store.List(ctx, org.ID)
	if err != nil || len(list) != 2 || list[0].MetricVersion != 2 || list[1].Source.Field != "output_tokens" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	other := testenv.NewOrg(t, db, testenv.Signer(t))
	if l, _ := store.List(ctx, other.ID); len(l) != 0 {
		t.Fatalf("another org sees %d shared metrics", len(l))
	}
}

func TestSharedMetricValidation(t *testing.T) {
	cases := map[string]experiments.Metric{
		"kind":   {Name: "x", Kind: "median", Category: "primary", MethodDefault: "welch_t", SharedOrgWide: flag(true), Source: &experiments.MetricSource{EventType: "model_call", Field: "latency_ms"}},
		"source": {Name: "x", Kind: "mean", Category: "primary", MethodDefault: "welch_t", SharedOrgWide: flag(true)},
		"name":   sharedDef(metrics.LatencyMs, "latency_ms"),
		"source.field": {Name: "x", Kind: "mean", Category: "primary", MethodDefault: "welch_t", SharedOrgWide: flag(true),
			Source: &experiments.MetricSource{EventType: "model_call", Field: "prompt"}},
	}
	for field, m := range cases {
		err := metrics.Validate(m)
		found := false
		for _, fe := range validate.Fields(err) {
			found = found || fe.Field == field
		}
		if !found {
			t.Errorf("Validate(%+v) = %v, want a field error on %s", m, err, field)
		}
	}
	if err := metrics.Validate(sharedDef("ok", "latency_ms")); err != nil {
		t.Errorf("valid definition rejected: %v", err)
	}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	store := metrics.Store{DB: db}
	for _, f := range []string{"output_tokens", "input_tokens"} {
		if _, err := store.Create(ctx, org.ID, "alice", sharedDef("tokens", f)); err != nil {
			t.Fatal(err)
		}
	}
	explicit := experiments.MetricSource{EventType: "business_event", BusinessMetric: "signup"}
	in := []experiments.Metric{
		{Name: "tokens", Kind: "sum", Category: "primary", MethodDefault: "z_test", MetricVersion: 1, SharedOrgWide: flag(true)},
		{Name: "tokens", Kind: "sum", Category: "secondary", MethodDefault: "z_test", MetricVersion: 2, SharedOrgWide: flag(true)},
		{Name: "tokens", MetricVersion: 3, SharedOrgWide: flag(true)},
		{Name: metrics.Conversion, Kind: "proportion", MethodDefault: "z_test", MetricVersion: 1, SharedOrgWide: flag(false)},
		{Name: "signup", Kind: "proportion", MethodDefault: "z_test", MetricVersion: 1, SharedOrgWide: flag(false), Source: &explicit},
		{Name: "mystery", Kind: "mean", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: flag(false)},
	}
	out, err := metrics.Resolve(ctx, store, org.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		origin, field, kind, category string
		problem                       bool
	}{
		{metrics.OriginShared, "output_tokens", "mean", "primary", false},
		{metrics.OriginShared, "input_tokens", "mean", "secondary", false},
		{metrics.OriginShared, "", "", "", true},
		{metrics.OriginBuiltin, "", "proportion", "", false},
		{metrics.OriginExperiment, "", "proportion", "", false},
		{metrics.OriginExperiment, "", "", "", true},
	}
	for i, c := range checks {
		r := out[i]
		if r.Origin != c.origin || (r.Problem != "") != c.problem {
			t.Errorf("%d: origin %s problem %q", i, r.Origin, r.Problem)
			continue
		}
		if c.problem {
			continue
		}
		if r.Source == nil || (c.field != "" && r.Source.Field != c.field) || string(r.Kind) != c.kind || (c.category != "" && r.Category != c.category) {
			t.Errorf("%d: resolved to %+v (source %+v)", i, r.Metric, r.Source)
		}
	}
	if out[3].Source.BusinessMetric != metrics.Conversion || out[4].Source.BusinessMetric != "signup" {
		t.Errorf("sources: %+v, %+v", out[3].Source, out[4].Source)
	}
}

// TestThumbsUpRate: the built-in reads the human thumbs_up score as a
// proportion, and validates as an experiment's metric would; listed by
// name with a kind or test that cannot read scores, it resolves with the
// reason instead of failing the run.
func TestThumbsUpRate(t *testing.T) {
	m, ok := metrics.Builtin(metrics.ThumbsUpRate)
	if !ok || m.Kind != vocab.Proportion || m.Source.EventType != vocab.TypeScore || m.Source.Score != metrics.ThumbsUp || m.Source.ScoreSource != "human" || m.MethodDefault != "welch_t" {
		t.Fatalf("thumbs_up_rate = %+v, %+v", m, m.Source)
	}
	probe := m
	probe.Name = "thumbs_copy"
	if err := metrics.Validate(probe); err != nil {
		t.Errorf("the built-in's definition does not validate: %v", err)
	}
	env := testenv.New(t)
	org := env.NewOrg(t)
	listed := func(kind vocab.Kind, method string) experiments.Metric {
		return experiments.Metric{Name: metrics.ThumbsUpRate, Kind: kind, Category: "primary", MethodDefault: method, MetricVersion: 1, SharedOrgWide: flag(false)}
	}
	rs, err := metrics.Resolve(context.Background(), metrics.Store{DB: env.DB}, org.ID, []experiments.Metric{
		listed(vocab.Proportion, "welch_t"), listed(vocab.Proportion, "z_test"), listed(vocab.Sum, "welch_t"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Problem != "" || rs[0].Source.Score != metrics.ThumbsUp {
		t.Errorf("listed by name: %+v", rs[0])
	}
	if rs[1].Problem == "" || rs[2].Problem == "" {
		t.Errorf("z_test and a sum over scores resolved without a problem: %q, %q", rs[1].Problem, rs[2].Problem)
	}
}
