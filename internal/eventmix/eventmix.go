// Package eventmix is the benchmarks' event mix, as the SDKs send it
// (JSON objects of POST /v1/events): one generator for bench/ingest's load
// and the ingest package's micro-benchmarks, so both measure the same
// events.
package eventmix

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/vocab"
)

// Event is event n of the mix in experimentID: half exposures, 40% model
// calls with a short prompt and response, 10% business events; users
// n/3, variants alternating, timestamps up to an hour before now.
func Event(experimentID string, n int, now time.Time) map[string]any {
	e := map[string]any{
		"event_id": uuid.NewString(), "experiment_id": experimentID, "user_id": fmt.Sprintf("user-%d", n/3),
		"variant": []string{"control", "treatment"}[n%2], "timestamp": now.Add(-time.Duration(n%3600) * time.Second).Format(time.RFC3339Nano),
	}
	switch n % 10 {
	case 0, 1, 2, 3, 4:
		e["type"], e["config_version"] = vocab.TypeExposure, 1
	case 5, 6, 7, 8:
		e["type"], e["model"], e["latency_ms"], e["input_tokens"], e["output_tokens"], e["cost_usd"] =
			vocab.TypeModelCall, "gpt-4o-mini", float64(200+n%900), 120+n%50, 40+n%30, 0.00042
		e["prompt"] = "You are a helpful support agent. Answer the customer's question briefly."
		e["response"] = "Thanks for reaching out! You can reset your password from the account page."
	default:
		e["type"], e["business_metric"], e["value"] = vocab.TypeBusinessEvent, "conversion", 1.0
	}
	return e
}
