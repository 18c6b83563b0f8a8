package webhooks_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/webhooks"
)

// fakeResolver answers every name with its addresses.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	r := fakeResolver{"hooks.example.com": {"93.184.216.34"}, "internal.example.com": {"10.1.2.3"},
		"mixed.example.com": {"93.184.216.34", "127.0.0.1"}, "v6.example.com": {"2606:4700::1111"}}
	cases := []struct {
		url          string
		allowPrivate bool
		ok           bool
	}{
		{"https://hooks.example.com/expd", false, true},
		{"https://hooks.example.com:8443/expd?token=x", false, true},
		{"https://unresolvable.example.org/x", false, true}, // the delivery-time check decides
		{"https://v6.example.com/", false, true},
		{"https://93.184.216.34/", false, true},
		{"http://hooks.example.com/expd", false, false},
		{"ftp://hooks.example.com/", false, false},
		{"https://internal.example.com/", false, false},
		{"https://mixed.example.com/", false, false},
		{"https://127.0.0.1/", false, false},
		{"https://[::1]/", false, false},
		{"https://10.0.0.5/", false, false},
		{"https://172.16.3.4/", false, false},
		{"https://192.168.1.1/", false, false},
		{"https://169.254.169.254/latest/meta-data", false, false}, // cloud metadata
		{"https://[fe80::1]/", false, false},
		{"https://[fd00::1]/", false, false},
		{"https://[::ffff:127.0.0.1]/", false, false},
		{"https://0.0.0.0/", false, false},
		{"https://100.64.0.1/", false, false},
		{"https://localhost/", false, false},
		{"https://api.localhost/", false, false},
		{"https://intranet/", false, false},
		{"https://user:pw@hooks.example.com/", false, false},
		{"https://hooks.example.com/#frag", false, false},
		{"hooks.example.com/expd", false, false},
		{"https://", false, false},
		{"", false, false},
		{"https://hooks.example.com/" + strings.Repeat("a", webhooks.MaxURLLen), false, false},
		// expd dev: http and local addresses are fine.
		{"http://127.0.0.1:9999/hooks", true, true},
		{"http://localhost:9999/hooks", true, true},
		{"https://192.168.1.1/", true, true},
		{"ftp://127.0.0.1/", true, false},
	}
	for _, c := range cases {
		err := webhooks.CheckURL(context.Background(), c.url, c.allowPrivate, r)
		var ue *webhooks.URLError
		if (err == nil) != c.ok || (err != nil && !errors.As(err, &ue)) {
			t.Errorf("CheckURL(%q, dev=%v) = %v, want ok=%v", c.url, c.allowPrivate, err, c.ok)
		}
	}
}

// Outside dev mode the sender refuses to dial a loopback address, however
// the endpoint was registered.
func TestSenderRefusesPrivateAddresses(t *testing.T) {
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer srv.Close()
	secret, err := webhooks.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	ev := webhooks.Event{ID: "evt_1", OrgID: "org", Type: webhooks.EventResultsReady, OccurredAt: time.Now()}
	a := (&webhooks.Sender{}).Send(context.Background(), srv.URL, secret, ev, time.Now())
	if !errors.Is(a.Err, webhooks.ErrPrivateAddress) || hit || a.StatusCode != 0 {
		t.Fatalf("send to loopback: %+v (hit %v)", a, hit)
	}
	a = (&webhooks.Sender{AllowPrivate: true}).Send(context.Background(), srv.URL, secret, ev, time.Now())
	if a.Err != nil || !hit || a.StatusCode != 200 {
		t.Fatalf("send in dev mode: %+v", a)
	}
}

