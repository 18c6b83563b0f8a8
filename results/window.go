package results

import (
	"math"
	"time"
)

// Window is the span of events a run analyses: from the experiment's start
// to the run's end (exclusive), cut to the plan's retention.
type Window struct {
	Start              time.Time `json:"start"`
	End                time.Time `json:"end"`
	Days               int       `json:"days"`
	RetentionTruncated bool      `json:"retention_truncated"`
	// AllExperiments: an exposed user's events count whatever experiment
	// they name, not only the run's own: a holdout's run, whose exposures
	// name the holdout while the users' events name the experiments
	// (docs/targeting.md, "Holdout results").
	AllExperiments bool `json:"all_experiments,omitempty"`
}

// NewWindow builds the window of docs/architecture.md §6. Days counts started days,
// so 9 hours of data is a 1-day window; a run before the start is empty.
func NewWindow(experimentStart, end time.Time, retentionDays int) Window {
	w := Window{Start: experimentStart.UTC(), End: end.UTC()}
	if floor := w.End.AddDate(0, 0, -retentionDays); w.Start.Before(floor) {
		w.Start, w.RetentionTruncated = floor, true
	}
	if w.Start.After(w.End) {
		w.Start = w.End
	}
	w.Days = int(math.Ceil(w.End.Sub(w.Start).Hours() / 24))
	return w
}

// Empty tells whether the window holds no instant.
func (w Window) Empty() bool { return !w.Start.Before(w.End) }
