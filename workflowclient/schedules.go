package workflowclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/workflows"
)

// Schedule policies (docs/results.md).
const (
	// A day whose run was missed (server down) is still computed if the
	// server is back within three days; each catch-up run computes the day
	// it was scheduled for.
	dailyCatchupWindow = 72 * time.Hour
	// A purge missed for a day is simply done by the next one.
	retentionCatchupWindow = 24 * time.Hour
	// A health run missed by more than a quarter hour is not caught up:
	// the next hour's run checks the same experiments with fresher data.
	healthCatchupWindow = 15 * time.Minute
	// RedriveEvery is the reconcile's period: an announcement or lifecycle
	// signal lost after its change committed goes out within this long of
	// Temporal being reachable again. A missed run is not caught up (the
	// next one does the same work).
	RedriveEvery         = 5 * time.Minute
	redriveCatchupWindow = RedriveEvery
	redriveFirstMinute   = 2 // off the other schedules' minutes (:10, :15, :30)
)

// Schedules returns the schedules of expd's task queue: the daily results
// at 00:30 UTC (the previous UTC day), the events partitions at 00:10 UTC,
// the retention purge at 01:30 UTC and the guardrail health run at a
// quarter past every hour, and the reconcile (Redrive) every five
// minutes from :02.
func Schedules(taskQueue string) []client.ScheduleOptions {
	return []client.ScheduleOptions{
		{
			ID:   workflows.DailyResultsScheduleID(taskQueue),
			Spec: dailyAt(0, 30, "results of the previous UTC day"),
			Action: &client.ScheduleWorkflowAction{
				ID: workflows.DailyResultsWorkflowID, Workflow: workflows.DailyResults, Args: []any{workflows.DailyResultsInput{}}, TaskQueue: taskQueue,
			},
			// Every run computes its own day, so a run that overlaps a slow
			// predecessor waits for it instead of being dropped.
			Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL,
			CatchupWindow: dailyCatchupWindow,
		},
		{
			ID:   workflows.EventPartitionsScheduleID(taskQueue),
			Spec: dailyAt(0, 10, "create the events partitions of the coming days"),
			Action: &client.ScheduleWorkflowAction{
				ID: workflows.EventPartitionsWorkflowID, Workflow: workflows.EventPartitions, Args: []any{workflows.EventPartitionsInput{}}, TaskQueue: taskQueue,
			},
			// Each run covers a week ahead, so a missed or skipped run is
			// made up by the next.
			Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			CatchupWindow: retentionCatchupWindow,
		},
		{
			ID:   workflows.RetentionScheduleID(taskQueue),
			Spec: dailyAt(1, 30, "purge events and nightly results past each org's plan retention"),
			Action: &client.ScheduleWorkflowAction{
				ID: workflows.RetentionWorkflowID, Workflow: workflows.Retention, Args: []any{workflows.RetentionInput{}}, TaskQueue: taskQueue,
			},
			// A purge still running covers the next one's work.
			Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			CatchupWindow: retentionCatchupWindow,
		},
		{
			ID:   workflows.GuardrailHealthScheduleID(taskQueue),
			Spec: hourlyAt(15, "guardrails and SRM of running experiments, analysed without publishing"),
			Action: &client.ScheduleWorkflowAction{
				ID: workflows.GuardrailHealthWorkflowID, Workflow: workflows.GuardrailHealth, Args: []any{workflows.GuardrailHealthInput{}}, TaskQueue: taskQueue,
			},
			// At most one health run at a time: a slow one makes the next
			// hour's skipped, which bounds the load it puts on the database.
			Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			CatchupWindow: healthCatchupWindow,
		},
		{
			ID: workflows.RedriveScheduleID(taskQueue),
			Spec: client.ScheduleSpec{
				Calendars: []client.ScheduleCalendarSpec{{
					Hour:    []client.ScheduleRange{{Start: 0, End: 23}},
					Minute:  []client.ScheduleRange{{Start: redriveFirstMinute, End: 59, Step: int(RedriveEvery / time.Minute)}},
					Second:  []client.ScheduleRange{{Start: 0}},
					Comment: "deliver announcements and lifecycle signals that committed changes still owe",
				}},
				TimeZoneName: "UTC",
			},
			Action: &client.ScheduleWorkflowAction{
				ID: workflows.RedriveWorkflowID, Workflow: workflows.Redrive, Args: []any{workflows.RedriveInput{}}, TaskQueue: taskQueue,
			},
			// One at a time: a run still going covers the next one's work.
			Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			CatchupWindow: redriveCatchupWindow,
		},
	}
}

// TriggerRedrive runs the reconcile now through its schedule (one at a
// time with the scheduled runs: skipped while one runs). Worker start
// calls it after EnsureSchedules.
func TriggerRedrive(ctx context.Context, c client.Client, taskQueue string) error {
	err := c.ScheduleClient().GetHandle(ctx, workflows.RedriveScheduleID(taskQueue)).Trigger(ctx, client.ScheduleTriggerOptions{
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	})
	if err != nil {
		return fmt.Errorf("trigger %s: %w", workflows.RedriveScheduleID(taskQueue), err)
	}
	return nil
}

func hourlyAt(minute int, comment string) client.ScheduleSpec {
	return client.ScheduleSpec{
		Calendars: []client.ScheduleCalendarSpec{{
			Hour: []client.ScheduleRange{{Start: 0, End: 23}}, Minute: []client.ScheduleRange{{Start: minute}},
			Second: []client.ScheduleRange{{Start: 0}}, Comment: comment,
		}},
		TimeZoneName: "UTC",
	}
}

func dailyAt(hour, minute int, comment string) client.ScheduleSpec {
	return client.ScheduleSpec{
		Calendars: []client.ScheduleCalendarSpec{{
			Hour: []client.ScheduleRange{{Start: hour}}, Minute: []client.ScheduleRange{{Start: minute}},
			Second: []client.ScheduleRange{{Start: 0}}, Comment: comment,
		}},
		TimeZoneName: "UTC",
	}
}

// EnsureSchedules creates expd's schedules, or updates them in place when
// they exist, so every worker start leaves exactly one of each with the
// current spec, action and policies. Call it at worker start.
func EnsureSchedules(ctx context.Context, c client.Client, taskQueue string) error {
	for _, opts := range Schedules(taskQueue) {
		if err := ensureSchedule(ctx, c, opts); err != nil {
			return err
		}
	}
	return nil
}

func ensureSchedule(ctx context.Context, c client.Client, opts client.ScheduleOptions) error {
	_, err := c.ScheduleClient().Create(ctx, opts)
	if err == nil {
		return nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("create schedule %s: %w", opts.ID, err)
	}
	err = c.ScheduleClient().GetHandle(ctx, opts.ID).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			s := in.Description.Schedule
			spec := opts.Spec
			s.Spec, s.Action = &spec, opts.Action
			s.Policy = &client.SchedulePolicies{Overlap: opts.Overlap, CatchupWindow: opts.CatchupWindow, PauseOnFailure: opts.PauseOnFailure}
			return &client.ScheduleUpdate{Schedule: &s}, nil
		},
	})
	if err != nil {
		return fmt.Errorf("update schedule %s: %w", opts.ID, err)
	}
	return nil
}
