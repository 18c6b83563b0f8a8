package workflowclient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/workflowclient"
)

func TestEnsureSchedulesIsIdempotentAndUpdatesInPlace(t *testing.T) {
	tenv := temporaltest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sc := tenv.Client.ScheduleClient()

	// An older deployment left the daily schedule at the wrong hour.
	stale := workflowclient.Schedules(tenv.TaskQueue)[0]
	stale.Spec.Calendars[0].Hour = []client.ScheduleRange{{Start: 5}}
	stale.Overlap = enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
	if _, err := sc.Create(ctx, stale); err != nil {
		t.Fatal(err)
	}
	for start := 1; start <= 2; start++ { // two worker starts
		if err := workflowclient.EnsureSchedules(ctx, tenv.Client, tenv.TaskQueue); err != nil {
			t.Fatalf("worker start %d: %v", start, err)
		}
	}
	for _, want := range workflowclient.Schedules(tenv.TaskQueue) {
		// Exactly one schedule per id: creating it again is refused.
		if _, err := sc.Create(ctx, want); !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			t.Fatalf("create %s again: %v, want already registered", want.ID, err)
		}
		desc, err := sc.GetHandle(ctx, want.ID).Describe(ctx)
		if err != nil {
			t.Fatalf("describe %s: %v", want.ID, err)
		}
		cal := desc.Schedule.Spec.Calendars
		wc := want.Spec.Calendars[0]
		if len(cal) != 1 || !sameRange(cal[0].Hour[0], wc.Hour[0]) || cal[0].Minute[0].Start != wc.Minute[0].Start {
			t.Errorf("%s calendars %+v, want %+v", want.ID, cal, want.Spec.Calendars)
		}
		if desc.Schedule.Policy.Overlap != want.Overlap || desc.Schedule.Policy.CatchupWindow != want.CatchupWindow {
			t.Errorf("%s policy %+v, want overlap %v catch-up %v", want.ID, desc.Schedule.Policy, want.Overlap, want.CatchupWindow)
		}
		action, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
		if !ok || action.TaskQueue != tenv.TaskQueue {
			t.Errorf("%s action %+v", want.ID, desc.Schedule.Action)
		}
	}
}

// sameRange compares schedule ranges as the server normalises them (an
// End of 0 means Start; Step defaults to 1).
func sameRange(got, want client.ScheduleRange) bool {
	end := func(r client.ScheduleRange) int { return max(r.Start, r.End) }
	return got.Start == want.Start && end(got) == end(want)
}
