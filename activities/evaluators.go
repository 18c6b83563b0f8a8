package activities

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/sdk/prices"
	"github.com/expd/expd/telemetry"
)

// Bounds of an evaluator's polling (docs/quality.md, "The pipeline").
const (
	// pollPage is how many calls one read examines.
	pollPage = 1000
	// pollExamine bounds the calls one poll examines (pages of pollPage).
	pollExamine = 20_000
	// pollSettle keeps a poll behind the newest calls: a group commit
	// stamps received_at before it commits, so a call stamped earlier can
	// commit a little later; the poll does not pass calls younger than
	// this.
	pollSettle = 5 * time.Second
)

// EvaluatorCursor is the position of an evaluator's poll in the order
// calls were received.
type EvaluatorCursor struct {
	ReceivedAt time.Time
	EventID    string
}

// EvaluatorBackfill is a range of calls (by their ts) to evaluate again
// as if new: calls evaluated already are skipped.
type EvaluatorBackfill struct {
	From, To time.Time
	Cursor   EvaluatorCursor
}

// PollEvaluatorInput asks for the next sampled, unevaluated calls of an
// evaluator after Cursor (or within Backfill when set), at most Limit,
// within what is left of Day's budget.
type PollEvaluatorInput struct {
	EvaluatorID string
	Day         string // the workflow's UTC day (YYYY-MM-DD): the budget's
	Cursor      EvaluatorCursor
	Backfill    *EvaluatorBackfill
	Limit       int
}

// PollEvaluatorResult is what to evaluate next. Next is the cursor past
// every call examined; More says a page was full (poll again at once).
type PollEvaluatorResult struct {
	Deleted     bool
	BudgetSpent bool
	CallIDs     []string
	Next        EvaluatorCursor
	More        bool
}

// PollEvaluator reads the evaluator (its id only crossed the workflow)
// and the calls to evaluate next: of its experiments (every running one
// when it names none), received after the cursor, sampled at its rate
// (evaluators.Sampled), not evaluated yet, at most what the day's budget
// leaves. The cursor stops at the last call returned, so calls left out
// for the budget are examined again next time.
func (a *Activities) PollEvaluator(ctx context.Context, in PollEvaluatorInput) (PollEvaluatorResult, error) {
	l, err := evaluators.Load(ctx, a.DB, nil, in.EvaluatorID)
	if errors.Is(err, evaluators.ErrNotFound) {
		return PollEvaluatorResult{Deleted: true}, nil
	}
	if err != nil {
		return PollEvaluatorResult{}, err
	}
	out := PollEvaluatorResult{Deleted: l.Deleted, Next: in.Cursor, CallIDs: []string{}}
	if l.Deleted {
		return out, nil
	}
	used, err := evaluators.Used(ctx, a.DB, l.ID, in.Day)
	if err != nil {
		return out, err
	}
	b := l.Spec.DailyBudget
	left := b.MaxEvaluations - used.Evaluations
	if left <= 0 || (b.MaxCostUSD != nil && used.CostUSD >= *b.MaxCostUSD) {
		out.BudgetSpent = true
		return out, nil
	}
	limit := int(min(int64(in.Limit), left))
	exps := l.Spec.Experiments
	if len(exps) == 0 {
		running, err := experiments.Store{DB: a.DB}.ListRunning(ctx, l.OrgID, "", evaluators.MaxExperiments*20)
		if err != nil {
			return out, err
		}
		for _, r := range running {
			exps = append(exps, r.ID)
		}
		if len(exps) == 0 {
			return out, nil
		}
	}
	f := ingest.NewCallsFilter{OrgID: l.OrgID, ExperimentIDs: exps, Limit: pollPage,
		AfterReceived: in.Cursor.ReceivedAt, AfterID: in.Cursor.EventID, ReceivedBefore: a.now().Add(-pollSettle)}
	if in.Backfill != nil {
		f.From, f.To = in.Backfill.From, in.Backfill.To
		f.AfterReceived, f.AfterID = in.Backfill.Cursor.ReceivedAt, in.Backfill.Cursor.EventID
		out.Next = in.Backfill.Cursor
	}
	for examined := 0; examined < pollExamine && len(out.CallIDs) < limit; {
		rows, err := a.events().ReadNewCalls(ctx, f)
		if err != nil {
			return out, err
		}
		var sampled []string
		for _, r := range rows {
			if evaluators.Sampled(r.EventID, *l.Spec.SamplingRate) {
				sampled = append(sampled, r.EventID)
			}
		}
		done, err := evaluators.Evaluated(ctx, a.DB, l.ID, sampled)
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			if len(out.CallIDs) == limit {
				out.More = true
				return out, nil
			}
			out.Next = EvaluatorCursor{ReceivedAt: r.ReceivedAt, EventID: r.EventID}
			if evaluators.Sampled(r.EventID, *l.Spec.SamplingRate) && !done[r.EventID] {
				out.CallIDs = append(out.CallIDs, r.EventID)
			}
		}
		examined += len(rows)
		if len(rows) < pollPage {
			return out, nil
		}
		f.AfterReceived, f.AfterID = out.Next.ReceivedAt, out.Next.EventID
	}
	out.More = true
	return out, nil
}

