package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/workflows"
)

// evaluatorScript answers an Evaluator workflow's polls in turn and
// records every poll and evaluation.
type evaluatorScript struct {
	mu      sync.Mutex
	answers []func(activities.PollEvaluatorInput) activities.PollEvaluatorResult
	polls   []activities.PollEvaluatorInput
	evals   []activities.EvaluateCallInput
	failing map[string]bool
}

func (s *evaluatorScript) poll(_ context.Context, in activities.PollEvaluatorInput) (activities.PollEvaluatorResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls = append(s.polls, in)
	if len(s.answers) == 0 {
		return activities.PollEvaluatorResult{Deleted: true}, nil
	}
	next := s.answers[0]
	s.answers = s.answers[1:]
	return next(in), nil
}

func (s *evaluatorScript) evaluate(_ context.Context, in activities.EvaluateCallsInput) (activities.EvaluateCallsResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range in.CallIDs {
		s.evals = append(s.evals, activities.EvaluateCallInput{EvaluatorID: in.EvaluatorID, CallID: id, Day: in.Day})
		if s.failing[id] {
			return activities.EvaluateCallsResult{}, temporal.NewNonRetryableApplicationError("database down", "test", errors.New("down"))
		}
	}
	return activities.EvaluateCallsResult{Scored: len(in.CallIDs)}, nil
}

func runEvaluator(t *testing.T, start time.Time, s *evaluatorScript, during func(signal func(workflows.BackfillRequest))) {
	t.Helper()
	env, acts := newSuiteEnv()
	env.SetStartTime(start)
	env.OnActivity(acts.PollEvaluator, mock.Anything, mock.Anything).Return(s.poll)
	env.OnActivity(acts.EvaluateCalls, mock.Anything, mock.Anything).Return(s.evaluate)
	if during != nil {
		during(func(r workflows.BackfillRequest) {
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.BackfillSignal, r) }, time.Millisecond)
		})
	}
	env.ExecuteWorkflow(workflows.Evaluator, workflows.EvaluatorInput{EvaluatorID: "ev-1", PollInterval: time.Second})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
}

func calls(ids ...string) func(activities.PollEvaluatorInput) activities.PollEvaluatorResult {
	return func(activities.PollEvaluatorInput) activities.PollEvaluatorResult {
		return activities.PollEvaluatorResult{CallIDs: ids,
			Next: activities.EvaluatorCursor{ReceivedAt: time.Date(2026, 1, 2, 22, 0, 0, 0, time.UTC), EventID: ids[len(ids)-1]}}
	}
}

// A spent budget stops the evaluator until the next UTC day, which
// resumes with the calls received from its first instant.
func TestEvaluatorBudgetWaitsForTheNextDay(t *testing.T) {
	s := &evaluatorScript{answers: []func(activities.PollEvaluatorInput) activities.PollEvaluatorResult{calls("a", "b", "c")}}
	// The budget is spent for the rest of the day; polls during it
	// evaluate nothing.
	var spentPolls int
	var spent func(activities.PollEvaluatorInput) activities.PollEvaluatorResult
	spent = func(in activities.PollEvaluatorInput) activities.PollEvaluatorResult {
		if in.Day == "2026-01-02" {
			spentPolls++
			s.answers = append(s.answers, spent) // still spent at the next poll of the day
			return activities.PollEvaluatorResult{BudgetSpent: true}
		}
		return calls("d")(in)
	}
	s.answers = append(s.answers, spent)
	runEvaluator(t, time.Date(2026, 1, 2, 23, 59, 50, 0, time.UTC), s, nil)
	if len(s.evals) != 4 {
		t.Fatalf("evaluations %+v, want a, b, c, d once each", s.evals)
	}
	for i, e := range s.evals {
		wantDay := "2026-01-02"
		if i == 3 {
			wantDay = "2026-01-03"
		}
		if e.Day != wantDay || e.EvaluatorID != "ev-1" {
			t.Errorf("evaluation %d: %+v, want day %s", i, e, wantDay)
		}
	}
	midnight := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	n := len(s.polls)
	first := s.polls[n-2] // the first poll of the new day
	if spentPolls < 2 || first.Day != "2026-01-03" || !first.Cursor.ReceivedAt.Equal(midnight) || first.Cursor.EventID != "" {
		t.Fatalf("%d spent polls, then %+v: after the spent day want day 2026-01-03 from its midnight", spentPolls, first)
	}
	if s.polls[n-1].Cursor.EventID != "d" {
		t.Fatalf("the cursor did not move past the evaluated call: %+v", s.polls[n-1])
	}
}

// A backfill signal is polled with its range until it is done, then the
// live cursor resumes where it was.
func TestEvaluatorBackfill(t *testing.T) {
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	s := &evaluatorScript{answers: []func(activities.PollEvaluatorInput) activities.PollEvaluatorResult{
		func(activities.PollEvaluatorInput) activities.PollEvaluatorResult {
			return activities.PollEvaluatorResult{CallIDs: []string{}}
		},
		func(in activities.PollEvaluatorInput) activities.PollEvaluatorResult {
			r := calls("old-1", "old-2")(in)
			r.More = true
			return r
		},
		calls("old-3"),
	}}
	runEvaluator(t, time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC), s, func(signal func(workflows.BackfillRequest)) {
		signal(workflows.BackfillRequest{From: from, To: to})
	})
	if len(s.polls) != 4 || s.polls[0].Backfill != nil {
		t.Fatalf("polls %+v", s.polls)
	}
	b1, b2 := s.polls[1].Backfill, s.polls[2].Backfill
	if b1 == nil || !b1.From.Equal(from) || !b1.To.Equal(to) || b2 == nil || b2.Cursor.EventID != "old-2" || s.polls[3].Backfill != nil {
		t.Fatalf("backfill polls %+v %+v %+v", b1, b2, s.polls[3])
	}
	if len(s.evals) != 3 {
		t.Fatalf("evaluations %+v", s.evals)
	}
}

// An evaluation whose activity fails for good leaves the cursor where it
// was, so the next poll hands the call out again.
func TestEvaluatorKeepsTheCursorWhenAnEvaluationFails(t *testing.T) {
	s := &evaluatorScript{failing: map[string]bool{"b": true}, answers: []func(activities.PollEvaluatorInput) activities.PollEvaluatorResult{
		calls("a", "b"),
	}}
	s.answers = append(s.answers, func(in activities.PollEvaluatorInput) activities.PollEvaluatorResult {
		s.failing = nil
		return calls("b")(in)
	})
	runEvaluator(t, time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC), s, nil)
	if len(s.polls) < 2 || s.polls[1].Cursor != s.polls[0].Cursor {
		t.Fatalf("polls %+v: the failed call's poll must be repeated", s.polls)
	}
	if s.polls[2].Cursor.EventID != "b" {
		t.Fatalf("after the retry the cursor is %+v", s.polls[2].Cursor)
	}
}
