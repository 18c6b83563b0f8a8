// Package prices reads the one model price table (model_prices.json,
// README.md) for the server: what an LLM judge's call costs
// (docs/quality.md, "What an evaluation costs"). The clients embed
// copies of the same file and look models up by the same rule.
package prices

import (
	_ "embed"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

//go:embed model_prices.json
var table []byte

// Price is USD per token.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

var (
	once   sync.Once
	models map[string]Price
	// versionSuffix is the file's "lookup": one trailing version suffix.
	versionSuffix = regexp.MustCompile(`[-@](\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|latest)$`)
)

func shipped() map[string]Price {
	once.Do(func() {
		var f struct {
			Models map[string]Price `json:"models"`
		}
		if err := json.Unmarshal(table, &f); err != nil {
			panic("sdk/prices/model_prices.json: " + err.Error()) // embedded at build: a build defect
		}
		models = f.Models
	})
	return models
}

// Lookup finds model's price: the name lower-cased, else without a
// provider prefix and one version suffix.
func Lookup(model string) (Price, bool) {
	name := strings.ToLower(model)
	base := versionSuffix.ReplaceAllString(name[strings.LastIndexByte(name, '/')+1:], "")
	for _, key := range []string{name, base} {
		if p, ok := shipped()[key]; ok {
			return p, true
		}
	}
	return Price{}, false
}

// Cost prices a call's tokens.
func (p Price) Cost(input, output int64) float64 {
	return float64(float64(input)*p.Input) + float64(float64(output)*p.Output)
}