// EvaluateCallsInput is a batch of calls to evaluate; Day is the
// workflow's UTC day, whose budget the evaluations count against.
type EvaluateCallsInput struct {
	EvaluatorID string
	CallIDs     []string
	Day         string
}

// EvaluateCallsResult counts what became of the batch.
type EvaluateCallsResult struct {
	Scored, Failed, Skipped int
	CostUSD                 float64
}

// EvaluateCallInput is one call of a batch.
type EvaluateCallInput struct {
	EvaluatorID string
	CallID      string
	Day         string
}

// EvaluateCallResult says what became of one call: Outcome is "scored",
// "failed" or "skipped" (evaluated before, or the evaluator deleted).
type EvaluateCallResult struct {
	Outcome string
	CostUSD float64
}

// Failure kinds recorded besides the judge's.
const (
	failCallMissing = "call_missing" // the call is not stored (purged, or of another org)
	failNoAnswer    = "no_answer"    // the call recorded no response to grade
	failKey         = "key"          // the judge's key does not open with this server's secrets keys
	failStore       = "store_refused"
	failNoText      = "payload_not_kept" // the payload policy stored a hash, not text (docs/privacy.md)
)

// EvaluateCalls evaluates a batch of calls, each once, `concurrency` at a
// time: it loads the evaluator (with the judge's key, opened here so it
// never enters a workflow history) and runs evaluateCall for each call,
// heartbeating as calls finish. One activity per batch, not per call,
// keeps the judge busy without a workflow task between two calls. When a
// judge answered 429 or 5xx for some calls (and this is not the last
// attempt) the activity fails retryably after the others are done, the
// longest Retry-After honoured; its retry evaluates only what is left,
// since a call evaluated before is skipped.
func (a *Activities) EvaluateCalls(ctx context.Context, in EvaluateCallsInput) (EvaluateCallsResult, error) {
	var res EvaluateCallsResult
	l, err := evaluators.Load(ctx, a.DB, a.Secrets, in.EvaluatorID)
	switch {
	case errors.Is(err, evaluators.ErrNotFound):
		return res, nil
	case err != nil && !errors.Is(err, evaluators.ErrKeyUnopenable):
		return res, err
	case l.Deleted:
		return res, nil
	}
	keyErr := err
	var (
		mu       sync.Mutex
		firstErr error
		wait     time.Duration
		retry    bool
	)
	next := make(chan string)
	var wg sync.WaitGroup
	for range max(l.Spec.Concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				one := EvaluateCallInput{EvaluatorID: l.ID, CallID: id, Day: in.Day}
				var out EvaluateCallResult
				var err error
				if keyErr != nil {
					// Recorded as each call's failure, not retried forever:
					// the operator's keys changed under the evaluator.
					out, err = a.recordFailure(ctx, l, one, failKey, "the judge's api_key does not open with EXPD_SECRETS_KEY or EXPD_SECRETS_KEY_PREVIOUS", 0)
				} else {
					out, err = a.evaluateCall(ctx, l, one)
				}
				mu.Lock()
				var je *evaluators.JudgeError
				switch {
				case errors.As(err, &je):
					retry, wait = true, max(wait, je.RetryAfter)
				case err != nil:
					if firstErr == nil {
						firstErr = err
					}
				case out.Outcome == evaluators.StatusScored:
					res.Scored++
				case out.Outcome == evaluators.StatusFailed:
					res.Failed++
				default:
					res.Skipped++
				}
				res.CostUSD += out.CostUSD
				mu.Unlock()
				if activity.IsActivity(ctx) {
					activity.RecordHeartbeat(ctx, nil)
				}
			}
		}()
	}
	for _, id := range in.CallIDs {
		next <- id
	}
	close(next)
	wg.Wait()
	switch {
	case firstErr != nil:
		return res, firstErr
	case retry && wait > 0:
		return res, temporal.NewApplicationErrorWithOptions("the judge was unavailable for some calls", "JudgeUnavailable",
			temporal.ApplicationErrorOptions{NextRetryDelay: honouredRetryAfter(ctx, wait)})
	case retry:
		return res, temporal.NewApplicationError("the judge was unavailable for some calls", "JudgeUnavailable")
	}
	return res, nil
}

