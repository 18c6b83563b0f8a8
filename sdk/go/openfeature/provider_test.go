package openfeature_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	expd "github.com/expd/expd/sdk/go"
	"github.com/expd/expd/sdk/go/internal/expddev"
	provider "github.com/expd/expd/sdk/go/openfeature"
)

var repoRoot = filepath.Join("..", "..", "..")

type decisionCase struct {
	Config       int            `json:"config"`
	Experiment   string         `json:"experiment"`
	UserID       string         `json:"user_id"`
	Attributes   map[string]any `json:"attributes"`
	Variant      string         `json:"variant"`
	InExperiment bool           `json:"in_experiment"`
	ReasonCode   string         `json:"reason_code"`
}

type scenario struct {
	Configs   []json.RawMessage `json:"configs"`
	Decisions struct {
		Configs []json.RawMessage `json:"configs"`
		Cases   []decisionCase    `json:"cases"`
	} `json:"decisions"`
}

func loadScenario(t *testing.T) scenario {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "conformance", "scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s scenario
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeExpd serves one config and keeps the events posted to it.
type fakeExpd struct {
	mu     sync.Mutex
	events []map[string]any
}

func (f *fakeExpd) exposures() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, e := range f.events {
		if e["type"] == "exposure" {
			out = append(out, e)
		}
	}
	return out
}

