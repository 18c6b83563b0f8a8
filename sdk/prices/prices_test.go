package prices_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/expd/expd/sdk/prices"
)

// The server prices the shared vectors as the clients do (OpenAI usage
// fields; the vectors without overrides).
func TestServerLookupMatchesTheClientsVectors(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/prices/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			Model string          `json:"model"`
			Usage json.RawMessage `json:"usage"`
			Cost  *float64        `json:"cost_usd"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range f.Cases {
		var u struct {
			Prompt     *int64 `json:"prompt_tokens"`
			Completion int64  `json:"completion_tokens"`
		}
		if json.Unmarshal(c.Usage, &u) != nil || u.Prompt == nil {
			continue
		}
		p, ok := prices.Lookup(c.Model)
		if ok != (c.Cost != nil) {
			t.Errorf("%s: known %v, vectors say cost %v", c.Model, ok, c.Cost)
			continue
		}
		if ok && math.Abs(p.Cost(*u.Prompt, u.Completion)-*c.Cost) > 1e-12 {
			t.Errorf("%s: cost %v, want %v", c.Model, p.Cost(*u.Prompt, u.Completion), *c.Cost)
		}
		checked++
	}
	if checked < 3 {
		t.Fatalf("checked %d vectors; the test proves nothing", checked)
	}
}