// evaluateCall evaluates one call once: it reads the call, grades it,
// writes the score through the scores path (ingest's group commit,
// source judge or code, with the evaluator's id, version and judge
// model), and records the evaluation. A judge answering 429 or 5xx is
// returned as its *evaluators.JudgeError for the batch's retry, except on
// the last attempt, when (as for answers that are not a verdict) the
// failure is recorded instead. A call evaluated before is skipped.
func (a *Activities) evaluateCall(ctx context.Context, l evaluators.Loaded, in EvaluateCallInput) (EvaluateCallResult, error) {
	skip := EvaluateCallResult{Outcome: "skipped"}
	done, err := evaluators.Evaluated(ctx, a.DB, l.ID, []string{in.CallID})
	if err != nil || done[in.CallID] {
		return skip, err
	}
	call, found, err := a.events().ReadCall(ctx, l.OrgID, in.CallID)
	if err != nil {
		return EvaluateCallResult{}, err
	}
	if !found {
		return a.recordFailure(ctx, l, in, failCallMissing, "no model call with this id is stored", 0)
	}
	output := deref(call.Response)
	if output == "" {
		return a.recordFailure(ctx, l, in, failNoAnswer, "the call recorded no response (or the payload policy drop kept none)", 0)
	}
	if strings.HasPrefix(output, privacy.HashPrefix) {
		return a.recordFailure(ctx, l, in, failNoText, "the payload policy hash stored no text to evaluate", 0)
	}
	if l.Spec.Kind == evaluators.KindCode {
		check, err := evaluators.Compile("check", *l.Spec.Check)
		if err != nil {
			return EvaluateCallResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "BadCheck", err)
		}
		return a.storeScore(ctx, l, in, check(output), "", 0)
	}
	e := l.Spec.Endpoint
	jc := evaluators.Call{BaseURL: e.BaseURL, Model: e.Model, APIKey: e.APIKey, Template: l.Spec.Template,
		Range: [2]float64{l.Spec.Range[0], l.Spec.Range[1]}, Input: deref(call.Prompt), Output: output, Variant: call.Variant,
		VariantPrompt: a.variantPrompt(ctx, l.OrgID, call)}
	v, err := a.judge().Grade(ctx, jc)
	var je *evaluators.JudgeError
	switch {
	case err == nil:
		return a.storeScore(ctx, l, in, v.Score, v.Reason, judgeCost(e.Model, v.InputTokens, v.OutputTokens))
	case !errors.As(err, &je):
		return EvaluateCallResult{}, err
	case je.Retryable() && !lastAttempt(ctx):
		return EvaluateCallResult{}, je
	}
	return a.recordFailure(ctx, l, in, je.Kind, je.Error(), judgeCost(e.Model, je.InputTokens, je.OutputTokens))
}

// lastAttempt tells whether the activity's retry policy allows no more
// attempts after this one.
func lastAttempt(ctx context.Context) bool {
	if !activity.IsActivity(ctx) {
		return true
	}
	info := activity.GetInfo(ctx)
	p := info.RetryPolicy
	return p != nil && p.MaximumAttempts > 0 && info.Attempt >= p.MaximumAttempts
}

// judgeCost prices a judge call from its reported usage (0 for a model
// without a price: validation refuses a cost budget for one).
func judgeCost(model string, in, out int64) float64 {
	p, ok := prices.Lookup(model)
	if !ok {
		return 0
	}
	return p.Cost(in, out)
}

func (a *Activities) variantPrompt(ctx context.Context, orgID string, call ingest.EventRow) string {
	exp, err := experiments.Store{DB: a.DB}.VersionAt(ctx, orgID, call.ExperimentID, call.Ts.Add(time.Microsecond))
	if err != nil {
		return "" // a call before its experiment's first version: no prompt to show
	}
	return exp.Variants[call.Variant].Prompt
}

