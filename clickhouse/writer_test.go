package clickhouse_test

import (
	"testing"
	"time"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/vocab"
)

// The group-commit writer on the cluster stores events in ClickHouse and
// pins and usage in the control database; a batch whose events reached
// ClickHouse while the control transaction failed (simulated: stored
// through the store alone) is reconciled by the retry: duplicates, and
// the pins made, the usage not counted twice.
func TestEngineWriterReconcilesAHalfFailedWrite(t *testing.T) {
	s := clickhousetest.Store(t, true)
	db := testenv.DB(t)
	ctx := t.Context()
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	exp := resultstest.Experiment(t, db, org.ID, resultstest.Config("writer"))
	w := ingest.NewEngineWriter(db, s, ingest.Options{})
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	exposure := func(id, user, variant string) ingest.EventRow {
		return ingest.EventRow{OrgID: org.ID, EventID: id, Type: vocab.TypeExposure, ExperimentID: exp.ID, UserID: user,
			Variant: variant, Ts: at, ReceivedAt: at, Source: ingest.SourceAPI}
	}
	arms := resultstest.Arms
	half := []ingest.EventRow{exposure("h-1", "half", arms[1])}
	if n, err := s.Insert(ctx, half); err != nil || n != 1 {
		t.Fatalf("Insert = %d, %v", n, err)
	}
	tenant := ingest.Tenant{OrgID: org.ID, Plan: plans.Business}
	out, err := w.Write(ctx, ingest.Batch{Tenant: tenant, Rows: half})
	if err != nil || out.Accepted != 0 || out.Duplicates != 1 {
		t.Fatalf("the retry of a half-failed write: %+v, %v; want 1 duplicate", out, err)
	}
	if v, err := assignments.Pinned(ctx, db, exp.ID, "half"); err != nil || v != arms[1] {
		t.Errorf("pin of the half-failed write's user: %q, %v; want %q", v, err, arms[1])
	}
	fresh := []ingest.EventRow{exposure("f-1", "fresh", arms[0]), exposure("f-2", "fresh2", arms[1]), exposure("f-1", "fresh", arms[0])}
	out, err = w.Write(ctx, ingest.Batch{Tenant: tenant, Rows: fresh})
	if err != nil || out.Accepted != 2 || out.Duplicates != 1 {
		t.Fatalf("Write = %+v, %v; want 2 accepted, 1 duplicate", out, err)
	}
	if out, err := w.Write(ctx, ingest.Batch{Tenant: tenant, Rows: fresh}); err != nil || out.Accepted != 0 {
		t.Fatalf("Write again = %+v, %v; want nothing accepted", out, err)
	}
	if used, err := ingest.MonthlyUsage(ctx, db, org.ID, time.Now()); err != nil || used != 2 {
		t.Errorf("usage %d, %v; want 2 (the half-failed write's event is not counted)", used, err)
	}
	if v, err := assignments.Pinned(ctx, db, exp.ID, "fresh2"); err != nil || v != arms[1] {
		t.Errorf("pin of fresh2: %q, %v; want %q", v, err, arms[1])
	}
	read, err := s.Read(ctx, ingest.ReadFilter{OrgID: org.ID, ExperimentID: exp.ID, Limit: 10})
	if err != nil || len(read) != 3 {
		t.Fatalf("Read = %d events, %v; want 3", len(read), err)
	}
	perShard, err := s.CountPerShard(ctx, org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(perShard) != 2 || perShard[0]+perShard[1] != 3 {
		t.Errorf("events per shard %v; want 3 over 2 shards", perShard)
	}
}
