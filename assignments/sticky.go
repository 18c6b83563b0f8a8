package assignments

import (
	"context"

	"gorm.io/gorm"
)

// PinCache is an instance's in-memory cache in front of the pins table
// (sdkcache.Pins).
type PinCache interface {
	Get(experimentID, userID string) string
	Put(experimentID, userID, variant string)
}

// ReadPin returns the user's stored pin, "" when none, recording nothing.
func ReadPin(ctx context.Context, db *gorm.DB, pins PinCache, experimentID, userID string) (string, error) {
	if pin := pins.Get(experimentID, userID); pin != "" {
		return pin, nil
	}
	pin, err := Pinned(ctx, db, experimentID, userID)
	if err != nil || pin == "" {
		return "", err
	}
	pins.Put(experimentID, userID, pin)
	return pin, nil
}

// StoredPin returns the user's stored pin in a running experiment,
// recording first (the variant every client computes from the config) when
// there is none. The pin decides through bucketing.Evaluate.
func StoredPin(ctx context.Context, db *gorm.DB, pins PinCache, orgID, experimentID, userID, first string) (string, error) {
	pin := pins.Get(experimentID, userID)
	if pin != "" {
		return pin, nil
	}
	pin, err := pinOnce(ctx, db, orgID, experimentID, userID, first)
	if err != nil {
		return "", err
	}
	pins.Put(experimentID, userID, pin)
	return pin, nil
}

// pinOnce returns the user's stored pin, recording variant first when
// there is none. The first pin ever recorded wins, so after recording it
// is read back: an exposure or another instance may have pinned the user
// first.
func pinOnce(ctx context.Context, db *gorm.DB, orgID, experimentID, userID, variant string) (string, error) {
	pinned, err := Pinned(ctx, db, experimentID, userID)
	if err != nil || pinned != "" {
		return pinned, err
	}
	err = PinFirst(ctx, db, []Pin{{OrgID: orgID, ExperimentID: experimentID, UserID: userID, Variant: variant, Source: SourceAssign}})
	if err != nil {
		return "", err
	}
	return Pinned(ctx, db, experimentID, userID)
}
