package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
)

// Evaluator pacing (docs/quality.md, "The pipeline").
const (
	// EvaluatorPollInterval is the wait after a poll that found nothing
	// more: with the poll's settle time it bounds a score's lag behind
	// its call's ingest well within two minutes.
	EvaluatorPollInterval = 15 * time.Second
	// evaluatorBatch bounds the calls one poll hands out.
	evaluatorBatch = 500
	// evaluatorRounds bounds the polls of one run before it continues as
	// new, so its history stays small.
	evaluatorRounds = 200
	// BackfillSignal asks an evaluator's workflow to evaluate a range.
	BackfillSignal = "backfill"
)

// EvaluatorInput carries an evaluator's id and, across continue-as-new,
// its poll position and pending backfills. No spec and no key: the
// activities read them by id.
type EvaluatorInput struct {
	EvaluatorID string
	Cursor      activities.EvaluatorCursor
	Backfills   []activities.EvaluatorBackfill
	// PollInterval replaces EvaluatorPollInterval (tests); 0: the default.
	PollInterval time.Duration
	// SpentDay is the UTC day whose budget was found spent: the first
	// poll of a later day starts from that day's first instant.
	SpentDay string
}

// BackfillRequest is the backfill signal's payload.
type BackfillRequest struct{ From, To time.Time }

// evaluateRetry is the retry policy of a batch of evaluations: a call
// whose judge answers 429 or 5xx, times out or drops the connection is
// tried 6 times over about 2 minutes (its Retry-After honoured within
// that), then recorded as failed by the last attempt; calls evaluated by
// an earlier attempt are skipped.
var evaluateRetry = temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 6}

// Evaluator runs one online evaluator for as long as it lives: it polls
// the sampled calls not yet evaluated, evaluates them `concurrency` at a
// time (one EvaluateCalls activity per poll, which loads the judge's key
// by the evaluator's id), stops when the UTC day's budget is spent (polling
// only the budget until then) and resumes at the next UTC day with the
// calls received from its first instant (calls of the spent day are not
// evaluated later: a backfill can), and ends once the evaluator is
// deleted. A backfill signal adds a range
// of calls (by ts) to evaluate; every evaluation happens once per call.
func Evaluator(ctx workflow.Context, in EvaluatorInput) error {
	pollCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	evalCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// A batch of 1,000 against a judge that times out every call at
		// concurrency 1 is the worst case; the heartbeat after each call
		// notices a lost worker within two minutes.
		StartToCloseTimeout: evaluatorBatch * 70 * time.Second,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         &evaluateRetry,
	})
	interval := in.PollInterval
	if interval <= 0 {
		interval = EvaluatorPollInterval
	}
	backfills := workflow.GetSignalChannel(ctx, BackfillSignal)
	takeBackfills := func() {
		var req BackfillRequest
		for backfills.ReceiveAsync(&req) {
			in.Backfills = append(in.Backfills, activities.EvaluatorBackfill{From: req.From, To: req.To})
		}
	}
	for round := 0; ; round++ {
		takeBackfills()
		if round == evaluatorRounds {
			return workflow.NewContinueAsNewError(ctx, Evaluator, in)
		}
		now := workflow.Now(ctx).UTC()
		day := now.Format(time.DateOnly)
		if in.SpentDay != "" && day != in.SpentDay {
			// A new day after a spent one: resume with the calls received
			// from its first instant; the spent day's rest is not caught up
			// (it would eat the new day's budget; a backfill can).
			start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
			if in.Cursor.ReceivedAt.Before(start) {
				in.Cursor = activities.EvaluatorCursor{ReceivedAt: start}
			}
			in.SpentDay = ""
		}
		poll := activities.PollEvaluatorInput{EvaluatorID: in.EvaluatorID, Day: day, Cursor: in.Cursor, Limit: evaluatorBatch}
		if len(in.Backfills) > 0 {
			poll.Backfill = &in.Backfills[0]
		}
		var got activities.PollEvaluatorResult
		if err := workflow.ExecuteActivity(pollCtx, a.PollEvaluator, poll).Get(ctx, &got); err != nil {
			return err
		}
		switch {
		case got.Deleted:
			return nil
		case got.BudgetSpent:
			// Poll again at the interval (a deletion or an edit that raises
			// the budget is seen), never past the next day's first instant.
			in.SpentDay = day
			next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
			if err := workflow.Sleep(ctx, min(interval, next.Sub(now))); err != nil {
				return err
			}
			continue
		}
		if !evaluateAll(ctx, evalCtx, in.EvaluatorID, day, got.CallIDs) {
			// An evaluation failed for good (the database, not the judge):
			// poll the same calls again after a pause; those evaluated
			// meanwhile are skipped.
			if err := workflow.Sleep(ctx, interval); err != nil {
				return err
			}
			continue
		}
		if poll.Backfill != nil {
			in.Backfills[0].Cursor = got.Next
			if !got.More {
				in.Backfills = in.Backfills[1:]
			}
			continue
		}
		in.Cursor = got.Next
		if !got.More {
			selector := workflow.NewSelector(ctx)
			selector.AddFuture(workflow.NewTimer(ctx, interval), func(workflow.Future) {})
			selector.AddReceive(backfills, func(workflow.ReceiveChannel, bool) {}) // a backfill wakes the loop (taken at its top)
			selector.Select(ctx)
		}
	}
}

// evaluateAll hands a poll's calls to one EvaluateCalls activity (which
// runs them `concurrency` at a time) and tells whether it ended; judge
// failures are recorded by the activity, so false means it failed for
// good otherwise (the database).
func evaluateAll(ctx, evalCtx workflow.Context, evaluatorID, day string, callIDs []string) bool {
	if len(callIDs) == 0 {
		return true
	}
	var res activities.EvaluateCallsResult
	err := workflow.ExecuteActivity(evalCtx, a.EvaluateCalls, activities.EvaluateCallsInput{EvaluatorID: evaluatorID, CallIDs: callIDs, Day: day}).Get(ctx, &res)
	if err != nil {
		workflow.GetLogger(ctx).Warn("evaluations left for a later poll", "evaluator", evaluatorID, "calls", len(callIDs), "error", err)
		return false
	}
	return true
}