// storeScore writes the score through the scores path, then records the
// evaluation. A retry after a crash between the two writes the same score
// again (an upsert of its key: nothing counted twice) and records it.
func (a *Activities) storeScore(ctx context.Context, l evaluators.Loaded, in EvaluateCallInput, value float64, reason string, cost float64) (EvaluateCallResult, error) {
	version := strconv.Itoa(l.Version)
	row := scores.Row{OrgID: l.OrgID, CallID: in.CallID, Name: l.Spec.Score, Source: evaluators.Source(l.Spec.Kind), Value: value,
		Ts: a.now(), Evaluator: &l.ID, EvaluatorVersion: &version}
	judgeModel := ""
	if l.Spec.Kind == evaluators.KindJudge {
		judgeModel = l.Spec.Endpoint.Model
		row.JudgeModel = &judgeModel
	}
	plan, err := a.orgPlan(ctx, l.OrgID)
	var over *ingest.AllowanceError
	if err != nil {
		return EvaluateCallResult{}, err
	}
	if _, err := a.ingestWriter().Write(ctx, ingest.Batch{Tenant: ingest.Tenant{OrgID: l.OrgID, Plan: plan}, Scores: []scores.Row{row}}); err != nil {
		if errors.As(err, &over) {
			return a.recordFailure(ctx, l, in, failStore, "the org's monthly event allowance is used up", cost)
		}
		return EvaluateCallResult{}, fmt.Errorf("write score of %s: %w", in.CallID, err)
	}
	_, err = evaluators.Record(ctx, a.DB, evaluators.Outcome{OrgID: l.OrgID, EvaluatorID: l.ID, CallID: in.CallID, Version: l.Version,
		Score: &value, Reason: reason, JudgeModel: judgeModel, CostUSD: cost, At: a.dayInstant(in.Day)})
	if err != nil {
		return EvaluateCallResult{}, err
	}
	a.count(l.ID, evaluators.StatusScored, cost)
	return EvaluateCallResult{Outcome: evaluators.StatusScored, CostUSD: cost}, nil
}

func (a *Activities) recordFailure(ctx context.Context, l evaluators.Loaded, in EvaluateCallInput, kind, detail string, cost float64) (EvaluateCallResult, error) {
	model := ""
	if l.Spec.Endpoint != nil {
		model = l.Spec.Endpoint.Model
	}
	_, err := evaluators.Record(ctx, a.DB, evaluators.Outcome{OrgID: l.OrgID, EvaluatorID: l.ID, CallID: in.CallID, Version: l.Version,
		Failure: kind, Detail: detail, JudgeModel: model, CostUSD: cost, At: a.dayInstant(in.Day)})
	if err != nil {
		return EvaluateCallResult{}, err
	}
	a.count(l.ID, evaluators.StatusFailed, cost)
	return EvaluateCallResult{Outcome: evaluators.StatusFailed, CostUSD: cost}, nil
}

// dayInstant is now when it falls on the workflow's day, else that day's
// first instant (under a time-skipping test, or a poll that crossed
// midnight): the evaluation counts against the day the workflow budgeted.
func (a *Activities) dayInstant(day string) time.Time {
	now := a.now()
	if evaluators.Day(now) == day || day == "" {
		return now
	}
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return now
	}
	return d
}

func (a *Activities) count(evaluatorID, outcome string, cost float64) {
	telemetry.Evaluations.WithLabelValues(evaluatorID, outcome).Inc()
	if cost > 0 {
		telemetry.EvaluatorCost.WithLabelValues(evaluatorID).Add(cost)
	}
}

func (a *Activities) orgPlan(ctx context.Context, orgID string) (plans.Name, error) {
	list, err := orgs.Plans(ctx, a.DB, []string{orgID})
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", fmt.Errorf("org %s not found", orgID)
	}
	return plans.Name(list[0].Plan), nil
}

var writers sync.Map // *gorm.DB -> *ingest.Writer, one group-commit writer per database

func (a *Activities) ingestWriter() *ingest.Writer {
	if a.Ingest != nil {
		return a.Ingest
	}
	w, _ := writers.LoadOrStore(a.DB, ingest.NewWriter(a.DB, ingest.Options{}))
	return w.(*ingest.Writer)
}

func (a *Activities) judge() *evaluators.Judge {
	if a.Judge != nil {
		return a.Judge
	}
	return &evaluators.Judge{}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// LiveEvaluatorsInput asks for every live evaluator (the reconcile).
type LiveEvaluatorsInput struct{}

// LiveEvaluatorsResult are the live evaluators' ids.
type LiveEvaluatorsResult struct {
	IDs []string
}

// ListLiveEvaluators returns the ids of every evaluator not deleted, for
// the periodic reconcile to start the workflow of any that has none.
func (a *Activities) ListLiveEvaluators(ctx context.Context, _ LiveEvaluatorsInput) (LiveEvaluatorsResult, error) {
	ids, err := evaluators.Live(ctx, a.DB)
	return LiveEvaluatorsResult{IDs: ids}, err
}
