// Package usecases is what the API's routes and the dashboard's pages both
// do beyond a plain read: save an experiment, change its lifecycle, start
// a manual results run and tell its state, rotate an API key, review a
// model call. Each use
// case is one function that makes the change and then what the change
// sets off (the instance's config cache expired, the queued announcement
// delivered, the lifecycle workflow signalled), so a page and a route
// cannot drift apart.
package usecases

import (
	"context"
	"log/slog"

	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/sdkcache"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/workflowclient"
)

// Service runs the use cases over one database, one Temporal connection
// (Workflows; a nil Client: every start fails with
// workflowclient.ErrNotConnected and what a change owes Temporal is left to
// the reconcile) and the instance's SDK cache.
type Service struct {
	DB        *gorm.DB
	Workflows workflowclient.Starter
	SDK       *sdkcache.Cache
	Ingest    ingest.Sources // the write path of records (ReviewCall)
	Logger    *slog.Logger
	// Secrets (EXPD_SECRETS_KEY) seals the orgs' hash keys (SetPrivacy).
	Secrets *secrets.Keyring
	// KeyRotated, when set, hears of every key a rotation issues, after it
	// is live (expd dev keeps its credentials file current with it).
	KeyRotated func(ctx context.Context, orgID string, key RotatedKey)
	// RecentUsers, when set, counts the org's recent traffic (distinct
	// exposed users, power.Reader.RecentUsers): a new experiment that sets
	// neither N* input expects that many users (CreateExperiment).
	RecentUsers func(ctx context.Context, orgID string) (int64, error)
}

func (s Service) experiments() experiments.Store { return experiments.Store{DB: s.DB} }
