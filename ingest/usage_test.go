package ingest_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/expd/expd/database"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
)

// Concurrent groups of an org without an allowance count in their slots'
// rows (PostgreSQL), those of an org with one in slot 0 only, where its
// allowance check locks; the month's usage is every stored event either way.
func TestUsageCountsEveryStoredEventAcrossSlots(t *testing.T) {
	db := testenv.DB(t)
	ctx := t.Context()
	unlimited := ingest.Tenant{OrgID: testenv.NewOrg(t, db, testenv.Signer(t)).ID, Plan: plans.Enterprise}
	capped := ingest.Tenant{OrgID: testenv.NewOrg(t, db, testenv.Signer(t)).ID, Plan: plans.Free}
	w := ingest.NewWriter(db, ingest.Options{})
	now := time.Now().UTC()
	const writers, batches, size = 8, 5, 20
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				for _, tenant := range []ingest.Tenant{unlimited, capped} {
					rows := make([]ingest.EventRow, size)
					for i := range rows {
						rows[i] = event(tenant.OrgID, fmt.Sprintf("g%d-b%d-%d", g, b, i), now)
					}
					if _, err := w.Write(ctx, ingest.Batch{Tenant: tenant, Rows: rows}); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, tenant := range []ingest.Tenant{unlimited, capped} {
		if used, err := ingest.MonthlyUsage(ctx, db, tenant.OrgID, now); err != nil || used != writers*batches*size {
			t.Errorf("%s org: usage %d (%v), want %d", tenant.Plan, used, err, writers*batches*size)
		}
	}
	if !database.IsPostgres(db) {
		return
	}
	var slots []int
	if err := db.Raw(`SELECT DISTINCT slot FROM event_usage WHERE org_id = ?`, capped.OrgID).Scan(&slots).Error; err != nil {
		t.Fatal(err)
	}
	if len(slots) != 1 || slots[0] != 0 {
		t.Errorf("org with an allowance counted in slots %v, want only slot 0", slots)
	}
}
