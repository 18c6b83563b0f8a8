package dashboard_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/expd/expd/internal/testenv"
)

// In Chromium: the privacy page is accessible (axe), choosing redact and
// adding a pattern saves both, and a bad regex is listed without saving.
func TestBrowserPrivacyPage(t *testing.T) {
	ctx, cancel := context.WithTimeout(newBrowser(t), 3*time.Minute)
	defer cancel()
	env := testenv.New(t)
	org := env.NewOrg(t)
	base := env.Server.URL
	must(t, ctx, chromedp.Navigate(base+"/experiments"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), org.AdminToken), chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.Search(`//h1[text()="Experiments"]`)))
	must(t, ctx, chromedp.Click(chromedp.Search(`//a[text()="Privacy"]`)), chromedp.WaitVisible(chromedp.Search(`//h1[text()="Privacy"]`)))
	checkA11y(t, ctx, "privacy")
	must(t, ctx, chromedp.Click(chromedp.CSS(`input[value="redact"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[aria-label="Name of pattern 0"]`), "employee"),
		chromedp.SendKeys(chromedp.CSS(`input[aria-label="Regular expression of pattern 0"]`), "EMP-[0-9]{6}"),
		chromedp.Click(chromedp.Search(`//button[text()="Save"]`)), chromedp.WaitVisible(chromedp.Search(`//div[@role="status"]`)))
	checkA11y(t, ctx, "privacy, saved")
	var got struct {
		PayloadPolicy  string `json:"payload_policy"`
		CustomPatterns []struct {
			Regex string `json:"regex"`
		} `json:"custom_patterns"`
	}
	env.Do(t, http.MethodGet, "/v1/privacy", nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &got)
	if got.PayloadPolicy != "redact" || len(got.CustomPatterns) != 1 || got.CustomPatterns[0].Regex != "EMP-[0-9]{6}" {
		t.Fatalf("saved %+v", got)
	}
	must(t, ctx, chromedp.SendKeys(chromedp.CSS(`input[aria-label="Name of pattern 1"]`), "bad"),
		chromedp.SendKeys(chromedp.CSS(`input[aria-label="Regular expression of pattern 1"]`), "(oops"),
		chromedp.Click(chromedp.Search(`//button[text()="Save"]`)), chromedp.WaitVisible(chromedp.Search(`//div[@role="alert"]`)))
	checkA11y(t, ctx, "privacy, refused")
	env.Do(t, http.MethodGet, "/v1/privacy", nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &got)
	if len(got.CustomPatterns) != 1 {
		t.Fatalf("a refused form saved %+v", got)
	}
}
