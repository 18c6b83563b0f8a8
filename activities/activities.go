// Package activities holds every Temporal activity of expd as a method of
// one Activities struct that carries the dependencies (database, billing
// adapter, clock). Activities are idempotent: unique keys and upserts make
// a retried or replayed activity change nothing twice. Each takes one input
// struct and returns one result struct, one file per domain.
package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"gorm.io/gorm"

	"github.com/expd/expd/billing"
	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/results"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/webhooks"
)

// Activities carries the dependencies of all activities. No globals.
type Activities struct {
	DB      *gorm.DB
	Now     func() time.Time
	Billing *billing.Client // Stripe adapter; nil or unconfigured: events are applied from their payload
	// Webhooks sends outbound webhook deliveries; nil: a Sender that
	// reaches public addresses only.
	Webhooks *webhooks.Sender
	// Aggregator reads results' samples and coverage from the events;
	// nil: results.SQL over DB.
	Aggregator results.Aggregator
	// Events is the events store the retention purge deletes from; nil:
	// ingest.SQLEvents over DB.
	Events ingest.EventStore
	// Secrets opens LLM judges' api keys (EXPD_SECRETS_KEY); Judge calls
	// them (nil: public addresses only); Ingest writes evaluators' scores
	// (nil: one group-commit writer per database).
	Secrets *secrets.Keyring
	Judge   *evaluators.Judge
	Ingest  *ingest.Writer
}

func (a *Activities) aggregator() results.Aggregator {
	if a.Aggregator != nil {
		return a.Aggregator
	}
	return results.SQL{DB: a.DB}
}

func (a *Activities) events() ingest.EventStore {
	if a.Events != nil {
		return a.Events
	}
	return ingest.SQLEvents{DB: a.DB}
}

// workflowID is the id of the workflow running the activity ("" outside
// one, as when a test calls the method directly).
func workflowID(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	return activity.GetInfo(ctx).WorkflowExecution.ID
}

func (a *Activities) now() time.Time {
	if a.Now != nil {
		return a.Now().UTC()
	}
	return time.Now().UTC()
}