// Retry-After is read from 429 and 503 answers, as seconds or an HTTP date
// (relative to the attempt's time), and ignored on other failures; 410 is
// Gone.
func TestSenderReadsRetryAfterAndGone(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	cases := []struct {
		status     int
		retryAfter string
		want       time.Duration
	}{
		{http.StatusServiceUnavailable, "120", 2 * time.Minute},
		{http.StatusTooManyRequests, now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{http.StatusTooManyRequests, "soon", 0},
		{http.StatusInternalServerError, "120", 0},
		{http.StatusGone, "", 0},
	}
	secret, _ := webhooks.NewSecret()
	ev := webhooks.Event{ID: "evt_1", OrgID: "org", Type: webhooks.EventResultsReady, OccurredAt: now}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if c.retryAfter != "" {
				w.Header().Set("Retry-After", c.retryAfter)
			}
			w.WriteHeader(c.status)
		}))
		a := (&webhooks.Sender{AllowPrivate: true}).Send(context.Background(), srv.URL, secret, ev, now)
		srv.Close()
		if a.Err == nil || a.StatusCode != c.status || a.RetryAfter != c.want || a.Gone() != (c.status == http.StatusGone) {
			t.Errorf("%d with Retry-After %q: %+v, want a wait of %v", c.status, c.retryAfter, a, c.want)
		}
	}
}

// Redirects are not followed: a 3xx is a failed attempt.
func TestSenderDoesNotFollowRedirects(t *testing.T) {
	srv := httptest.NewServer(http.RedirectHandler("https://elsewhere.example.com/", http.StatusFound))
	defer srv.Close()
	secret, _ := webhooks.NewSecret()
	ev := webhooks.Event{ID: "evt_1", OrgID: "org", Type: webhooks.EventResultsReady, OccurredAt: time.Now()}
	a := (&webhooks.Sender{AllowPrivate: true}).Send(context.Background(), srv.URL, secret, ev, time.Now())
	if a.Err == nil || a.StatusCode != http.StatusFound {
		t.Fatalf("redirect: %+v", a)
	}
}

