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

// Sticky returns the variant of a user in a running experiment: it
// honours the user's pin and pins computed (the variant every client
// computes from the config) on first assignment. A pin to a variant that
// the current allocation no longer has is kept for analysis, but the user
// then gets the computed answer (allocated tells which variants it has).
func Sticky(ctx context.Context, db *gorm.DB, pins PinCache, orgID, experimentID, userID, computed string, allocated func(variant string) bool) (string, error) {
	pin := pins.Get(experimentID, userID)
	if pin == "" {
		var err error
		if pin, err = pinOnce(ctx, db, orgID, experimentID, userID, computed); err != nil {
			return "", err
		}
		pins.Put(experimentID, userID, pin)
	}
	if allocated(pin) {
		return pin, nil
	}
	return computed, nil
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
