package dashboard_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
)

//go:embed testdata/axe/axe.min.js
var axeSource string

// chromium finds Debian's chromium. Without it the browser tests skip,
// unless EXPD_REQUIRE_BROWSER=1 (set by .ci/run, which installs it).
func chromium(t testing.TB) string {
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("EXPD_REQUIRE_BROWSER") == "1" {
		t.Fatal("chromium not found and EXPD_REQUIRE_BROWSER=1")
	}
	t.Skip("chromium not installed (apt-get install chromium); set EXPD_REQUIRE_BROWSER=1 to make this a failure")
	return ""
}

// newBrowser starts a headless Chromium that never downloads anything.
func newBrowser(t testing.TB) context.Context { return startBrowser(t, chromium(t)) }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func startBrowser(t testing.TB, path string) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 10*time.Minute)
	t.Cleanup(cancel3)
	return ctx
}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// checkA11y runs axe-core (WCAG 2.1 A/AA and best practices) on the
// current page and fails on any serious or critical violation.
func checkA11y(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axeSource+"\n;true")); err != nil {
		t.Fatalf("%s: load axe: %v", name, err)
	}
	script := `axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}}).then(r => r.violations)`
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: run axe: %v", name, err)
	}
	var bad []string
	for _, v := range out {
		if v.Impact == "serious" || v.Impact == "critical" {
			b, _ := json.Marshal(v.Nodes)
			bad = append(bad, fmt.Sprintf("%s (%s): %s %s", v.ID, v.Impact, v.Help, b))
		} else {
			t.Logf("%s: axe %s (%s): %s", name, v.ID, v.Impact, v.Help)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("%s: accessibility violations:\n%s", name, strings.Join(bad, "\n"))
	}
	t.Logf("%s: axe found no serious or critical violations", name)
}