func TestEndpointsAndDeliveries(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	org, err := orgs.Ensure(ctx, db, "org_clerk_a", "a")
	if err != nil {
		t.Fatal(err)
	}
	other, err := orgs.Ensure(ctx, db, "org_clerk_b", "b")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	all, err := webhooks.Create(ctx, db, testenv.Keyring(t), org.ID, webhooks.NewEndpoint{URL: "https://a.example.com/all", Actor: "user_1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(all.Secret, "whsec_") || len(all.EventTypes) != 0 {
		t.Fatalf("created %+v", all)
	}
	stops, err := webhooks.Create(ctx, db, testenv.Keyring(t), org.ID, webhooks.NewEndpoint{URL: "https://a.example.com/stops",
		EventTypes: []string{webhooks.EventExperimentStopped}, Actor: "user_1"}, now.Add(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	subs, err := webhooks.Subscribers(ctx, db, org.ID, webhooks.EventResultsReady)
	if err != nil || len(subs) != 1 || subs[0] != all.ID {
		t.Fatalf("results.ready subscribers %v, %v", subs, err)
	}
	subs, _ = webhooks.Subscribers(ctx, db, org.ID, webhooks.EventExperimentStopped)
	if len(subs) != 2 {
		t.Fatalf("experiment.stopped subscribers %v", subs)
	}
	if subs, _ := webhooks.Subscribers(ctx, db, other.ID, webhooks.EventExperimentStopped); len(subs) != 0 {
		t.Fatalf("other org's subscribers %v", subs)
	}
	target, err := webhooks.LoadTarget(ctx, db, testenv.Keyring(t), all.ID)
	if err != nil || target.Secret != all.Secret || target.URL != all.URL || target.OrgID != org.ID || target.Deleted {
		t.Fatalf("target %+v, %v", target, err)
	}

	// Another org's id, a malformed id: not found.
	if _, err := webhooks.Get(ctx, db, other.ID, all.ID); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("other org reads the endpoint: %v", err)
	}
	if err := webhooks.Delete(ctx, db, other.ID, all.ID, "user_2", now); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("other org deletes the endpoint: %v", err)
	}
	if _, err := webhooks.Get(ctx, db, org.ID, "not-a-uuid"); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("malformed id: %v", err)
	}

	// Attempts: recorded once each, newest first, paged.
	for i := 1; i <= 3; i++ {
		rec := webhooks.AttemptRecord{OrgID: org.ID, EndpointID: all.ID, EventID: "evt_x", EventType: webhooks.EventResultsReady,
			Attempt: i, StatusCode: 500, Error: "endpoint answered 500\x00", Duration: 12 * time.Millisecond, At: now.Add(time.Duration(i) * time.Second)}
		if i == 3 {
			rec.StatusCode, rec.Error = 200, ""
		}
		for range 2 { // a re-recorded attempt is a no-op
			if err := webhooks.RecordAttempt(ctx, db, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	p1, err := webhooks.ListDeliveries(ctx, db, org.ID, all.ID, "", 2)
	if err != nil || len(p1.Deliveries) != 2 || p1.Next == "" || p1.Deliveries[0].Attempt != 3 || !p1.Deliveries[0].Succeeded ||
		p1.Deliveries[1].Succeeded || p1.Deliveries[1].Error != "endpoint answered 500" || p1.Deliveries[1].DurationMs != 12 {
		t.Fatalf("page 1 %+v, %v", p1, err)
	}
	p2, err := webhooks.ListDeliveries(ctx, db, org.ID, all.ID, p1.Next, 2)
	if err != nil || len(p2.Deliveries) != 1 || p2.Deliveries[0].Attempt != 1 || p2.Next != "" {
		t.Fatalf("page 2 %+v, %v", p2, err)
	}
	if _, err := webhooks.ListDeliveries(ctx, db, org.ID, all.ID, "garbage", 2); !errors.Is(err, webhooks.ErrBadCursor) {
		t.Fatalf("bad cursor: %v", err)
	}
	if _, err := webhooks.ListDeliveries(ctx, db, other.ID, all.ID, "", 2); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("other org reads deliveries: %v", err)
	}

	// Delete: gone from the list and from the subscribers, deliveries
	// still readable, the secret still not served; a second delete is
	// not found.
	if err := webhooks.Delete(ctx, db, org.ID, all.ID, "user_1", now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := webhooks.Delete(ctx, db, org.ID, all.ID, "user_1", now); !errors.Is(err, webhooks.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	list, _ := webhooks.List(ctx, db, org.ID)
	if len(list) != 1 || list[0].ID != stops.ID {
		t.Fatalf("list after delete %+v", list)
	}
	if target, _ := webhooks.LoadTarget(ctx, db, testenv.Keyring(t), all.ID); !target.Deleted {
		t.Fatal("deleted endpoint still a live target")
	}
	if p, err := webhooks.ListDeliveries(ctx, db, org.ID, all.ID, "", 10); err != nil || len(p.Deliveries) != 3 {
		t.Fatalf("deliveries after delete %+v, %v", p, err)
	}

	// Audit: two creations and one deletion, by the admin.
	page, err := audit.List(ctx, db, org.ID, audit.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range page.Entries {
		if e.Actor != "user_1" || strings.Contains(string(e.After)+string(e.Before), "whsec_") {
			t.Fatalf("audit entry %+v", e)
		}
		actions = append(actions, e.Action)
	}
	if strings.Join(actions, ",") != "webhook_endpoint.deleted,webhook_endpoint.created,webhook_endpoint.created" {
		t.Fatalf("audit actions %v", actions)
	}
}

func TestEndpointLimit(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	org, err := orgs.Ensure(ctx, db, "org_clerk_limit", "limit")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < webhooks.MaxEndpoints; i++ {
		if _, err := webhooks.Create(ctx, db, testenv.Keyring(t), org.ID, webhooks.NewEndpoint{URL: "https://a.example.com/", Actor: "u"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := webhooks.Create(ctx, db, testenv.Keyring(t), org.ID, webhooks.NewEndpoint{URL: "https://a.example.com/", Actor: "u"}, time.Now()); !errors.Is(err, webhooks.ErrTooManyEndpoints) {
		t.Fatalf("endpoint %d: %v", webhooks.MaxEndpoints+1, err)
	}
}

func TestEventID(t *testing.T) {
	a, b := webhooks.EventID("guardrail.breached/exp/run/metric"), webhooks.EventID("guardrail.breached/exp/run/other")
	if a == b || !strings.HasPrefix(a, "evt_") || len(a) != 36 || a != webhooks.EventID("guardrail.breached/exp/run/metric") {
		t.Fatalf("EventID: %q %q", a, b)
	}
}
