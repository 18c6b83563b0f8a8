package stripemock

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestStartServesStripeAPIAndRecordsRequests(t *testing.T) {
	srv := Start(t)
	form := url.Values{"customer": {"cus_test"}, "return_url": {"https://app.example/billing"}}
	req, err := http.NewRequest("POST", srv.URL+"/v1/billing_portal/sessions", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("sk_test_123", "")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := srv.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("call stripe-mock: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stripe-mock answered %d", resp.StatusCode)
	}
	got := srv.Recorder.Requests("/v1/billing_portal/sessions")
	if len(got) != 1 || got[0].Form.Get("customer") != "cus_test" || got[0].Method != "POST" {
		t.Fatalf("recorded %+v", got)
	}
	if n := len(srv.Recorder.Requests("/v1/customers")); n != 0 {
		t.Fatalf("recorded %d requests to a path never called", n)
	}
}

func TestTwoServersListenOnDifferentPorts(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.URL == b.URL {
		t.Fatalf("both stripe-mocks at %s", a.URL)
	}
}
