package dashboard

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/results"
)

// maxLifecycleEvents bounds the timeline: the newest entries of the
// experiment's audit log.
const maxLifecycleEvents = 50

// lifecycleEvent is one line of the results page's lifecycle timeline.
type lifecycleEvent struct {
	At    time.Time
	What  string // created, weights changed, started, ...
	Text  string // what it changed, in words
	Actor string
	Alert bool // a guardrail breach or a failed traffic check
}

// lifecycleEvents reads the experiment's lifecycle from its audit log
// (the one record of who changed what and when; docs/lifecycle.md):
// creation, weight changes, start, stop, ship, guardrail breaches and
// failed traffic checks, oldest first. Edits that leave the weights as they
// were are one line each too, since they start a new config version.
// more tells that older entries were left out.
func lifecycleEvents(ctx context.Context, db *gorm.DB, orgID, experimentID string) (events []lifecycleEvent, more bool, err error) {
	page, err := audit.List(ctx, db, orgID, audit.Query{ExperimentID: experimentID, Limit: maxLifecycleEvents})
	if err != nil {
		return nil, false, err
	}
	out := make([]lifecycleEvent, 0, len(page.Entries))
	for _, e := range slices.Backward(page.Entries) {
		out = append(out, eventOf(e))
	}
	return out, page.Next != "", nil
}

func eventOf(e audit.View) lifecycleEvent {
	ev := lifecycleEvent{At: e.At, Actor: e.Actor, Text: e.Summary}
	if e.Actor == audit.SystemActor {
		ev.Actor = "expd"
	}
	var before, after experiments.Summary
	_ = json.Unmarshal(e.Before, &before) // an entry without states is shown by its summary
	_ = json.Unmarshal(e.After, &after)
	switch e.Action {
	case audit.ExperimentCreated:
		ev.What, ev.Text = "created", "version 1, traffic "+splitWords(after.Allocation)
	case audit.ExperimentUpdated:
		ev.What = "edited"
		ev.Text = "version " + strconv.Itoa(after.Version)
		if len(before.Allocation) > 0 && splitWords(before.Allocation) != splitWords(after.Allocation) {
			ev.What = "weights changed"
			ev.Text += ": " + splitWords(before.Allocation) + " → " + splitWords(after.Allocation)
		}
	case audit.ExperimentScheduled:
		ev.What = "scheduled"
	case audit.ExperimentStarted:
		ev.What = "started"
	case audit.ExperimentStopped:
		ev.What = "stopped"
	case audit.ExperimentShipped:
		ev.What = "shipped"
		if after.ShippedVariant != "" {
			ev.What += " " + after.ShippedVariant
		}
	case audit.GuardrailBreached:
		ev.What, ev.Alert = "guardrail breached", true
	case audit.SRMFailed:
		ev.What, ev.Alert = "sample ratio mismatch", true
	default:
		ev.What = strings.TrimPrefix(e.Action, "experiment.")
	}
	return ev
}

// splitWords is an allocation as computed shares: "control 50%, b 50%".
func splitWords(alloc []bucketing.Slice) string {
	var parts []string
	for _, s := range shares(alloc) {
		parts = append(parts, s.Variant+" "+s.Share)
	}
	return strings.Join(parts, ", ")
}

// phaseRow is one phase of a run's window as the results page lists it
// (docs/results.md, "Phases"): an allocation change starts a phase.
type phaseRow struct {
	Number     int
	Start, End time.Time
	Version    int
	Split      string // the phase's computed shares
	Observed   string // users first exposed in it, by variant (several phases only)
	Settling   int64
	SRM        string // its sample-ratio test, adjusted over the phases
	Failed     bool
}

// phasesOf lists the run's phases: the experiment's allocation phases
// over the run's window from experiments.Store.Phases (what the results
// route lists as phases), with each phase's SRM test when the run made
// one per phase.
func phasesOf(phases []experiments.Phase, srm results.SRMSummary) []phaseRow {
	tests := map[int]results.PhaseSRM{}
	failed := map[int]bool{}
	if srm.SRMPhases != nil {
		for _, t := range srm.Phases {
			tests[t.Phase] = t
		}
		for _, n := range srm.FailedPhases {
			failed[n] = true
		}
	}
	out := make([]phaseRow, len(phases))
	for i, p := range phases {
		row := phaseRow{Number: p.Number, Start: p.Start, End: p.End, Version: p.Version, Split: splitWords(p.Allocation), Failed: failed[p.Number]}
		if t, ok := tests[p.Number]; ok {
			var parts []string
			for _, s := range p.Allocation {
				parts = append(parts, s.Variant+" "+fmtInt(t.Observed[s.Variant]))
			}
			row.Observed, row.Settling = strings.Join(parts, ", "), t.Settling
			row.SRM = "p " + fmtP(t.PValue)
			if t.PAdjusted != nil {
				row.SRM += ", adjusted " + fmtP(*t.PAdjusted)
			}
		}
		out[i] = row
	}
	return out
}
