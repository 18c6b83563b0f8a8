package api_test

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/power"
	"github.com/expd/expd/stats"
)

// powerUsers is the seeded data of the power tests: users u0..u199
// alternate control / concise; control users with u%10 < 2 convert,
// concise users with u%10 < 3; every user makes one model call whose
// latency is 500 + (37u mod 200) ms.
const powerUsers = 200

func powerLatency(u int) float64 { return 500 + float64((37*u)%200) }

func powerConverts(u int) bool {
	if u%2 == 0 {
		return u%10 < 2
	}
	return u%10 < 3
}

func seedPowerData(t *testing.T, f ingestFixture) {
	t.Helper()
	at := time.Now().Add(-time.Second)
	if c, _ := time.Parse(time.RFC3339Nano, f.exp.CreatedAt); !at.After(c) {
		at = c.Add(time.Millisecond)
	}
	var ndjson strings.Builder
	n := 0
	add := func(e map[string]any) {
		ndjson.Write(append(testenv.Marshal(t, e), '\n'))
		n++
	}
	for u := range powerUsers {
		user, variant := fmt.Sprintf("u%d", u), []string{"control", "concise"}[u%2]
		add(exposure("exp", user, variant, at))
		call := modelCall("exp", user, at)
		call["variant"], call["latency_ms"] = variant, powerLatency(u)
		add(call)
		if powerConverts(u) {
			b := businessEvent("exp", user, at)
			b["variant"], b["business_metric"], b["value"] = variant, "conversion", 1
			add(b)
		}
	}
	r := f.env.Do(t, "POST", "/v1/events/import", ndjson.String(), append(testenv.APIKey(f.org.SecretKey), "Content-Type", "application/x-ndjson")...)
	var imported importBody
	r.JSON(t, &imported)
	if r.Status != http.StatusAccepted || imported.Accepted != n {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
}

// rate is the share of users (by parity: 0 control, 1 concise, -1 all)
// who convert, counted from the seed rules.
func powerRate(parity int) float64 {
	conv, n := 0, 0
	for u := range powerUsers {
		if parity >= 0 && u%2 != parity {
			continue
		}
		n++
		if powerConverts(u) {
			conv++
		}
	}
	return float64(conv) / float64(n)
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func getPower(t *testing.T, f ingestFixture, query string) power.Answer {
	t.Helper()
	var got power.Answer
	f.env.Do(t, "GET", "/v1/experiments/exp/power"+query, nil, testenv.Bearer(f.org.MemberToken)...).ExpectJSON(t, http.StatusOK, &got)
	return got
}

// TestExperimentPowerEqualsStats: the running experiment's answer is
// stats' (itself R's) on the experiment's own baseline, SD and traffic.
func TestExperimentPowerEqualsStats(t *testing.T) {
	f := newIngestFixture(t)
	seedPowerData(t, f)
	got := getPower(t, f, "?days=7")
	if got.ExperimentID != f.exp.ID || got.Source != "experiment" || got.ExposedUsers != powerUsers || got.DataDays != 1 ||
		got.UsersPerDay != powerUsers || got.Days == nil || *got.Days != 7 || got.MDE != nil || got.NStar != stats.DefaultNStar || got.NStarSource != "default" {
		t.Fatalf("power answer %+v", got)
	}
	if len(got.Metrics) != 1 || got.Metrics[0].Metric != "conversion" || got.Metrics[0].Variant != "concise" {
		t.Fatalf("want the one primary metric against concise: %+v", got.Metrics)
	}
	m := got.Metrics[0]
	p := powerRate(0)
	if !m.Proportion || !closeTo(m.Baseline, p) || m.UsersSoFar != powerUsers || m.PairUsersPerDay != powerUsers || m.TreatmentShare != 0.5 || m.Problem != "" {
		t.Fatalf("conversion row %+v, want control rate %v", m, p)
	}
	n := float64(powerUsers + 7*powerUsers)
	d := stats.PowerDesign{Proportion: true, Baseline: p, TreatmentShare: 0.5}
	fixed, err := stats.MDE(d, n)
	if err != nil {
		t.Fatal(err)
	}
	d.Sequential = true
	seq, err := stats.MDE(d, n)
	if err != nil {
		t.Fatal(err)
	}
	if m.FixedHorizon == nil || m.Sequential == nil || m.FixedHorizon.Users != n || !closeTo(m.FixedHorizon.MDE, fixed) || !closeTo(m.Sequential.MDE, seq) ||
		!closeTo(*m.FixedHorizon.MDERelative, fixed/p) || m.Sequential.MDE <= m.FixedHorizon.MDE {
		t.Fatalf("days=7: fixed %+v sequential %+v, want MDE %v and %v", m.FixedHorizon, m.Sequential, fixed, seq)
	}
	if m.SequentialCost == nil || !(*m.SequentialCost > 1) {
		t.Fatalf("sequential cost %v, want > 1", m.SequentialCost)
	}

	// The days a relative change of 60 % needs, on the same data.
	got = getPower(t, f, "?mde=0.6")
	m = got.Metrics[0]
	d.Sequential = false
	for _, c := range []struct {
		plan       *power.Plan
		sequential bool
	}{{m.FixedHorizon, false}, {m.Sequential, true}} {
		d.Sequential = c.sequential
		need, err := stats.UsersForMDE(d, 0.6*p)
		if err != nil {
			t.Fatal(err)
		}
		days, err := stats.DaysForMDE(d, 0.6*p, powerUsers, powerUsers)
		if err != nil {
			t.Fatal(err)
		}
		if c.plan == nil || !closeTo(c.plan.Users, need) || c.plan.Days == nil || !closeTo(*c.plan.Days, days) || !closeTo(c.plan.MDE, 0.6*p) {
			t.Fatalf("mde=0.6 sequential=%v: %+v, want %v users, %v days", c.sequential, c.plan, need, days)
		}
	}
	if !closeTo(*m.SequentialCost, m.Sequential.Users/m.FixedHorizon.Users) {
		t.Fatalf("sequential cost %v", *m.SequentialCost)
	}

	// A mean metric named explicitly: Student's t on the pooled SD.
	got = getPower(t, f, "?metric=latency_ms&days=3")
	m = got.Metrics[0]
	sd, base := pooledLatencySD()
	if m.Metric != "latency_ms" || m.Proportion || !closeTo(m.SD, sd) || !closeTo(m.Baseline, base) {
		t.Fatalf("latency row %+v, want sd %v baseline %v", m, sd, base)
	}
	want, err := stats.MDE(stats.PowerDesign{SD: sd}, float64(4*powerUsers))
	if err != nil || m.FixedHorizon == nil || !closeTo(m.FixedHorizon.MDE, want) {
		t.Fatalf("latency fixed horizon %+v, want MDE %v (%v)", m.FixedHorizon, want, err)
	}
}

// pooledLatencySD is the within-arm pooled SD of the seeded latencies and
// the control mean, computed apart from package power.
func pooledLatencySD() (sd, controlMean float64) {
	var sum, n [2]float64
	for u := range powerUsers {
		sum[u%2] += powerLatency(u)
		n[u%2]++
	}
	var ss float64
	for u := range powerUsers {
		d := powerLatency(u) - sum[u%2]/n[u%2]
		ss += d * d
	}
	return math.Sqrt(ss / (n[0] + n[1] - 2)), sum[0] / n[0]
}

// TestDraftPowerFromOrgData: a draft is planned from the org's recent
// data, every user pooled; another org's data is not read.
func TestDraftPowerFromOrgData(t *testing.T) {
	f := newIngestFixture(t)
	seedPowerData(t, f)
	cfg := validConfig("draft-plan")
	var got power.Answer
	f.env.Do(t, "POST", "/v1/power?days=7", cfg, testenv.Bearer(f.org.MemberToken)...).ExpectJSON(t, http.StatusOK, &got)
	p := powerRate(-1)
	if got.Source != "org_recent" || got.ExposedUsers != powerUsers || got.DataDays != 1 || len(got.Metrics) != 1 {
		t.Fatalf("draft answer %+v", got)
	}
	m := got.Metrics[0]
	want, err := stats.MDE(stats.PowerDesign{Proportion: true, Baseline: p}, 7*powerUsers)
	if err != nil || m.UsersSoFar != 0 || !closeTo(m.Baseline, p) || m.FixedHorizon == nil || !closeTo(m.FixedHorizon.MDE, want) {
		t.Fatalf("draft conversion %+v, want baseline %v MDE %v (%v)", m, p, want, err)
	}

	// A three-arm draft: each pair gets its share of the traffic.
	cfg["allocation"] = []map[string]any{{"variant": "control", "weight": 50}, {"variant": "concise", "weight": 25}, {"variant": "long", "weight": 25}}
	f.env.Do(t, "POST", "/v1/power?days=7", cfg, testenv.Bearer(f.org.MemberToken)...).ExpectJSON(t, http.StatusOK, &got)
	if len(got.Metrics) != 2 || got.Metrics[1].Variant != "long" || !closeTo(got.Metrics[1].PairUsersPerDay, 0.75*powerUsers) || !closeTo(got.Metrics[1].TreatmentShare, 1.0/3) {
		t.Fatalf("three arms: %+v", got.Metrics)
	}
	want, err = stats.MDE(stats.PowerDesign{Proportion: true, Baseline: p, TreatmentShare: 1.0 / 3}, 7*0.75*powerUsers)
	if err != nil || !closeTo(got.Metrics[1].FixedHorizon.MDE, want) {
		t.Fatalf("three arms MDE %+v, want %v", got.Metrics[1].FixedHorizon, want)
	}

	// Another org has no data: numbers give way to a problem.
	other := f.env.NewOrg(t)
	f.env.Do(t, "POST", "/v1/power", validConfig("draft-plan"), testenv.Bearer(other.AdminToken)...).ExpectJSON(t, http.StatusOK, &got)
	if got.ExposedUsers != 0 || len(got.Metrics) != 1 || got.Metrics[0].Problem == "" || got.Metrics[0].FixedHorizon != nil || *got.Days != 14 {
		t.Fatalf("empty org: %+v", got)
	}
}

// TestPowerBadInput: every refusal is a problem naming the field; another
// org's experiment is a 404; SDK keys are refused.
func TestPowerBadInput(t *testing.T) {
	f := newIngestFixture(t)
	tok := testenv.Bearer(f.org.MemberToken)
	for query, field := range map[string]string{
		"?days=0": "days", "?days=-3": "days", "?days=1.5": "days", "?days=99999999999999999999": "days", "?days=3651": "days",
		"?mde=-0.1": "mde", "?mde=0": "mde", "?mde=1e400": "mde", "?mde=NaN": "mde", "?mde=abc": "mde", "?days=7&mde=0.1": "mde",
		"?metric=nope": "metric", "?metric=conv%00ersion": "metric",
	} {
		p := testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/exp/power"+query, nil, tok...), 400)
		if !p.HasFieldError(field) {
			t.Errorf("GET %s: %+v, want a field error on %s", query, p, field)
		}
		p = testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/power"+query, validConfig("d"), tok...), 400)
		if !p.HasFieldError(field) {
			t.Errorf("POST %s: %+v, want a field error on %s", query, p, field)
		}
	}
	testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/power", `{"name": `, tok...), 400)
	bad := validConfig("nul\x00name")
	if p := testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/power", bad, tok...), 400); !p.HasFieldError("name") {
		t.Errorf("NUL in name: %+v", p)
	}
	delete(bad, "allocation")
	if p := testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/power", bad, tok...), 400); !p.HasFieldError("allocation") {
		t.Errorf("missing allocation: %+v", p)
	}
	testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/power", strings.Repeat(" ", 2<<20)+"{}", tok...), 413)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/nope/power", nil, tok...), 404)
	other := f.env.NewOrg(t)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/"+f.exp.ID+"/power", nil, testenv.Bearer(other.AdminToken)...), 404)
	testenv.ExpectProblem(t, f.env.Do(t, "GET", "/v1/experiments/exp/power", nil, testenv.APIKey(f.org.SecretKey)...), 401)
	testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/power", validConfig("d"), testenv.APIKey(f.org.SecretKey)...), 401)
}
