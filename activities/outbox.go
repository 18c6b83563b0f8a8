package activities

import (
	"context"
	"time"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/webhooks"
)

// The periodic reconcile's database side (workflows.Redrive): what
// changes owe Temporal and were not delivered after their commit.

// PendingAnnouncementsInput pages the outbox's pending events.
type PendingAnnouncementsInput struct {
	After webhooks.QueueCursor // zero: from the oldest
	Limit int
}

// PendingAnnouncementsResult is one page, oldest first; Next is the zero
// cursor on the last page.
type PendingAnnouncementsResult struct {
	Events []webhooks.Event
	Next   webhooks.QueueCursor
}

// ListPendingAnnouncements returns one page of the events queued in the
// outbox whose delivery was not started yet.
func (a *Activities) ListPendingAnnouncements(ctx context.Context, in PendingAnnouncementsInput) (PendingAnnouncementsResult, error) {
	evs, last, err := webhooks.Pending(ctx, a.DB, in.After, in.Limit)
	if err != nil {
		return PendingAnnouncementsResult{}, err
	}
	out := PendingAnnouncementsResult{Events: evs}
	if len(evs) == in.Limit {
		out.Next = last
	}
	return out, nil
}

// MarkAnnouncedInput names the events whose delivery was started (or
// found started).
type MarkAnnouncedInput struct {
	EventIDs []string
}

// MarkAnnouncedResult is empty.
type MarkAnnouncedResult struct{}

// MarkAnnounced marks outbox events sent.
func (a *Activities) MarkAnnounced(ctx context.Context, in MarkAnnouncedInput) (MarkAnnouncedResult, error) {
	return MarkAnnouncedResult{}, webhooks.MarkSent(ctx, a.DB, in.EventIDs, a.now())
}

// PurgeAnnouncedInput is the cutoff of a purge of sent outbox rows.
type PurgeAnnouncedInput struct {
	SentBefore time.Time
}

// PurgeAnnouncedResult counts the rows deleted.
type PurgeAnnouncedResult struct {
	Deleted int64
}

// PurgeAnnounced deletes the outbox rows sent before the cutoff.
func (a *Activities) PurgeAnnounced(ctx context.Context, in PurgeAnnouncedInput) (PurgeAnnouncedResult, error) {
	n, err := webhooks.PurgeSent(ctx, a.DB, in.SentBefore)
	return PurgeAnnouncedResult{Deleted: n}, err
}

// OwedSignal is an experiment whose lifecycle workflow is owed a signal,
// at the version that owes it.
type OwedSignal struct {
	OrgID   string
	ID      string
	Version int
}

// OwedSignalsInput pages the experiments owed a lifecycle signal.
type OwedSignalsInput struct {
	AfterID string // "": from the start
	Limit   int
}

// OwedSignalsResult is one page by id; Next is "" on the last page.
type OwedSignalsResult struct {
	Experiments []OwedSignal
	Next        string
}

// ListOwedSignals returns one page of the experiments whose lifecycle
// workflow is owed a signal (a change left it a step to arm and its
// signal was not delivered).
func (a *Activities) ListOwedSignals(ctx context.Context, in OwedSignalsInput) (OwedSignalsResult, error) {
	refs, err := experiments.Store{DB: a.DB}.ListSignalOwed(ctx, in.AfterID, in.Limit)
	if err != nil {
		return OwedSignalsResult{}, err
	}
	var out OwedSignalsResult
	for _, r := range refs {
		out.Experiments = append(out.Experiments, OwedSignal{OrgID: r.OrgID, ID: r.ID, Version: r.Version})
	}
	if len(refs) == in.Limit {
		out.Next = refs[len(refs)-1].ID
	}
	return out, nil
}

// SignalsSentInput names the experiments whose workflow was signalled
// (or started), each at the version it was owed at.
type SignalsSentInput struct {
	Experiments []OwedSignal
}

// SignalsSentResult is empty.
type SignalsSentResult struct{}

// MarkSignalsSent clears the debts that were paid; a debt a later change
// renewed (a higher version) stays.
func (a *Activities) MarkSignalsSent(ctx context.Context, in SignalsSentInput) (SignalsSentResult, error) {
	store := experiments.Store{DB: a.DB}
	for _, e := range in.Experiments {
		if err := store.SignalSent(ctx, e.OrgID, e.ID, e.Version); err != nil {
			return SignalsSentResult{}, err
		}
	}
	return SignalsSentResult{}, nil
}
