package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/privacy"
)

// compareRedaction measures POST /v1/events with the redact payload
// policy against store (docs/privacy.md, "Benchmark"): the bench org
// stores texts, a second org of the same plan redacts them; each round
// posts -requests batches of -batch model calls with support-chat texts
// (about 1.5 KB of prompt and 0.5 KB of response, with an email, a phone
// number and an order id) to each org in turn, the order alternating
// between rounds. The ratio is redact's calls/s over store's, of the
// rounds' sums.
func compareRedaction(ctx context.Context, env *benchEnv, cfg config) error {
	org, expID, err := newOrg(ctx, env.db)
	if err != nil {
		return err
	}
	key, err := keys.Issue(ctx, env.db, org, auth.Publishable, "bench")
	if err != nil {
		return err
	}
	_, err = privacy.Store{DB: env.db}.Put(ctx, org, "bench", privacy.Settings{PayloadPolicy: privacy.PolicyRedact},
		plans.Get(plans.Enterprise).RetentionDays, func(tx *gorm.DB) error {
			_, err := experiments.BumpConfigVersion(tx, org)
			return err
		})
	if err != nil {
		return err
	}
	var off, on loadResult
	for round := range cfg.redactRounds {
		plain := makeTextCalls(env.experimentID, "", round, cfg.requests, cfg.batch)
		redacted := makeTextCalls(expID, key, round, cfg.requests, cfg.batch)
		var o, r loadResult
		if round%2 == 0 {
			if o, err = postAll(ctx, env, "/v1/events", plain, cfg.clients); err == nil {
				r, err = postAll(ctx, env, "/v1/events", redacted, cfg.clients)
			}
		} else if r, err = postAll(ctx, env, "/v1/events", redacted, cfg.clients); err == nil {
			o, err = postAll(ctx, env, "/v1/events", plain, cfg.clients)
		}
		if err != nil {
			return err
		}
		fmt.Printf("redaction round %d: store %.0f calls/s (p50 %s, p99 %s); redact %.0f calls/s (p50 %s, p99 %s); ratio %.2f\n",
			round+1, o.rate(), o.quantile(0.5), o.quantile(0.99), r.rate(), r.quantile(0.5), r.quantile(0.99), r.rate()/o.rate())
		off.add(o)
		on.add(r)
	}
	var sample *string
	if err := env.db.Raw("SELECT prompt FROM events WHERE org_id = ? AND type = 'model_call' LIMIT 1", org).Scan(&sample).Error; err != nil {
		return err
	}
	if sample == nil || strings.Contains(*sample, "@example.com") || !strings.Contains(*sample, "[EMAIL]") {
		return fmt.Errorf("the redact org stored %v: not redacted", sample)
	}
	fmt.Printf("POST /v1/events with model calls: store %d calls in %s: %.0f calls/s; redact %d calls in %s: %.0f calls/s\n",
		off.events, off.elapsed.Round(time.Millisecond), off.rate(), on.events, on.elapsed.Round(time.Millisecond), on.rate())
	perCall := func(r loadResult) time.Duration { return r.cpu / time.Duration(max(r.events, 1)) }
	fmt.Printf("this process's CPU per call (the API and the clients, not PostgreSQL): store %s, redact %s; ratio store / redact %.2f\n",
		perCall(off), perCall(on), float64(perCall(off))/float64(perCall(on)))
	fmt.Printf("ratio redact / store (same run, goal >= 0.8): %.2f\n", on.rate()/off.rate())
	return nil
}

// supportPrompt is a system prompt and a customer's message of a
// support chat, about 1.5 KB, with personal data in the message.
var supportPrompt = strings.Repeat("You are a helpful support agent for an online shop. Answer briefly and politely, "+
	"quote the order number, never promise refunds over 100 EUR without a manager. ", 8) +
	"Customer: Hi, my order 2024-11-0042 (placed 2024-11-20 at 10:30) has not arrived. You can reach me at %s or +44 20 7946 0958. Thanks!"

const supportResponse = "Thanks for reaching out! I am sorry order 2024-11-0042 is late. The carrier shows it in transit since 2024-11-21; " +
	"it should arrive within 2 working days. If it has not arrived by Friday, reply here and we will send a replacement at no cost. " +
	"Version 3.2.1 of our app also shows live tracking under Orders. Have a good day!"

// makeTextCalls builds requests of model calls with support-chat texts,
// sent with key ("": the bench org's publishable key).
func makeTextCalls(experimentID, key string, round, requests, size int) []batch {
	now := time.Now().UTC()
	out := make([]batch, requests)
	for r := range out {
		evs := make([]map[string]any, size)
		for i := range evs {
			n := (round*requests+r)*size + i
			evs[i] = map[string]any{"event_id": uuid.NewString(), "type": "model_call", "experiment_id": experimentID,
				"user_id": fmt.Sprintf("text-%d-%d", round, n/10), "variant": []string{"control", "treatment"}[n%2],
				"timestamp": now.Add(-time.Duration(n%3600) * time.Second).Format(time.RFC3339Nano),
				"model":     "gpt-4o-mini", "latency_ms": float64(200 + n%900), "input_tokens": 380, "output_tokens": 110,
				"prompt": fmt.Sprintf(supportPrompt, fmt.Sprintf("customer%d@example.com", n)), "response": supportResponse}
		}
		out[r].body, _ = json.Marshal(map[string]any{"events": evs})
		out[r].events, out[r].key = evs, key
	}
	return out
}
