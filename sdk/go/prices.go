package expd

import (
	_ "embed"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"sync"
)

// shippedPricesJSON is a copy of sdk/prices/model_prices.json (go:embed
// cannot reach outside this module); TestPriceTableIsTheCanonicalCopy
// fails while the two differ.
//
//go:embed model_prices.json
var shippedPricesJSON []byte

// Price is what a model costs: USD per input token and per output token.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

var shippedPrices = sync.OnceValue(func() map[string]Price {
	var table struct {
		Models map[string]Price `json:"models"`
	}
	if err := json.Unmarshal(shippedPricesJSON, &table); err != nil {
		panic("expd: embedded model_prices.json: " + err.Error())
	}
	return table.Models
})

// A trailing snapshot or version suffix: -2024-08-06, -20250929, -0613, -2411, -002, -latest, @20241022.
var versionSuffix = regexp.MustCompile(`[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|latest)$`)

// priceTable is the shipped prices under a client's overrides, looked up
// by the table's rule: the model name lower-cased; else without a provider
// prefix and one trailing version suffix, so gpt-4o-2024-08-06 and
// openai/gpt-4o price as gpt-4o.
type priceTable struct {
	overrides map[string]Price
	log       *slog.Logger
	mu        sync.Mutex
	unknown   map[string]bool // logged once each, at most 1,000
}

func newPriceTable(overrides map[string]Price, log *slog.Logger) *priceTable {
	t := &priceTable{overrides: make(map[string]Price, len(overrides)), log: log, unknown: map[string]bool{}}
	for name, p := range overrides {
		t.overrides[strings.ToLower(name)] = p
	}
	return t
}

// price finds model's price; an unknown model is logged once.
func (t *priceTable) price(model string) (Price, bool) {
	if model == "" {
		return Price{}, false
	}
	name := strings.ToLower(model)
	base := versionSuffix.ReplaceAllString(name[strings.LastIndexByte(name, '/')+1:], "")
	for _, table := range []map[string]Price{t.overrides, shippedPrices()} {
		for _, key := range []string{name, base} {
			if p, ok := table[key]; ok {
				return p, true
			}
		}
	}
	t.mu.Lock()
	if !t.unknown[model] && len(t.unknown) < 1000 {
		t.unknown[model] = true
		t.log.Info("expd: no price for model; its calls record no cost_usd (set Options.ModelPrices)", "model", model)
	}
	t.mu.Unlock()
	return Price{}, false
}

// cost is the cost of one call, or nil (no input tokens, unknown model).
func (t *priceTable) cost(model string, input, output *int) *float64 {
	if input == nil {
		return nil
	}
	p, ok := t.price(model)
	if !ok {
		return nil
	}
	return costUSD(p, input, output)
}

// costUSD prices a call's tokens; nil without input tokens.
func costUSD(p Price, input, output *int) *float64 {
	if input == nil {
		return nil
	}
	// The conversions keep the compiler from fusing into an FMA, so the
	// result is the same double as in the Python and TypeScript clients.
	cost := float64(float64(*input)*p.Input) + float64(float64(deref(output))*p.Output)
	return &cost
}
