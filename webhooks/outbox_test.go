package webhooks_test

import (
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/webhooks"
)

// The outbox keeps one row per event id, lists pending rows oldest first
// page by page, marks rows sent once, and purges only rows sent before
// the cutoff; an event that cannot be delivered is refused at the door.
func TestOutboxQueuesOncePagesMarksAndPurges(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	ctx := t.Context()
	var ids []string
	for i, key := range []string{"a", "b", "c"} {
		ev, err := webhooks.NewEvent(org.ID, "exp-1", webhooks.EventExperimentStopped, time.Now(), map[string]int{"n": i}, "exp-1", key)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a retried action queues the same event again
			if err := webhooks.Enqueue(ctx, db, ev); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, ev.ID)
		time.Sleep(2 * time.Millisecond) // distinct created_at, so the order is the queueing order
	}
	if err := webhooks.Enqueue(ctx, db, webhooks.Event{ID: "evt_x", OrgID: org.ID, Type: "experiment.exploded"}); err == nil {
		t.Fatal("an unknown event type was queued")
	}

	first, cur, err := webhooks.Pending(ctx, db, webhooks.QueueCursor{}, 2)
	if err != nil || len(first) != 2 || first[0].ID != ids[0] || first[1].ID != ids[1] || string(first[0].Data) != `{"n":0}` {
		t.Fatalf("first page %+v (%v)", first, err)
	}
	rest, _, err := webhooks.Pending(ctx, db, cur, 2)
	if err != nil || len(rest) != 1 || rest[0].ID != ids[2] {
		t.Fatalf("second page %+v (%v)", rest, err)
	}

	sentAt := time.Now().Add(-8 * 24 * time.Hour)
	if err := webhooks.MarkSent(ctx, db, ids[:1], sentAt); err != nil {
		t.Fatal(err)
	}
	if err := webhooks.MarkSent(ctx, db, ids[:2], time.Now()); err != nil { // the first keeps its instant
		t.Fatal(err)
	}
	pending, _, err := webhooks.Pending(ctx, db, webhooks.QueueCursor{}, 10)
	if err != nil || len(pending) != 1 || pending[0].ID != ids[2] {
		t.Fatalf("pending after marking %+v (%v)", pending, err)
	}
	n, err := webhooks.PurgeSent(ctx, db, time.Now().Add(-webhooks.KeepSent))
	if err != nil || n != 1 {
		t.Fatalf("purged %d (%v), want the one sent 8 days ago", n, err)
	}
	left, err := webhooks.Queued(ctx, db, org.ID)
	if err != nil || len(left) != 2 || left[0].ID != ids[1] || left[0].SentAt == nil || left[1].SentAt != nil {
		t.Fatalf("left %+v (%v)", left, err)
	}
}
