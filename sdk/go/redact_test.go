package expd

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// The shared corpus (testdata/redaction/cases.json, rules in
// testdata/redaction/README.md).
type redactionCase struct {
	Name           string          `json:"name"`
	Input          string          `json:"input"`
	Expected       string          `json:"expected"`
	CustomPatterns []RedactPattern `json:"custom_patterns"`
}

func redactionCases(t *testing.T) []redactionCase {
	var corpus struct {
		Cases []redactionCase `json:"cases"`
	}
	readJSON(t, "redaction/cases.json", &corpus)
	if len(corpus.Cases) < 200 {
		t.Fatalf("%d cases: not the shared corpus", len(corpus.Cases))
	}
	return corpus.Cases
}

func TestRedactionCorpus(t *testing.T) {
	for _, c := range redactionCases(t) {
		got, err := Redact(c.Input, c.CustomPatterns...)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if got != c.Expected {
			t.Errorf("%s: Redact(%q) = %q, want %q", c.Name, c.Input, got, c.Expected)
		}
		if c.CustomPatterns == nil {
			if again, _ := Redact(c.Expected); again != c.Expected {
				t.Errorf("%s: redacting twice changed %q into %q", c.Name, c.Expected, again)
			}
		}
	}
}

func TestNewRefusesABadRedactPattern(t *testing.T) {
	_, err := New(Options{APIKey: "pk_test", BaseURL: "http://127.0.0.1:9", Logger: quietLogger(),
		RedactPatterns: []RedactPattern{{Name: "bad", Regex: "("}}})
	if err == nil || !strings.Contains(err.Error(), "RedactPatterns[0].Regex") {
		t.Fatalf("New with a bad pattern: %v", err)
	}
}

const (
	testEmail = "ann.lee@example.com"
	testCard  = "4111 1111 1111 1111"
)

// recordCall records one model call by hand with prompt and response and
// returns the model_call that reached the server.
func recordCall(t *testing.T, tune func(*Options), prompt, response string) map[string]any {
	t.Helper()
	c, srv := readyClientWith(t, tune)
	m := c.StartModelCall(context.Background(), "two-arms", "u1")
	m.Prompt, m.Response = prompt, response
	m.Finish(nil)
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := srv.eventsOf("model_call")
	if len(calls) != 1 {
		t.Fatalf("%d model calls", len(calls))
	}
	return calls[0]
}

func TestRedactionOfModelCalls(t *testing.T) {
	if got := recordCall(t, nil, "mail "+testEmail, "card "+testCard); got["prompt"] != "mail "+testEmail || got["response"] != "card "+testCard {
		t.Fatalf("off by default: %v", got)
	}
	on := func(o *Options) { o.Redact = true }
	if got := recordCall(t, on, "mail "+testEmail, "card "+testCard+", key sk-abcdefghijklmnopqrstuvwx"); got["prompt"] != "mail [EMAIL]" ||
		got["response"] != "card [CARD], key [SECRET]" {
		t.Fatalf("Redact: %v", got)
	}
	patterns := func(o *Options) {
		o.RedactPatterns = []RedactPattern{{Name: "employee", Regex: "EMP-[0-9]{6}", Placeholder: "[EMPLOYEE]"}}
	}
	if got := recordCall(t, patterns, "EMP-123456 "+testEmail, "fine"); got["prompt"] != "[EMPLOYEE] [EMAIL]" {
		t.Fatalf("custom patterns run first and turn redaction on: %v", got)
	}
	var seen []string
	hook := func(o *Options) {
		o.RedactHook = func(s string) string { seen = append(seen, s); return strings.ReplaceAll(s, "Ann", "[NAME]") }
	}
	if got := recordCall(t, hook, "Ann is "+testEmail, "ok"); got["prompt"] != "[NAME] is [EMAIL]" || seen[0] != "Ann is [EMAIL]" {
		t.Fatalf("the hook runs after the built-ins: %v, saw %q", got, seen)
	}
	panics := func(o *Options) { o.RedactHook = func(string) string { panic("boom") } }
	if got := recordCall(t, panics, "Ann is "+testEmail, "ok"); got["prompt"] != DefaultPlaceholder || got["response"] != DefaultPlaceholder {
		t.Fatalf("a panicking hook fails closed: %v", got)
	}
}

func TestRedactionOfAFailedCallsError(t *testing.T) {
	c, srv := readyClientWith(t, func(o *Options) { o.Redact = true })
	m := c.StartModelCall(context.Background(), "two-arms", "u1")
	m.Finish(errors.New("invalid api key sk-abcdefghijklmnopqrstuvwx for " + testEmail))
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls := srv.eventsOf("model_call"); len(calls) != 1 || calls[0]["error"] != "invalid api key [SECRET] for [EMAIL]" {
		t.Fatalf("model calls %v", calls)
	}
}

func TestRedactionThroughTheTransport(t *testing.T) {
	c, srv := readyClientWith(t, func(o *Options) { o.Redact = true })
	provider := fakeProvider(t)
	hc := &http.Client{Transport: c.Transport("two-arms", nil)}
	chat(t, hc, WithUser(context.Background(), "user-1"), provider.URL, `{"model":"gpt-4o","messages":[{"role":"user","content":"I am `+testEmail+`"}]}`)
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := srv.eventsOf("model_call")
	if len(calls) != 1 {
		t.Fatalf("%d model calls", len(calls))
	}
	raw, _ := json.Marshal(calls[0])
	if strings.Contains(string(raw), testEmail) || !strings.Contains(calls[0]["prompt"].(string), "I am [EMAIL]") {
		t.Fatalf("transport call %s", raw)
	}
}
