package results

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/phases"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/privacy"
)

// Planned is what a run of an experiment up to a window end analyses: its
// Design at Version, or Skip saying why there is nothing to analyse.
type Planned struct {
	Design  Design
	Version int
	Skip    string
}

// SkipNotCreated is the Skip of a run whose window ends before the
// experiment's first version.
const SkipNotCreated = "the experiment did not exist before the window's end"

// LoadDesign assembles what a run analyses: the experiment's config
// version that was live at windowEnd, its resolved metrics, the org's plan
// limits and the window. The same inputs give the same design, so every
// step of a run (and every retry) sees one experiment version.
//
// A shipped experiment is analysed up to its ship instant (exposures and
// events after it are not counted), at the version live before the ship.
func LoadDesign(ctx context.Context, db *gorm.DB, orgID, experimentID string, windowEnd time.Time) (Planned, error) {
	store := experiments.Store{DB: db}
	shipped, err := store.ShippedAt(ctx, orgID, experimentID)
	if err != nil && !errors.Is(err, experiments.ErrNotFound) {
		return Planned{}, err
	}
	if shipped != nil && shipped.Before(windowEnd) {
		windowEnd = *shipped
	}
	cfg, err := store.VersionAt(ctx, orgID, experimentID, windowEnd)
	switch {
	case errors.Is(err, experiments.ErrNotFound):
		return Planned{Skip: "experiment not found"}, nil
	case errors.Is(err, experiments.ErrNoVersionBefore):
		return Planned{Skip: SkipNotCreated}, nil
	case err != nil:
		return Planned{}, err
	}
	limits, retention, err := orgLimits(ctx, db, orgID)
	if err != nil {
		return Planned{}, err
	}
	resolved, err := metrics.Resolve(ctx, metrics.Store{DB: db}, orgID, cfg.Metrics)
	if err != nil {
		return Planned{}, err
	}
	d := Design{
		OrgID: orgID, ExperimentID: cfg.ID, Control: cfg.ControlVariant(), Allocation: cfg.Allocation,
		Metrics: resolved, Window: NewWindow(cfg.CreatedAt, windowEnd, retention), Limits: limits,
		Sequential: cfg.Sequential(),
	}
	if d.Phases, err = phases.Of(ctx, db, orgID, experimentID, d.Window.Start, d.Window.End); err != nil {
		return Planned{}, err
	}
	d.NStar, _ = cfg.NStar()
	return Planned{Version: cfg.Version, Design: d}, nil
}

// orgLimits are the org's plan limits and the retention in force (the
// shorter of the plan's and the org's own).
func orgLimits(ctx context.Context, db *gorm.DB, orgID string) (plans.Limit, int, error) {
	org, err := orgs.Get(ctx, db, orgID)
	if err != nil {
		return plans.Limit{}, 0, err
	}
	limits := plans.Get(plans.Name(org.Plan))
	retention, err := privacy.RetentionDays(ctx, db, orgID, limits.RetentionDays)
	return limits, retention, err
}
