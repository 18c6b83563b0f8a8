package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// A reviewer in a real browser: open the call explorer, filter it by
// variant and score range, add a human score to an unscored call, and see
// the score metric in the results after a run.
func TestBrowserCallExplorerReviewThenResults(t *testing.T) {
	ctx := newBrowser(t)
	env, _ := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	base := env.Server.URL
	cfg := resultstest.Config("explorer-browser")
	shared := false
	cfg.Metrics = append(cfg.Metrics, experiments.Metric{Name: "helpfulness", Kind: vocab.Mean, Category: "primary",
		MethodDefault: string(stats.WelchT), MetricVersion: 1, SharedOrgWide: &shared,
		Source: &experiments.MetricSource{EventType: vocab.TypeScore, Score: "helpfulness", ScoreSource: "human"}})
	exp := resultstest.Experiment(t, env.DB, org.ID, cfg)
	users := resultstest.Users(30, 11)
	events := resultstest.Events(org.ID, exp.ID, users, time.Now())
	resultstest.Post(t, env, org.SecretKey, events)

	// Human scores of every call but one: 0.5 in control, 0.6 in
	// treatment, 0.9 for one treatment user (the filter's target).
	var scores []map[string]any
	unscored, target := "", users[len(users)-1].ID
	var targetCalls int
	for _, e := range events {
		if e.Type != vocab.TypeModelCall {
			continue
		}
		if unscored == "" && e.Variant == resultstest.Arms[0] {
			unscored = e.EventID
			continue
		}
		v := map[string]float64{resultstest.Arms[0]: 0.5, resultstest.Arms[1]: 0.6}[e.Variant]
		if e.UserID == target {
			v, targetCalls = 0.9, targetCalls+1
		}
		scores = append(scores, map[string]any{"call_id": e.EventID, "name": "helpfulness", "value": v})
	}
	if r := env.Do(t, http.MethodPost, "/v1/scores", map[string]any{"scores": scores}, testenv.APIKey(org.SecretKey)...); r.Status != http.StatusAccepted {
		t.Fatalf("scores: %d %s", r.Status, r.Body)
	}
	time.Sleep(1100 * time.Millisecond) // a run's instant is whole seconds: let it fall after every record

	must(t, ctx, chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), org.AdminToken), chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.Search(`//h1[text()="Experiments"]`)))
	must(t, ctx, chromedp.Navigate(base+"/experiments/"+exp.ID), chromedp.Click(chromedp.Search(`//a[text()="Calls"]`)),
		chromedp.WaitVisible(chromedp.ID("col-control")), chromedp.WaitVisible(chromedp.ID("col-treatment")))
	checkA11y(t, ctx, "call explorer")

	// Filter: the treatment variant, helpfulness at least 0.8.
	must(t, ctx, chromedp.SetValue(chromedp.Search(`//select[@name="variant"]`), "treatment"),
		chromedp.SendKeys(chromedp.Search(`//input[@name="score"]`), "helpfulness"),
		chromedp.SendKeys(chromedp.Search(`//input[@name="score_min"]`), "0.8"),
		chromedp.Click(chromedp.Search(`//button[text()="Filter"]`)), chromedp.WaitNotPresent(chromedp.ID("col-control")))
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("article.call").length`)); n != targetCalls {
		t.Fatalf("filtered explorer shows %d calls, want the %d of %s", n, targetCalls, target)
	}
	// Review the unscored control call: open its form, give it 1.
	must(t, ctx, chromedp.Navigate(base+"/experiments/"+exp.ID+"/calls?variant=control&limit=500"),
		chromedp.WaitVisible(chromedp.ID("call-"+unscored)))
	form := fmt.Sprintf(`//article[@id="call-%s"]`, unscored)
	// Texts are collapsed until opened, and open in place.
	opened := fmt.Sprintf(`document.querySelector('#call-%s details').open`, unscored)
	if value(t, ctx, chromedp.Evaluate[bool](opened)) {
		t.Fatal("the prompt is expanded before it is opened")
	}
	must(t, ctx, chromedp.Click(chromedp.Search(form+`//summary[starts-with(text(), "Prompt")]`)))
	if !value(t, ctx, chromedp.Evaluate[bool](opened)) {
		t.Fatal("the prompt did not expand in place")
	}
	must(t, ctx, chromedp.Click(chromedp.Search(form+`//summary[text()="Add a human score"]`)),
		chromedp.SendKeys(chromedp.Search(form+`//input[@name="value"]`), "1"),
		chromedp.SendKeys(chromedp.Search(form+`//input[@name="comment"]`), "correct and kind"),
		chromedp.Click(chromedp.Search(form+`//button[text()="Save score"]`)),
		chromedp.WaitVisible(chromedp.Search(form+`//td[contains(., "correct and kind")]`)))
	checkA11y(t, ctx, "call explorer after a review")
	screenshot(t, ctx, "dashboard-calls.png")

	// Run now: the score metric is in the results, over every control user.
	must(t, ctx, chromedp.Navigate(base+"/experiments/"+exp.ID), chromedp.Click(chromedp.ID("run-now")))
	waitCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(waitCtx, chromedp.WaitVisible(chromedp.CSS("#forest svg"))); err != nil {
		t.Fatalf("results did not show: %v", err)
	}
	row := value(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("main table tbody tr")].map(r => r.innerText).find(t => t.startsWith("helpfulness")) || ""`))
	if !strings.Contains(row, "treatment") || !strings.Contains(row, "30 / 30") {
		t.Fatalf("results row of helpfulness %q: want treatment against control with 30 users each", row)
	}
	// Every call is scored now (the review scored the last one): full
	// coverage, nobody left out; the row links to the calls behind it.
	if !strings.Contains(row, "scored calls 100% / 100%") || !strings.Contains(row, "unscored users 0 / 0") {
		t.Fatalf("results row of helpfulness %q: want full score coverage", row)
	}
	checkA11y(t, ctx, "results with a score metric")
	must(t, ctx, chromedp.Click(chromedp.Search(`//a[contains(., "treatment") and contains(@href, "score=helpfulness")]`)),
		chromedp.WaitVisible(chromedp.ID("col-treatment")))
	if loc := value(t, ctx, chromedp.Location()); !strings.Contains(loc, "variant=treatment") || strings.Contains(value(t, ctx, chromedp.OuterHTML(chromedp.CSS("main"))), `id="col-control"`) {
		t.Fatalf("the row's link led to %s", loc)
	}
}
