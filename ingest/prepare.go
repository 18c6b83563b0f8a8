package ingest

import (
	"slices"
	"strings"
	"time"

	"github.com/expd/expd/privacy"
	"github.com/expd/expd/telemetry"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

// Sources of stored events (the events.source column).
const (
	SourceAPI     = "api"
	SourceImport  = "import"
	SourceWebhook = "webhook"
)

// Rejection is one event refused by validation; the rest of its batch is
// still stored.
type Rejection struct {
	Index   int    `json:"index"`
	EventID string `json:"event_id"`
	Reason  string `json:"reason"`
}

// Lookup resolves experiment refs of the preparing org (see
// LookupExperiments).
type Lookup func(refs []string) (Refs, error)

// HoldoutLookup tells which of ids are holdouts of the preparing org
// (holdouts.Store.Known).
type HoldoutLookup func(ids []string) (map[string]bool, error)

// Preparer turns wire events of one org into rows to store.
type Preparer struct {
	OrgID  string
	Window Window
	Source string
	Lookup Lookup
	// Holdouts resolves the refs of exposures that name no experiment: an
	// exposure of a holdout records a user's membership in it
	// (docs/targeting.md, "Holdout exposures"). Nil: none resolve. Only
	// exposures may name a holdout; any other event naming one is refused
	// as naming no experiment.
	Holdouts HoldoutLookup
	// Privacy rewrites each model call's texts under the payload policy
	// in force before anything is stored; the zero value stores them as
	// sent.
	Privacy Privacy
}

// Privacy is the payload policy of the preparing org (docs/privacy.md).
type Privacy struct {
	Payload *privacy.Payload
	// Experiment returns an experiment's stricter policy ("" for none);
	// nil: none has one.
	Experiment func(experimentID string) privacy.Policy
}

// apply rewrites r's texts under the policy in force for its experiment.
func (pr Privacy) apply(r *EventRow) {
	if r.Type != vocab.TypeModelCall {
		return
	}
	var exp privacy.Policy
	if pr.Experiment != nil {
		exp = pr.Experiment(r.ExperimentID)
	}
	pr.Payload.Apply(exp, &r.ModelCall)
}

// Prepared is a batch after validation: the rows to store and the events
// refused, in input order.
type Prepared struct {
	Rows     []EventRow
	Rejected []Rejection
}

type checked struct {
	index int
	ev    *Event
	ts    time.Time
}

// Prepare validates raw events (JSON objects) and resolves their
// experiments. A Rejection's Index is the event's position in raws. Only
// a failing lookup is an error; everything wrong with an event is a
// Rejection.
func (p Preparer) Prepare(raws [][]byte) (Prepared, error) {
	return p.prepare(DecodeEach(raws))
}

// DecodeEach decodes each raw event on its own (Decode); errs[i] is the
// error of event i.
func DecodeEach(raws [][]byte) (evs []Event, errs []error) {
	evs, errs = make([]Event, len(raws)), make([]error, len(raws))
	for i, raw := range raws {
		evs[i], errs[i] = Decode(raw)
	}
	return evs, errs
}

// PrepareEvents is Prepare for events decoded already.
func (p Preparer) PrepareEvents(evs []Event) (Prepared, error) {
	return p.prepare(evs, make([]error, len(evs)))
}

// prepare checks evs, except those whose decoding failed (errs[i]; errs
// nil: none did), and counts the rejected ones.
func (p Preparer) prepare(evs []Event, errs []error) (Prepared, error) {
	if errs == nil {
		errs = make([]error, len(evs))
	}
	out, err := p.check(evs, errs)
	telemetry.IngestEvents.WithLabelValues(telemetry.Rejected).Add(float64(len(out.Rejected)))
	return out, err
}

func (p Preparer) check(evs []Event, errs []error) (Prepared, error) {
	var out Prepared
	good := make([]checked, 0, len(evs))
	refSet := make(map[string]bool)
	for i := range evs {
		ev, err := &evs[i], errs[i]
		var ts time.Time
		if err == nil {
			ts, err = ev.Check(p.Window)
		}
		if err != nil {
			out.Rejected = append(out.Rejected, Rejection{Index: i, EventID: ev.EventID, Reason: reason(err)})
			continue
		}
		good = append(good, checked{index: i, ev: ev, ts: ts})
		refSet[ev.ExperimentID] = true
	}
	if len(good) == 0 {
		return out, nil
	}
	refs := make([]string, 0, len(refSet))
	for r := range refSet {
		refs = append(refs, r)
	}
	known, err := p.Lookup(refs)
	if err != nil {
		return Prepared{}, err
	}
	holdouts, err := p.holdoutRefs(good, known)
	if err != nil {
		return Prepared{}, err
	}
	out.Rows = make([]EventRow, 0, len(good))
	for _, c := range good {
		expID, ok := known[c.ev.ExperimentID]
		if !ok && c.ev.Type == vocab.TypeExposure && holdouts[c.ev.ExperimentID] {
			expID, ok = c.ev.ExperimentID, true
		}
		if !ok {
			out.Rejected = append(out.Rejected, Rejection{Index: c.index, EventID: c.ev.EventID,
				Reason: "experiment_id: no experiment with this id or name in your org"})
			continue
		}
		r := c.ev.row(p.OrgID, expID, c.ts, p.Source)
		p.Privacy.apply(&r)
		out.Rows = append(out.Rows, r)
	}
	// Unknown experiments are found after validation; keep input order.
	slices.SortFunc(out.Rejected, func(a, b Rejection) int { return a.Index - b.Index })
	return out, nil
}

// holdoutRefs resolves the holdouts named by exposures among good that
// name no experiment (by id only: names are the experiments').
func (p Preparer) holdoutRefs(good []checked, known Refs) (map[string]bool, error) {
	if p.Holdouts == nil {
		return nil, nil
	}
	seen := make(map[string]bool)
	var ids []string
	for _, c := range good {
		ref := c.ev.ExperimentID
		if _, ok := known[ref]; !ok && c.ev.Type == vocab.TypeExposure && !seen[ref] {
			seen[ref] = true
			ids = append(ids, ref)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return p.Holdouts(ids)
}

// row is the stored form of a checked event.
func (e *Event) row(orgID, experimentID string, ts time.Time, source string) EventRow {
	r := EventRow{
		OrgID: orgID, EventID: e.EventID, Type: e.Type, ExperimentID: experimentID, UserID: e.UserID,
		Ts: ts, ConfigVersion: e.ConfigVersion, Source: source,
	}
	if e.Variant != nil {
		r.Variant = *e.Variant
	}
	switch e.Type {
	case vocab.TypeModelCall:
		r.ModelCall = e.ModelCall
		// The total_tokens metric reads one column; fill it as the SDK does.
		if r.TotalTokens == nil && r.InputTokens != nil {
			total := *r.InputTokens
			if r.OutputTokens != nil {
				total += *r.OutputTokens
			}
			r.TotalTokens = &total
		}
	case vocab.TypeBusinessEvent:
		r.BusinessMetric, r.Value = e.BusinessMetric, e.Value
		// A business event without a value counts one occurrence.
		if r.Value == nil {
			one := 1.0
			r.Value = &one
		}
	}
	return r
}

// reason is the one-line text of a rejection: "field: why; field: why".
func reason(err error) string {
	fields := validate.Fields(err)
	if fields == nil {
		return err.Error()
	}
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Field + ": " + f.Reason
	}
	return strings.Join(parts, "; ")
}
