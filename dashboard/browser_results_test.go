package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
)

// The results page read at 1,280 × 800, as a product manager opens it:
// the comparisons table does not scroll sideways (decision, n and each
// arm's value in view), the verdict is visible without scrolling, each
// metric has its own small plot, and axe finds nothing serious.
func TestBrowserResultsPageFitsAt1280(t *testing.T) {
	ctx := newBrowser(t)
	env := testenv.New(t)
	org := env.NewOrg(t)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("browser-1280"))
	publishRun(t, env.DB, org.ID, exp.ID, "manual-2026-11-20T10:00:00Z", stats.GatePass, resultstest.Metrics, []string{"treatment", "treatment_b"})
	base := env.Server.URL

	must(t, ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), org.AdminToken), chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.Search(`//h1[text()="Experiments"]`)),
		chromedp.Navigate(base+"/experiments/"+exp.ID), chromedp.WaitVisible(chromedp.ID("comparisons")))

	fits := value(t, ctx, chromedp.Evaluate[bool](`(() => { const w = document.getElementById("comparisons").parentElement;
		return w.scrollWidth <= w.clientWidth && document.documentElement.scrollWidth <= document.documentElement.clientWidth })()`))
	if !fits {
		widths := value(t, ctx, chromedp.Evaluate[[]int](`(() => { const w = document.getElementById("comparisons").parentElement;
			return [w.scrollWidth, w.clientWidth, document.documentElement.scrollWidth, document.documentElement.clientWidth] })()`))
		t.Fatalf("the comparisons table overflows at 1,280 px: table wrapper %d > %d or page %d > %d", widths[0], widths[1], widths[2], widths[3])
	}
	inView := value(t, ctx, chromedp.Evaluate[bool](`(() => { const r = document.getElementById("verdict").getBoundingClientRect();
		return r.top >= 0 && r.bottom <= window.innerHeight })()`))
	if !inView {
		t.Fatal("the verdict is not visible without scrolling at 1,280 × 800")
	}
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#forest .multiple svg").length`)); n != len(resultstest.Metrics) {
		t.Fatalf("%d forest plots, want one per metric (%d)", n, len(resultstest.Metrics))
	}
	checkA11y(t, ctx, "results at 1,280 px")
	screenshot(t, ctx, "dashboard-results-1280.png")

	// Ship behind its confirmation: cancelled, nothing changes; confirmed,
	// the experiment is shipped and the page says so.
	status := func() (string, string) {
		t.Helper()
		got, err := experiments.Store{DB: env.DB}.Get(t.Context(), org.ID, exp.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status, got.ShippedVariant
	}
	must(t, ctx, chromedp.SetValue(chromedp.ID("ship-variant"), "treatment"), chromedp.Click(chromedp.ID("ship")),
		chromedp.WaitVisible(chromedp.ID("confirm")))
	if text := value(t, ctx, chromedp.Evaluate[string](`document.getElementById("consequence").textContent`)); !strings.Contains(text, "every user gets treatment's config from now on") {
		t.Fatalf("the confirmation does not say what users will get: %q", text)
	}
	checkA11y(t, ctx, "ship confirmation")
	must(t, ctx, chromedp.Click(chromedp.ID("cancel")), chromedp.WaitVisible(chromedp.ID("comparisons")))
	if st, _ := status(); st != "running" {
		t.Fatalf("a cancelled confirmation changed the status to %s", st)
	}
	must(t, ctx, chromedp.SetValue(chromedp.ID("ship-variant"), "treatment"), chromedp.Click(chromedp.ID("ship")),
		chromedp.WaitVisible(chromedp.ID("confirm")), chromedp.Click(chromedp.ID("confirm")),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="status"][text()="shipped: treatment"]`)))
	if st, v := status(); st != "shipped" || v != "treatment" {
		t.Fatalf("after the confirmed ship: %s %q", st, v)
	}
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#ship, #stop, #start").length`)); n != 0 {
		t.Fatalf("%d lifecycle buttons after shipping, want none (shipping is final)", n)
	}
	checkA11y(t, ctx, "results after shipping")
}
