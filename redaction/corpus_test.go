package redaction

import (
	"encoding/json"
	"os"
	"testing"
)

// corpus is testdata/redaction/cases.json, which the three clients run too.
type corpus struct {
	Cases []struct {
		Name     string    `json:"name"`
		Input    string    `json:"input"`
		Expected string    `json:"expected"`
		Custom   []Pattern `json:"custom_patterns"`
	} `json:"cases"`
}

func readCorpus(t *testing.T) corpus {
	t.Helper()
	raw, err := os.ReadFile("../testdata/redaction/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// corpusInputs is every case's input.
func corpusInputs(t *testing.T) []string {
	var out []string
	for _, tc := range readCorpus(t).Cases {
		out = append(out, tc.Input)
	}
	return out
}

func TestCorpus(t *testing.T) {
	c := readCorpus(t)
	if len(c.Cases) < 200 {
		t.Fatalf("corpus has %d cases, want at least 200", len(c.Cases))
	}
	for _, tc := range c.Cases {
		r, err := Compile(tc.Custom)
		if err != nil {
			t.Errorf("%s: compile: %v", tc.Name, err)
			continue
		}
		got := r.Redact(tc.Input)
		if got != tc.Expected {
			t.Errorf("%s:\n input    %q\n got      %q\n expected %q", tc.Name, tc.Input, got, tc.Expected)
			continue
		}
		// Redacting twice changes nothing: placeholders match no detector.
		if again := r.Redact(got); again != got {
			t.Errorf("%s: not idempotent: %q -> %q", tc.Name, got, again)
		}
	}
}
