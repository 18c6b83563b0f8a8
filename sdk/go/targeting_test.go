package expd

import (
	"testing"

	"github.com/expd/expd/sdk/go/targeting"
)

// The shared targeting vectors (testdata/targeting/vectors.json of the
// repository) on the client's targeting package, which the server uses too.
func TestTargetingVectors(t *testing.T) {
	var f struct {
		Cases []struct {
			Name       string         `json:"name"`
			Condition  any            `json:"condition"`
			Attributes map[string]any `json:"attributes"`
			Match      bool           `json:"match"`
		} `json:"cases"`
		Invalid []struct {
			Name      string `json:"name"`
			Condition any    `json:"condition"`
		} `json:"invalid"`
		Regex []struct {
			Pattern string          `json:"pattern"`
			Valid   bool            `json:"valid"`
			Matches map[string]bool `json:"matches"`
		} `json:"regex"`
	}
	readJSON(t, "targeting/vectors.json", &f)
	if len(f.Cases) < 100 || len(f.Invalid) == 0 || len(f.Regex) == 0 {
		t.Fatalf("too few cases: %d, %d, %d", len(f.Cases), len(f.Invalid), len(f.Regex))
	}
	for _, c := range f.Cases {
		cond, errs := targeting.Compile(c.Condition)
		if len(errs) > 0 {
			t.Errorf("%s: compile: %v", c.Name, errs)
		} else if got := cond.Match(c.Attributes); got != c.Match {
			t.Errorf("%s: Match = %v, want %v", c.Name, got, c.Match)
		}
	}
	for _, c := range f.Invalid {
		if _, errs := targeting.Compile(c.Condition); len(errs) == 0 {
			t.Errorf("%s: compiled, want refused", c.Name)
		}
	}
	for _, c := range f.Regex {
		re, err := targeting.CompileRegex(c.Pattern)
		if (err == nil) != c.Valid {
			t.Errorf("%q: error %v, want valid %v", c.Pattern, err, c.Valid)
			continue
		}
		for text, want := range c.Matches {
			if got := re.MatchString(text); got != want {
				t.Errorf("%q on %q: %v, want %v", c.Pattern, text, got, want)
			}
		}
	}
}
