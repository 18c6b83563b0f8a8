package sdkcache

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/expd/expd/bucketing"
)

// The shared decision cases (testdata/conformance/scenario.json) through the
// server's wire types and bucketing.Evaluate, with no stored pin, as every
// client decides them.
func TestDecisionCases(t *testing.T) {
	raw, err := os.ReadFile("../testdata/conformance/scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Decisions struct {
			Configs []configBody `json:"configs"`
			Cases   []struct {
				Config       int                  `json:"config"`
				Experiment   string               `json:"experiment"`
				UserID       string               `json:"user_id"`
				Attributes   bucketing.Attributes `json:"attributes"`
				Variant      string               `json:"variant"`
				InExperiment bool                 `json:"in_experiment"`
				ReasonCode   bucketing.ReasonCode `json:"reason_code"`
			} `json:"cases"`
		} `json:"decisions"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Decisions.Cases) == 0 {
		t.Fatal("no decision cases")
	}
	for _, c := range file.Decisions.Cases {
		var served *bucketing.Served
		for _, e := range file.Decisions.Configs[c.Config].Experiments {
			if e.Name == c.Experiment {
				s := e.served()
				served = &s
			}
		}
		if served == nil {
			t.Fatalf("case %+v: no such experiment", c)
		}
		got, err := bucketing.Evaluate(served, c.UserID, c.Attributes, "")
		if err != nil || got.Variant != c.Variant || got.InExperiment != c.InExperiment || got.Reason != c.ReasonCode {
			t.Errorf("%s %s: Evaluate = %+v, %v; want %s, in_experiment %v, %s", c.Experiment, c.UserID, got, err, c.Variant, c.InExperiment, c.ReasonCode)
		}
	}
}
