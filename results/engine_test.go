package results_test

import (
	"testing"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/enginetest"
)

// The SQL engine, on SQLite or (DATABASE_URL) PostgreSQL, passes the
// conformance suite every analytics engine must pass.
func TestSQLEngineConformance(t *testing.T) {
	db := testenv.DB(t)
	enginetest.Run(t, db, func(*testing.T) enginetest.Engine {
		return enginetest.Engine{Events: ingest.SQLEvents{DB: db}, Aggregator: results.SQL{DB: db}}
	})
}