// screenshot saves a full-page PNG under docs/img/ when
// EXPD_UPDATE_SCREENSHOTS=1 (so that test runs leave the tree clean), else
// in the test's temp dir.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := t.TempDir()
	if os.Getenv("EXPD_UPDATE_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "docs", "img")
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBrowserCreateRunResultsAndRotateAKey(t *testing.T) {
	// A step whose element never shows fails the test instead of waiting
	// for the package's timeout.
	ctx, cancel := context.WithTimeout(newBrowser(t), 5*time.Minute)
	defer cancel()
	env, _ := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	base := env.Server.URL

	// Signed out: the sign-in page; paste the admin's session token.
	must(t, ctx, chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(chromedp.ID("token")))
	checkA11y(t, ctx, "sign-in")
	must(t, ctx, chromedp.SendKeys(chromedp.ID("token"), org.AdminToken), chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.Search(`//h1[text()="Experiments"]`)))

	// Create an experiment through the form.
	must(t, ctx, chromedp.Navigate(base+"/experiments/new"), chromedp.WaitVisible(chromedp.ID("name")))
	checkA11y(t, ctx, "new experiment form")
	must(t, ctx,
		chromedp.SendKeys(chromedp.ID("name"), "browser-checkout"),
		chromedp.SendKeys(chromedp.ID("v0-prompt"), "You are a helpful checkout assistant."),
		chromedp.SendKeys(chromedp.ID("v1-prompt"), "You are a concise checkout assistant."),
		chromedp.Click(chromedp.ID("b-latency_ms")), chromedp.Click(chromedp.ID("b-conversion")),
		chromedp.Click(chromedp.Search(`//button[text()="Create experiment"]`)),
		chromedp.WaitVisible(chromedp.ID("collecting-h")))
	loc := value(t, ctx, chromedp.Location())
	expID := strings.TrimPrefix(loc, base+"/experiments/")
	checkA11y(t, ctx, "results, collecting")

	// Events through the API: 150 users per arm.
	users := resultstest.Users(150, 7)
	events := resultstest.Events(org.ID, expID, users, time.Now())
	resultstest.Post(t, env, org.SecretKey, events)
	time.Sleep(1100 * time.Millisecond) // a run's instant is whole seconds: let it fall after every event

	// Run now, then the page follows the run and shows its results.
	start := time.Now()
	must(t, ctx, chromedp.Click(chromedp.ID("run-now")))
	waitCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(waitCtx, chromedp.WaitVisible(chromedp.CSS("#forest svg"))); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("results did not show: %v\n%s", err, html)
	}
	t.Logf("Run now to results shown: %s (%d users, %d events)", time.Since(start).Round(time.Millisecond), len(users), len(events))
	intervals := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#forest line.ci").length`))
	if intervals != 2 { // latency_ms and conversion, one treatment arm
		t.Fatalf("forest plot has %d intervals, want 2", intervals)
	}
	rows := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("main table tbody tr").length`))
	if rows < 2 {
		t.Fatalf("results table has %d rows", rows)
	}
	checkA11y(t, ctx, "results")
	screenshot(t, ctx, "dashboard-results.png")
	// The link sits in the row's collapsed details: follow its address.
	distURL := value(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("main a")].find(a => a.textContent.includes("distribution of conversion")).href`))
	must(t, ctx, chromedp.Navigate(distURL), chromedp.WaitVisible(chromedp.ID("distribution")))
	checkA11y(t, ctx, "results with a distribution")

	// Edit: change weights and review the change.
	must(t, ctx, chromedp.Navigate(base+"/experiments/"+expID+"/edit"), chromedp.WaitVisible(chromedp.ID("v0-weight")),
		chromedp.SetValue(chromedp.ID("v0-weight"), "60"), chromedp.SetValue(chromedp.ID("v1-weight"), "40"),
		chromedp.Click(chromedp.Search(`//button[text()="Review changes"]`)), chromedp.WaitVisible(chromedp.ID("preview-h")))
	checkA11y(t, ctx, "edit form with preview")
	screenshot(t, ctx, "dashboard-edit.png")
	must(t, ctx, chromedp.Click(chromedp.Search(`//button[starts-with(text(), "Save version")]`)), chromedp.WaitVisible(chromedp.ID("v2-h")))
	checkA11y(t, ctx, "history")

	must(t, ctx, chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(chromedp.Search(`//a[text()="browser-checkout"]`)))
	checkA11y(t, ctx, "experiment list")
	screenshot(t, ctx, "dashboard-list.png")
	must(t, ctx, chromedp.Navigate(base+"/billing"), chromedp.WaitVisible(chromedp.Search(`//h1[text()="Billing"]`)))
	checkA11y(t, ctx, "billing")

	// Rotate the secret key: confirm, see it once, the old one is refused.
	must(t, ctx, chromedp.Navigate(base+"/keys"), chromedp.WaitVisible(chromedp.Search(`//h1[text()="API keys"]`)))
	checkA11y(t, ctx, "keys")
	must(t, ctx, chromedp.Click(chromedp.Search(`//button[text()="Rotate secret key…"]`)), chromedp.WaitVisible(chromedp.ID("confirm-h")))
	checkA11y(t, ctx, "keys, confirmation")
	must(t, ctx, chromedp.Click(chromedp.Search(`//button[text()="Yes, rotate the secret key"]`)), chromedp.WaitVisible(chromedp.ID("new-key")))
	newKey := value(t, ctx, chromedp.Text(chromedp.ID("new-key")))
	checkA11y(t, ctx, "keys, new key shown")
	if !strings.HasPrefix(newKey, "expd_sk_") || newKey == org.SecretKey {
		t.Fatalf("new key %q", newKey)
	}
	if r := env.Do(t, http.MethodGet, "/v1/config", nil, testenv.APIKey(org.SecretKey)...); r.Status != http.StatusUnauthorized {
		t.Fatalf("old secret key after rotation: %d, want 401", r.Status)
	}
	if r := env.Do(t, http.MethodGet, "/v1/config", nil, testenv.APIKey(newKey)...); r.Status != http.StatusOK {
		t.Fatalf("new secret key: %d, want 200", r.Status)
	}
	// Shown once: reloading the keys page does not show it again.
	must(t, ctx, chromedp.Navigate(base+"/keys"), chromedp.WaitVisible(chromedp.Search(`//h1[text()="API keys"]`)))
	html := value(t, ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	if strings.Contains(html, newKey) {
		t.Fatal("the secret key is shown again")
	}
}

func must(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func value[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