func startFake(t *testing.T, config json.RawMessage) (*fakeExpd, *httptest.Server) {
	f := &fakeExpd{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/v1/config":
			w.Write(config)
		case r.Method == "POST" && r.URL.Path == "/v1/events":
			var body struct{ Events []map[string]any }
			raw, _ := io.ReadAll(r.Body)
			json.Unmarshal(raw, &body)
			f.mu.Lock()
			f.events = append(f.events, body.Events...)
			f.mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprintf(w, `{"accepted":%d,"rejected":[]}`, len(body.Events))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func newClient(t *testing.T, base string) *expd.Client {
	t.Helper()
	c, err := expd.New(expd.Options{APIKey: "expd_pk_test", BaseURL: base, FlushInterval: 20 * time.Millisecond, MaxQueueSize: 100_000,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// flags sets a provider over c under a domain of its own and returns its client.
func flags(t *testing.T, c *expd.Client) *openfeature.Client {
	t.Helper()
	domain := t.Name()
	if err := openfeature.SetNamedProviderAndWait(domain, provider.New(c)); err != nil {
		t.Fatal(err)
	}
	return openfeature.NewClient(domain)
}

func TestEveryReasonCodeHasAnOpenFeatureReason(t *testing.T) {
	for _, c := range loadScenario(t).Decisions.Cases {
		if _, ok := provider.Reasons[expd.ReasonCode(c.ReasonCode)]; !ok {
			t.Errorf("no OpenFeature reason for %q", c.ReasonCode)
		}
	}
	want := map[expd.ReasonCode]openfeature.Reason{
		expd.ReasonBucketed: "SPLIT", expd.ReasonPinned: "TARGETING_MATCH", expd.ReasonNotTargeted: "DEFAULT",
		expd.ReasonHoldout: "DEFAULT", expd.ReasonLayer: "DEFAULT", expd.ReasonNotRunning: "DISABLED", expd.ReasonShipped: "STATIC",
	}
	for code, reason := range want {
		if provider.Reasons[code] != reason {
			t.Errorf("%s -> %s, want %s", code, provider.Reasons[code], reason)
		}
	}
}

// The shared decision cases through the official SDK: variant, reason, metadata.
func TestStringFlagsAnswerTheSharedDecisionCases(t *testing.T) {
	s := loadScenario(t)
	byConfig := map[int][]decisionCase{}
	for _, c := range s.Decisions.Cases {
		byConfig[c.Config] = append(byConfig[c.Config], c)
	}
	for index, cases := range byConfig {
		t.Run(fmt.Sprint("config", index), func(t *testing.T) {
			_, srv := startFake(t, s.Decisions.Configs[index])
			of := flags(t, newClient(t, srv.URL))
			for _, c := range cases {
				attrs := map[string]any{}
				for k, v := range c.Attributes {
					attrs[k] = v
				}
				d, err := of.StringValueDetails(context.Background(), c.Experiment, "fallback", openfeature.NewEvaluationContext(c.UserID, attrs))
				what := c.Experiment + "/" + c.UserID
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if d.Value != c.Variant || d.Variant != c.Variant || d.Reason != provider.Reasons[expd.ReasonCode(c.ReasonCode)] {
					t.Errorf("%s: %q %q %s, want %q %s", what, d.Value, d.Variant, d.Reason, c.Variant, c.ReasonCode)
				}
				if d.FlagMetadata[provider.MetadataInExperiment] != c.InExperiment || d.FlagMetadata[provider.MetadataReasonCode] != c.ReasonCode {
					t.Errorf("%s: metadata %v", what, d.FlagMetadata)
				}
			}
		})
	}
}

func TestObjectFlagsAnswerTheVariantsVariables(t *testing.T) {
	s := loadScenario(t)
	_, srv := startFake(t, s.Configs[0])
	c := newClient(t, srv.URL)
	of := flags(t, c)
	var cfg struct {
		Experiments []struct {
			Name     string
			Variants map[string]struct{ Variables map[string]any }
		}
	}
	json.Unmarshal(s.Configs[0], &cfg)
	exp := cfg.Experiments[0]
	for i := range 50 {
		user := fmt.Sprint("user-", i)
		got, err := of.ObjectValue(context.Background(), exp.Name, map[string]any{"untouched": true}, openfeature.NewEvaluationContext(user, nil))
		if err != nil {
			t.Fatal(err)
		}
		d, _ := c.PeekDetail(context.Background(), exp.Name, user)
		want := any(exp.Variants[d.Variant].Variables)
		if len(exp.Variants[d.Variant].Variables) == 0 {
			want = map[string]any{"untouched": true}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %v, want %v", user, got, want)
		}
	}
}

func TestErrorsAnswerTheDefaultAndRecordNothing(t *testing.T) {
	s := loadScenario(t)
	fake, srv := startFake(t, s.Configs[0])
	c := newClient(t, srv.URL)
	of := flags(t, c)
	ctx := context.Background()
	unknown, _ := of.StringValueDetails(ctx, "no-such-experiment", "dflt", openfeature.NewEvaluationContext("u1", nil))
	noUser, _ := of.StringValueDetails(ctx, "two-arms", "dflt", openfeature.NewEvaluationContext("", nil))
	asBool, _ := of.BooleanValueDetails(ctx, "two-arms", false, openfeature.NewEvaluationContext("u1", nil))
	for _, tc := range []struct {
		got  openfeature.ErrorCode
		want openfeature.ErrorCode
	}{{unknown.ErrorCode, openfeature.FlagNotFoundCode}, {noUser.ErrorCode, openfeature.TargetingKeyMissingCode}, {asBool.ErrorCode, openfeature.TypeMismatchCode}} {
		if tc.got != tc.want {
			t.Errorf("error code %s, want %s", tc.got, tc.want)
		}
	}
	if unknown.Value != "dflt" || noUser.Value != "dflt" || asBool.Value {
		t.Errorf("values %q %q %v, want the defaults", unknown.Value, noUser.Value, asBool.Value)
	}
	c.Flush(ctx)
	if n := len(fake.exposures()); n != 0 {
		t.Fatalf("%d exposures after errors, want 0", n)
	}
}

func TestTheAfterHookRecordsOneExposurePerUserAndDay(t *testing.T) {
	s := loadScenario(t)
	fake, srv := startFake(t, s.Configs[0])
	c := newClient(t, srv.URL)
	of := flags(t, c)
	ctx := context.Background()
	if d, _ := c.PeekDetail(ctx, "two-arms", "u-peek"); !d.InExperiment {
		t.Fatal("u-peek should be in two-arms")
	}
	c.Flush(ctx)
	if n := len(fake.exposures()); n != 0 {
		t.Fatalf("peeking recorded %d exposures", n)
	}
	for range 3 {
		of.StringValue(ctx, "two-arms", "x", openfeature.NewEvaluationContext("u-hook", nil))
	}
	c.Flush(ctx)
	got := fake.exposures()
	if len(got) != 1 || got[0]["user_id"] != "u-hook" {
		t.Fatalf("exposures %v, want one for u-hook", got)
	}
	d, _ := c.PeekDetail(ctx, "two-arms", "u-hook")
	if got[0]["variant"] != d.Variant {
		t.Fatalf("exposure of %v, decision %s", got[0]["variant"], d.Variant)
	}
}

func TestInitFailsWhenNoConfigLoads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"title":"Unauthorized","status":401}`))
	}))
	defer srv.Close()
	c := newClient(t, srv.URL)
	p := provider.New(c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := p.InitWithContext(ctx, openfeature.EvaluationContext{}); err == nil {
		t.Fatal("Init succeeded without a config")
	}
}

// Against a real `expd dev`: the provider equals POST /v1/assign for 10,000 users.
func TestLiveEqualsAssignForTenThousandUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no expd dev")
	}
	bin, err := expddev.Build(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := expddev.Start(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Stop()
	if status, raw, err := dev.Call("POST", "/v1/experiments", expddev.ExperimentConfig("of-go-agree", "control", 34, "short", 33, "long", 33), true); err != nil || status != http.StatusCreated {
		t.Fatalf("create: %d %s %v", status, raw, err)
	}
	c, err := expd.New(expd.Options{APIKey: dev.APIKey, BaseURL: dev.BaseURL, PollInterval: 500 * time.Millisecond, MaxQueueSize: 100_000,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	of := flags(t, c)
	users := make([]string, 10_000)
	for i := range users {
		users[i] = fmt.Sprint("of-user-", i)
	}
	served, err := dev.AssignAll("of-go-agree", users)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for i, u := range users {
		d, err := of.StringValueDetails(context.Background(), "of-go-agree", "fallback", openfeature.NewEvaluationContext(u, nil))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if d.Value != served[i].Variant || d.Reason != provider.Reasons[expd.ReasonCode(served[i].ReasonCode)] {
			t.Fatalf("%s: %s %s, /v1/assign %s %s", u, d.Value, d.Reason, served[i].Variant, served[i].ReasonCode)
		}
		counts[d.Value]++
	}
	arms := make([]string, 0, len(counts))
	for a := range counts {
		arms = append(arms, a)
	}
	sort.Strings(arms)
	if fmt.Sprint(arms) != "[control long short]" {
		t.Fatalf("arms served %v", counts)
	}
}
