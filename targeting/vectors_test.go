package targeting_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	conditions "github.com/expd/expd/sdk/go/targeting"
	"github.com/expd/expd/targeting"
)

// vectors is testdata/targeting/vectors.json, which every client runs too.
type vectors struct {
	Cases []struct {
		Name       string         `json:"name"`
		Condition  any            `json:"condition"`
		Attributes map[string]any `json:"attributes"`
		Match      bool           `json:"match"`
	} `json:"cases"`
	Invalid []struct {
		Name      string `json:"name"`
		Condition any    `json:"condition"`
		Field     string `json:"field"`
	} `json:"invalid"`
	Regex []struct {
		Pattern string          `json:"pattern"`
		Valid   bool            `json:"valid"`
		Matches map[string]bool `json:"matches"`
	} `json:"regex"`
}

func readVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("../testdata/targeting/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVectorCases(t *testing.T) {
	for _, c := range readVectors(t).Cases {
		cond, errs := conditions.Compile(c.Condition)
		if len(errs) > 0 {
			t.Errorf("%s: Compile: %v", c.Name, errs)
			continue
		}
		if got := cond.Match(c.Attributes); got != c.Match {
			t.Errorf("%s: Match = %v, want %v", c.Name, got, c.Match)
		}
	}
}

func TestVectorInvalidConditions(t *testing.T) {
	for _, c := range readVectors(t).Invalid {
		_, errs := conditions.Compile(c.Condition)
		fields := make([]string, len(errs))
		for i, e := range errs {
			fields[i] = targeting.ProblemField(e)
		}
		if !slices.Contains(fields, c.Field) {
			t.Errorf("%s: errors name %v, want %s", c.Name, fields, c.Field)
		}
	}
}

func TestVectorRegexes(t *testing.T) {
	for _, c := range readVectors(t).Regex {
		re, err := conditions.CompileRegex(c.Pattern)
		if (err == nil) != c.Valid {
			t.Errorf("%q: CompileRegex error %v, want valid %v", c.Pattern, err, c.Valid)
			continue
		}
		for text, want := range c.Matches {
			if got := re.MatchString(text); got != want {
				t.Errorf("%q on %q: %v, want %v", c.Pattern, text, got, want)
			}
		}
	}
}

// TestVectorsCoverEveryOperator guards the file's promise: every operator
// appears in a matching and a non-matching case.
func TestVectorsCoverEveryOperator(t *testing.T) {
	seen := map[string][2]bool{}
	var walk func(v any, match bool)
	walk = func(v any, match bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, w := range x {
				if strings.HasPrefix(k, "$") {
					s := seen[k]
					if match {
						s[0] = true
					} else {
						s[1] = true
					}
					seen[k] = s
				}
				walk(w, match)
			}
		case []any:
			for _, w := range x {
				walk(w, match)
			}
		}
	}
	for _, c := range readVectors(t).Cases {
		walk(c.Condition, c.Match)
	}
	for _, op := range strings.Fields("$eq $ne $lt $lte $gt $gte $in $nin $all $size $elemMatch $exists $type $regex $not $and $or $nor $veq $vne $vgt $vgte $vlt $vlte") {
		if s := seen[op]; !s[0] || !s[1] {
			t.Errorf("%s: matching case %v, non-matching case %v", op, s[0], s[1])
		}
	}
}
