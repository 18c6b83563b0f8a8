package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
)

// A full ingest spool (INGEST_SPOOL_MAX_BYTES) refuses POST /v1/events
// with 503 storage_unavailable and a Retry-After, acknowledging nothing of
// the batch; once the spool has shipped, the same batch is accepted, and
// every acknowledged event is on the cluster.
func TestEventsRefusedWhileTheSpoolIsFull(t *testing.T) {
	s := clickhousetest.Store(t, true)
	// A bound of 1 byte: the first entry always fits, the next not.
	sp, err := ingest.OpenSpool(t.TempDir(), s, ingest.SpoolOptions{MaxBytes: 1, ShipLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close(context.Background()) })
	f := newIngestFixture(t, func(d *api.Deps) {
		d.Ingest, d.Events, d.Aggregator = ingest.NewEngineWriter(d.DB, sp, ingest.Options{}), s, s
	})
	batch := func(round int) []map[string]any {
		out := make([]map[string]any, 10)
		for i := range out {
			out[i] = exposure("exp", fmt.Sprintf("u-%d-%d", round, i), "control", time.Now())
		}
		return out
	}
	first, second := batch(1), batch(2)
	if a := accepted(t, postEvents(t, f.env, f.org.PublishableKey, first...)); a.Accepted != len(first) {
		t.Fatalf("first batch: accepted %d of %d", a.Accepted, len(first))
	}
	r := postEvents(t, f.env, f.org.PublishableKey, second...)
	p := testenv.ExpectProblem(t, r, http.StatusServiceUnavailable)
	if after, err := strconv.Atoi(r.Header.Get("Retry-After")); p.Code != "storage_unavailable" || err != nil || after < 1 {
		t.Fatalf("spool full: problem %+v, Retry-After %q; want storage_unavailable and a number of seconds", p, r.Header.Get("Retry-After"))
	}
	if sp.Backlog() != len(first) {
		t.Fatalf("backlog %d rows after the refusal; want the first batch's %d alone", sp.Backlog(), len(first))
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := sp.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if a := accepted(t, postEvents(t, f.env, f.org.PublishableKey, second...)); a.Accepted != len(second) {
		t.Fatalf("the refused batch once the spool shipped: accepted %d of %d", a.Accepted, len(second))
	}
	if err := sp.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range append(first, second...) {
		ids = append(ids, e["event_id"].(string))
	}
	if have, err := s.Existing(ctx, f.org.ID, ids); err != nil || len(have) != len(ids) {
		t.Errorf("events on the cluster: %d of %d, %v", len(have), len(ids), err)
	}
}
