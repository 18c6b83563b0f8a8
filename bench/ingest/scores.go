package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/expd/expd/internal/eventmix"
)

// compareScores measures POST /v1/scores against POST /v1/events carrying
// as many model calls (docs/quality.md, "Benchmark"): each round posts
// -requests batches of -batch model calls, then one human score of each
// of those calls in batches of the same size, from the same clients. The
// ratio is scores/s over model calls/s, of the rounds' sums.
func compareScores(ctx context.Context, env *benchEnv, cfg config) error {
	var calls, scores loadResult
	for round := range cfg.scoreRounds {
		callBatches, scoreBatches := makeScoredCalls(env.experimentID, round, cfg.requests, cfg.batch)
		c, err := postAll(ctx, env, "/v1/events", callBatches, cfg.clients)
		if err != nil {
			return err
		}
		s, err := postAll(ctx, env, "/v1/scores", scoreBatches, cfg.clients)
		if err != nil {
			return err
		}
		fmt.Printf("scores round %d: POST /v1/events %.0f model calls/s (p50 %s, p99 %s); POST /v1/scores %.0f scores/s (p50 %s, p99 %s); ratio %.2f\n",
			round+1, c.rate(), c.quantile(0.5), c.quantile(0.99), s.rate(), s.quantile(0.5), s.quantile(0.99), s.rate()/c.rate())
		calls.add(c)
		scores.add(s)
	}
	fmt.Printf("POST /v1/scores: %d scores in %s: %.0f scores/s (p50 %s, p99 %s); POST /v1/events: %d model calls in %s: %.0f calls/s (p50 %s, p99 %s)\n",
		scores.events, scores.elapsed.Round(time.Millisecond), scores.rate(), scores.quantile(0.5), scores.quantile(0.99),
		calls.events, calls.elapsed.Round(time.Millisecond), calls.rate(), calls.quantile(0.5), calls.quantile(0.99))
	fmt.Printf("ratio scores/s / model calls/s (same run, goal >= 0.9): %.2f\n", scores.rate()/calls.rate())
	return nil
}

// makeScoredCalls builds requests of model calls (as eventmix.Event makes
// them, users of their own per round) and, for each request, one of
// scores of the same calls: a thumbs-up with a short comment on some.
func makeScoredCalls(experimentID string, round, requests, size int) (calls, scores []batch) {
	now := time.Now().UTC()
	calls, scores = make([]batch, requests), make([]batch, requests)
	for r := range requests {
		evs := make([]map[string]any, size)
		scs := make([]map[string]any, size)
		for i := range evs {
			n := 5 + 10*((round*requests+r)*size+i) // a model call of eventmix.Event's mix
			evs[i] = eventmix.Event(experimentID, n, now)
			evs[i]["user_id"] = fmt.Sprintf("scored-%d-%d", round, n/30)
			scs[i] = map[string]any{"call_id": evs[i]["event_id"], "name": "thumbs_up", "value": n%3 != 0,
				"timestamp": now.Format(time.RFC3339Nano)}
			if n%4 == 0 {
				scs[i]["comment"] = "Clear and to the point."
			}
		}
		calls[r].body, _ = json.Marshal(map[string]any{"events": evs})
		scores[r].body, _ = json.Marshal(map[string]any{"scores": scs})
		calls[r].events, scores[r].events = evs, scs
	}
	return calls, scores
}
