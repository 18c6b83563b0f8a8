package clickhouse

import (
	"context"

	"github.com/expd/expd/ingest"
)

// WriteRaced stores rows without the claim probe, as two writes of the
// same ids in flight at once do (docs/scale.md, "Dedup"): copies beside
// the stored events, which every read must count once.
func (s *Store) WriteRaced(ctx context.Context, rows []ingest.EventRow) error {
	return s.write(ctx, rows)
}
