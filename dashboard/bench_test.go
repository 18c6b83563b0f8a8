package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/verdict"
)

// BenchmarkResultsPage serves the results page of a run with 20 metrics ×
// 3 arms (control and 2 treatments) through the real router (database
// reads included, no contract check) and reports the page's size and that of its assets.
// Goal: < 50 ms a page. Each iteration requests, interleaved so that the
// machine's load falls on all alike, over the same rows:
//   - page-ms: the page of a run whose verdict is stored (every run once
//     `expd migrate` has backfilled the older ones);
//   - page-decided-ms: the same page for a run without a stored verdict
//     (decided on read: the config version loaded, the metrics resolved);
//   - api-ms: the baseline, GET /v1/experiments/{id}/results of the same
//     run (the same reads and the verdict, as JSON: no HTML, no SVG).
//
// page/api is the cost of rendering the page over the API's answer.
func BenchmarkResultsPage(b *testing.B) {
	env := testenv.New(b)
	org := env.NewOrg(b)
	cfg := resultstest.Config("bench-results")
	exp := resultstest.Experiment(b, env.DB, org.ID, cfg)
	var metrics []string
	for i := range 20 {
		metrics = append(metrics, fmt.Sprintf("metric_%02d", i))
	}
	const stored, onRead = "manual-2026-11-20T10:00:00Z", "manual-2026-11-21T10:00:00Z"
	publishRun(b, env.DB, org.ID, exp.ID, stored, stats.GatePass, metrics, []string{"treatment", "treatment_b"})
	if n, err := verdict.Backfill(b.Context(), env.DB); err != nil || n != 1 {
		b.Fatalf("backfill: %d runs, %v", n, err)
	}
	publishRun(b, env.DB, org.ID, exp.ID, onRead, stats.GatePass, metrics, []string{"treatment", "treatment_b"})
	// The same router and database without the tests' contract check
	// (which validates every JSON answer against the schema and would
	// weigh on the baseline more than on the page).
	raw := httptest.NewServer(api.NewRouter(env.Deps))
	b.Cleanup(raw.Close)
	v := newVisitor(b, env, org.MemberToken)
	v.base = raw.URL
	pages := map[string]string{
		"page":         "/experiments/" + exp.ID + "?run=" + stored,
		"page-decided": "/experiments/" + exp.ID + "?run=" + onRead,
		"api":          "/v1/experiments/" + exp.ID + "/results?day=" + stored,
	}
	first := v.get(pages["page"])
	if first.Status != http.StatusOK || !strings.Contains(first.Body, `id="verdict"`) || strings.Count(first.Body, `<div class="multiple">`) != 20 {
		b.Fatalf("results page: %d, verdict or 20 forest plots missing", first.Status)
	}
	if p := v.get(pages["api"]); p.Status != http.StatusOK || !strings.Contains(p.Body, `"verdict"`) {
		b.Fatalf("results route: %d", p.Status)
	}
	assets := len(v.get("/assets/style.css").Body) + len(v.get("/assets/dashboard.js").Body)
	spent, n := map[string]time.Duration{}, 0
	b.ResetTimer()
	for b.Loop() {
		n++
		for _, name := range []string{"page", "page-decided", "api"} {
			start := time.Now()
			if p := v.get(pages[name]); p.Status != http.StatusOK {
				b.Fatal(name, p.Status)
			}
			spent[name] += time.Since(start)
		}
	}
	ms := func(name string) float64 { return float64(spent[name].Microseconds()) / 1000 / float64(n) }
	b.ReportMetric(ms("page"), "page-ms")
	b.ReportMetric(ms("page-decided"), "page-decided-ms")
	b.ReportMetric(ms("api"), "api-ms")
	b.ReportMetric(ms("page")/ms("api"), "page/api")
	b.ReportMetric(float64(len(first.Body)), "page-bytes")
	b.ReportMetric(float64(assets), "asset-bytes")
}

// BenchmarkRunNowToResults measures, in headless Chromium, the time from
// the click on Run now to the results page showing the forest plot, on a
// server like expd dev (the real router, the in-process Temporal server,
// expd's worker) holding 100,000 events sent through POST /v1/events. One
// measurement per iteration; run it with -benchtime=1x.
func BenchmarkRunNowToResults(b *testing.B) {
	ctx := newBrowser(b)
	env, _ := testenv.NewWithWorker(b, nil)
	org := env.NewOrg(b)
	// The dev org's plan, as expd dev sets it: no allowance or sample cap in the way.
	if err := env.DB.Model(&orgs.Org{}).Where("id = ?", org.ID).Update("plan", plans.Enterprise).Error; err != nil {
		b.Fatal(err)
	}
	exp := resultstest.Experiment(b, env.DB, org.ID, resultstest.Config("bench-run-now"))
	// ~4.5 events per user: 22,300 users make about 100,000 events.
	users := resultstest.Users(11_150, 11)
	events := resultstest.Events(org.ID, exp.ID, users, time.Now())
	resultstest.Post(b, env, org.SecretKey, events)
	time.Sleep(1100 * time.Millisecond)
	base := env.Server.URL
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/sign-in"), chromedp.SendKeys(chromedp.ID("token"), org.AdminToken), chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.Search(`//h1[text()="Experiments"]`))); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/experiments/"+exp.ID), chromedp.WaitVisible(chromedp.ID("run-now"))); err != nil {
			b.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond) // each iteration is a new run (runs are named by the second)
		b.StartTimer()
		start := time.Now()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("run-now")), chromedp.WaitVisible(chromedp.CSS("#forest svg"))); err != nil {
			b.Fatal(err)
		}
		b.Logf("Run now to results shown: %s (%d users, %d events)", time.Since(start).Round(time.Millisecond), len(users), len(events))
	}
}
