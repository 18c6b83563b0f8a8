package evaluators_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/validate"
)

func ptr[T any](v T) *T { return &v }

func TestChecksScoreAnswers(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":"number","minimum":0,"maximum":1}},"required":["answer"],"additionalProperties":false}`)
	cases := []struct {
		name   string
		check  evaluators.Check
		output string
		want   float64
	}{
		{"json_valid object", evaluators.Check{Type: "json_valid"}, ` {"a": 1} `, 1},
		{"json_valid array", evaluators.Check{Type: "json_valid"}, `[1,2]`, 1},
		{"json_valid prose", evaluators.Check{Type: "json_valid"}, `Sure! {"a": 1}`, 0},
		{"json_valid truncated", evaluators.Check{Type: "json_valid"}, `{"a": 1`, 0},
		{"json_valid empty", evaluators.Check{Type: "json_valid"}, ``, 0},
		{"json_schema conforming", evaluators.Check{Type: "json_schema", Schema: schema}, `{"answer":"42","confidence":0.9}`, 1},
		{"json_schema missing required", evaluators.Check{Type: "json_schema", Schema: schema}, `{"confidence":0.9}`, 0},
		{"json_schema out of range", evaluators.Check{Type: "json_schema", Schema: schema}, `{"answer":"42","confidence":3}`, 0},
		{"json_schema extra property", evaluators.Check{Type: "json_schema", Schema: schema}, `{"answer":"42","x":1}`, 0},
		{"json_schema not JSON", evaluators.Check{Type: "json_schema", Schema: schema}, `answer: 42`, 0},
		{"regex match", evaluators.Check{Type: "regex", Pattern: `^\d{3}-\d{4}$`}, `555-1234`, 1},
		{"regex no match", evaluators.Check{Type: "regex", Pattern: `^\d{3}-\d{4}$`}, `call 555-1234`, 0},
		{"regex must not match, absent", evaluators.Check{Type: "regex", Pattern: `(?i)password`, MustMatch: ptr(false)}, `all good`, 1},
		{"regex must not match, present", evaluators.Check{Type: "regex", Pattern: `(?i)password`, MustMatch: ptr(false)}, `the PASSWORD is`, 0},
		{"max_length within", evaluators.Check{Type: "max_length", MaxLength: 5}, `héllo`, 1},
		{"max_length over", evaluators.Check{Type: "max_length", MaxLength: 5}, `hello!`, 0},
		{"contains any case", evaluators.Check{Type: "contains", Text: "Refund"}, `your REFUND is on its way`, 1},
		{"contains absent", evaluators.Check{Type: "contains", Text: "refund"}, `no money back`, 0},
		{"contains case sensitive", evaluators.Check{Type: "contains", Text: "Refund", CaseSensitive: true}, `refund`, 0},
		{"not_contains absent", evaluators.Check{Type: "not_contains", Text: "as an AI"}, `Here is the plan.`, 1},
		{"not_contains present", evaluators.Check{Type: "not_contains", Text: "as an AI"}, `As an AI, I think`, 0},
		{"refusal", evaluators.Check{Type: "refusal"}, `I'm sorry, but I can't help with that request.`, 1},
		{"refusal typographic apostrophe", evaluators.Check{Type: "refusal"}, "I can\u2019t assist with creating malware.", 1},
		{"refusal unable", evaluators.Check{Type: "refusal"}, `I am unable to share personal data.`, 1},
		{"not a refusal", evaluators.Check{Type: "refusal"}, `Sure, here is how to reset your password: ...`, 0},
		{"refusal phrase far down is not a refusal", evaluators.Check{Type: "refusal"}, strings.Repeat("Step by step answer. ", 20) + "If asked, say I can't help with that.", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check, err := evaluators.Compile("check", c.check)
			if err != nil {
				t.Fatal(err)
			}
			if got := check(c.output); got != c.want {
				t.Fatalf("score %v, want %v", got, c.want)
			}
		})
	}
}

func TestChecksRefuseBadParameters(t *testing.T) {
	cases := []struct {
		name  string
		check evaluators.Check
		field string
	}{
		{"unknown type", evaluators.Check{Type: "sentiment"}, "check.type"},
		{"no type", evaluators.Check{}, "check.type"},
		{"schema missing", evaluators.Check{Type: "json_schema"}, "check.schema"},
		{"schema not JSON", evaluators.Check{Type: "json_schema", Schema: json.RawMessage(`{"type":`)}, "check.schema"},
		{"schema invalid", evaluators.Check{Type: "json_schema", Schema: json.RawMessage(`{"type":"strnig"}`)}, "check.schema"},
		{"schema remote ref", evaluators.Check{Type: "json_schema", Schema: json.RawMessage(`{"$ref":"https://169.254.169.254/schema.json"}`)}, "check.schema"},
		{"regex missing", evaluators.Check{Type: "regex"}, "check.pattern"},
		{"regex invalid", evaluators.Check{Type: "regex", Pattern: `(unclosed`}, "check.pattern"},
		{"regex backreference", evaluators.Check{Type: "regex", Pattern: `(a)\1`}, "check.pattern"},
		{"max_length zero", evaluators.Check{Type: "max_length"}, "check.max_length"},
		{"max_length negative", evaluators.Check{Type: "max_length", MaxLength: -3}, "check.max_length"},
		{"contains empty", evaluators.Check{Type: "contains"}, "check.text"},
		{"not_contains NUL", evaluators.Check{Type: "not_contains", Text: "a\x00"}, "check.text"},
		{"parameter of another type", evaluators.Check{Type: "json_valid", Pattern: "x"}, "check.pattern"},
		{"text on regex", evaluators.Check{Type: "regex", Pattern: "x", Text: "y"}, "check.text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := evaluators.Compile("check", c.check)
			found := false
			for _, f := range validate.Fields(err) {
				found = found || f.Field == c.field
			}
			if !found {
				t.Fatalf("want an error on %s, got %v", c.field, err)
			}
		})
	}
}
