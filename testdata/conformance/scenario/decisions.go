package scenario

import (
	"encoding/hex"
	"fmt"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/sdk/go/targeting"
)

// Decisions pin down bucketing.Evaluate (bucketing/doc.go, "Decision") for
// every client: each case is one user's decision in one experiment of one
// GET /v1/config body.
type Decisions struct {
	Configs []Config       `json:"configs"`
	Cases   []DecisionCase `json:"cases"`
}

// DecisionCase: local assignment of UserID, with Attributes, in the
// experiment named Experiment of Configs[Config] decides Variant,
// InExperiment and ReasonCode.
type DecisionCase struct {
	Config       int                  `json:"config"`
	Experiment   string               `json:"experiment"`
	UserID       string               `json:"user_id"`
	Attributes   map[string]any       `json:"attributes"`
	Variant      string               `json:"variant"`
	InExperiment bool                 `json:"in_experiment"`
	ReasonCode   bucketing.ReasonCode `json:"reason_code"`
	// HoldoutExposures is the user's side of each holdout whose step the
	// decision evaluates (the experiment runs, the user is not assigned):
	// what a client records once per (holdout, user) beside its exposures
	// (docs/targeting.md, "Holdout exposures").
	HoldoutExposures []HoldoutExposure `json:"holdout_exposures,omitempty"`
}

// HoldoutExposure is one exposure of a holdout: its id, and "holdout"
// (held out) or "exposed".
type HoldoutExposure struct {
	HoldoutID string `json:"holdout_id"`
	Variant   string `json:"variant"`
}

// holdoutExposures is the exposure of decisionHoldout due for user u when
// the decision evaluates its step, derived from Slot.Holds.
func holdoutExposures(evaluated bool, u string) []HoldoutExposure {
	if !evaluated {
		return nil
	}
	v := bucketing.HoldoutExposed
	if decisionHoldout.Holds(u) {
		v = bucketing.HoldoutHeld
	}
	return []HoldoutExposure{{HoldoutID: decisionHoldout.ID, Variant: v}}
}

const decisionBuckets = 1000

// decisionUsers are the users of the lifecycle cases: plain, non-ASCII and
// emoji ids.
var decisionUsers = []string{"user-0", "user-1", "user-2", "ユーザー", "naïve", "😀-7"}

// closedSpec is an experiment that is not running: everyone gets serves.
type closedSpec struct {
	id, name, status, reason, serves string
	code                             bucketing.ReasonCode
}

var closedSpecs = []closedSpec{
	{"5a1d0c3e-0001-4a7b-9c2d-3e4f5a6b7c01", "draft", "draft", "draft: not started yet", "control", bucketing.ReasonNotRunning},
	{"5a1d0c3e-0002-4a7b-9c2d-3e4f5a6b7c02", "scheduled", "scheduled", "scheduled: waiting for start_at", "control", bucketing.ReasonNotRunning},
	{"5a1d0c3e-0003-4a7b-9c2d-3e4f5a6b7c03", "stopped", "stopped", "guardrail latency_ms breached", "control", bucketing.ReasonNotRunning},
	{"5a1d0c3e-0004-4a7b-9c2d-3e4f5a6b7c04", "shipped", "shipped", "shipped: every user gets treatment", "treatment", bucketing.ReasonShipped},
}

// decisions builds the cases: one experiment per lifecycle status, a
// running one, and a three-arm one after a weight change whose sticky
// filters are tiny (2 bits per member) so that pins kept by a filter, pins
// kept by an exception, and unpinned users caught by a filter's false
// positive all occur. The expected answers are derived without Evaluate
// where they can be (the served variant, the pin, the map's variant), and
// Evaluate must agree with every case.
func decisions() (Decisions, error) {
	ds := Decisions{Configs: []Config{{ConfigVersion: 1}}}
	add := func(e Experiment, user string, variant string, code bucketing.ReasonCode) {
		ds.Cases = append(ds.Cases, DecisionCase{Experiment: e.Name, UserID: user, Attributes: map[string]any{}, Variant: variant,
			InExperiment: code == bucketing.ReasonPinned || code == bucketing.ReasonBucketed, ReasonCode: code})
	}
	for _, c := range closedSpecs {
		e := decisionExperiment(c.id, c.name, c.status, []bucketing.Slice{{Variant: c.serves, Weight: 100}},
			bucketing.Map{{Variant: c.serves, Start: 0, End: decisionBuckets}})
		e.Reason = c.reason
		ds.Configs[0].Experiments = append(ds.Configs[0].Experiments, e)
		for _, u := range decisionUsers {
			add(e, u, c.serves, c.code)
		}
	}

	running := specs[0]
	m, err := bucketing.InitialMap(running.before, decisionBuckets)
	if err != nil {
		return ds, err
	}
	e := decisionExperiment("5a1d0c3e-0005-4a7b-9c2d-3e4f5a6b7c05", "running", "running", running.before, m)
	ds.Configs[0].Experiments = append(ds.Configs[0].Experiments, e)
	for _, u := range decisionUsers {
		v, _ := m.Lookup(bucketing.Bucket(e.ID, e.Salt, u, decisionBuckets))
		add(e, u, v, bucketing.ReasonBucketed)
	}

	if err := addReweighted(&ds, add); err != nil {
		return ds, err
	}
	if err := addTargeted(&ds); err != nil {
		return ds, err
	}
	if err := addLayered(&ds); err != nil {
		return ds, err
	}
	return ds, checkDecisions(ds)
}

func decisionExperiment(id, name, status string, alloc []bucketing.Slice, m bucketing.Map) Experiment {
	return Experiment{ID: id, Name: name, Version: 1, Status: status, Salt: "decisions", BucketCount: decisionBuckets,
		Control: alloc[0].Variant, Allocation: alloc, BucketMap: m, Variants: map[string]map[string]any{}, Metrics: []any{}}
}

// addReweighted adds the three-arm experiment after its weight change and
// up to three users of each kind: pinned or not, kept off their bucket's
// variant or not, listed as an exception or not.
func addReweighted(ds *Decisions, add func(Experiment, string, string, bucketing.ReasonCode)) error {
	sp := specs[1]
	id := "5a1d0c3e-0006-4a7b-9c2d-3e4f5a6b7c06"
	before, after, err := sp.maps(decisionBuckets)
	if err != nil {
		return err
	}
	e := decisionExperiment(id, "reweighted", "running", sp.after, after)
	e.Version = 2
	const pinned, users = 300, 600
	pins := map[string]string{}
	var list []bucketing.PinnedUser
	for i := range pinned {
		u := fmt.Sprintf("pinned-%d", i)
		v, _ := before.Lookup(bucketing.Bucket(id, e.Salt, u, decisionBuckets))
		pins[u] = v
		list = append(list, bucketing.PinnedUser{UserID: u, Variant: v})
	}
	e.Sticky = bucketing.BuildStickySized(id, e.Salt, decisionBuckets, after, func(string) bool { return true }, list, 2)
	ds.Configs[0].Experiments = append(ds.Configs[0].Experiments, e)
	type kind struct{ pinned, kept, exception bool }
	taken := map[kind]int{}
	for i := range users {
		u := fmt.Sprintf("pinned-%d", i)
		if i >= pinned {
			u = fmt.Sprintf("fresh-%d", i)
		}
		d := bucketing.Digest(id, e.Salt, u)
		mapped, _ := after.Lookup(bucketing.BucketOfDigest(&d, decisionBuckets))
		variant, isPinned := pins[u]
		if !isPinned {
			variant = e.Sticky.Resolve(&d, mapped)
		}
		_, exception := e.Sticky.Exceptions[hex.EncodeToString(d[8:16])]
		k := kind{isPinned, variant != mapped, exception}
		if taken[k] == 3 {
			continue
		}
		taken[k]++
		code := bucketing.ReasonBucketed
		if k.kept {
			code = bucketing.ReasonPinned
		}
		add(e, u, variant, code)
	}
	for _, k := range []kind{{true, true, false}, {true, true, true}, {true, false, true}, {true, false, false}, {false, true, false}, {false, false, false}} {
		if taken[k] == 0 {
			return fmt.Errorf("decisions: no user of kind %+v; change the filter size", k)
		}
	}
	return nil
}

// proUsersInEurope is the targeting of the targeted cases.
var proUsersInEurope = map[string]any{"plan": "pro", "country": map[string]any{"$in": []any{"FR", "DE"}}}

// targetedAttributes: users who match, who do not, and who have no
// attributes at all.
var targetedAttributes = []struct {
	attrs map[string]any
	match bool
}{
	{map[string]any{"plan": "pro", "country": "FR"}, true},
	{map[string]any{"plan": "pro", "country": "DE", "age": 40.0}, true},
	{map[string]any{"plan": "free", "country": "FR"}, false},
	{map[string]any{"plan": "pro", "country": "US"}, false},
	{map[string]any{}, false},
}

// addTargeted adds a running targeted experiment, a stopped one (the
// lifecycle decides before targeting) and a targeted one after a weight
// change whose assigned filter (2 bits per member) keeps pinned users in
// whatever their attributes, and catches some unpinned ones by a false
// positive.
func addTargeted(ds *Decisions) error {
	alloc := []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}}
	m, err := bucketing.InitialMap(alloc, decisionBuckets)
	if err != nil {
		return err
	}
	running := decisionExperiment("5a1d0c3e-0007-4a7b-9c2d-3e4f5a6b7c07", "targeted", "running", alloc, m)
	running.Targeting = proUsersInEurope
	stopped := decisionExperiment("5a1d0c3e-0008-4a7b-9c2d-3e4f5a6b7c08", "targeted-stopped", "stopped", alloc,
		bucketing.Map{{Variant: "control", Start: 0, End: decisionBuckets}})
	stopped.Targeting, stopped.Reason = proUsersInEurope, "stopped"
	ds.Configs[0].Experiments = append(ds.Configs[0].Experiments, running, stopped)
	for i, u := range decisionUsers {
		a := targetedAttributes[i%len(targetedAttributes)]
		c := DecisionCase{Experiment: running.Name, UserID: u, Attributes: a.attrs, Variant: "control", ReasonCode: bucketing.ReasonNotTargeted}
		if a.match {
			c.Variant, _ = m.Lookup(bucketing.Bucket(running.ID, running.Salt, u, decisionBuckets))
			c.InExperiment, c.ReasonCode = true, bucketing.ReasonBucketed
		}
		ds.Cases = append(ds.Cases, c)
		ds.Cases = append(ds.Cases, DecisionCase{Experiment: stopped.Name, UserID: u, Attributes: a.attrs, Variant: "control", ReasonCode: bucketing.ReasonNotRunning})
	}

	sp := specs[0]
	id := "5a1d0c3e-0009-4a7b-9c2d-3e4f5a6b7c09"
	before, after, err := sp.maps(decisionBuckets)
	if err != nil {
		return err
	}
	e := decisionExperiment(id, "targeted-reweighted", "running", sp.after, after)
	e.Version, e.Targeting = 2, proUsersInEurope
	pins := map[string]string{}
	var list []bucketing.PinnedUser
	for i := range 100 {
		u := fmt.Sprintf("assigned-%d", i)
		v, _ := before.Lookup(bucketing.Bucket(id, e.Salt, u, decisionBuckets))
		pins[u] = v
		list = append(list, bucketing.PinnedUser{UserID: u, Variant: v})
	}
	e.Sticky = bucketing.BuildStickySized(id, e.Salt, decisionBuckets, after, func(string) bool { return true }, list, 2)
	if e.Sticky == nil {
		e.Sticky = &bucketing.Sticky{}
	}
	e.Sticky.Assigned = bucketing.BuildAssigned(id, e.Salt, list, 2)
	ds.Configs[0].Experiments = append(ds.Configs[0].Experiments, e)
	// Pinned users no longer matching stay in; fresh users are targeted,
	// except those the assigned filter holds by a false positive.
	type kind struct {
		pinned, match, in bool
	}
	taken := map[kind]int{}
	for i := range 400 {
		u := fmt.Sprintf("assigned-%d", i)
		if i >= 100 {
			u = fmt.Sprintf("newcomer-%d", i)
		}
		a := targetedAttributes[i%len(targetedAttributes)]
		d := bucketing.Digest(id, e.Salt, u)
		mapped, _ := after.Lookup(bucketing.BucketOfDigest(&d, decisionBuckets))
		variant, pinned := pins[u]
		in := pinned || a.match || e.Sticky.WasAssigned(&d)
		k := kind{pinned, a.match, in}
		if taken[k] == 3 {
			continue
		}
		taken[k]++
		c := DecisionCase{Experiment: e.Name, UserID: u, Attributes: a.attrs, Variant: "control", ReasonCode: bucketing.ReasonNotTargeted}
		if in {
			if !pinned {
				variant = e.Sticky.Resolve(&d, mapped)
			}
			c.Variant, c.InExperiment, c.ReasonCode = variant, true, bucketing.ReasonBucketed
			if variant != mapped {
				c.ReasonCode = bucketing.ReasonPinned
			}
		}
		ds.Cases = append(ds.Cases, c)
	}
	for _, k := range []kind{{true, false, true}, {true, true, true}, {false, true, true}, {false, false, false}, {false, false, true}} {
		if taken[k] == 0 {
			return fmt.Errorf("decisions: no targeted user of kind %+v; change the filter size", k)
		}
	}
	return nil
}

// checkDecisions refuses a file on which Evaluate disagrees with a case or
// that misses a reason reachable today.
func checkDecisions(ds Decisions) error {
	served := map[string]*bucketing.Served{}
	for _, e := range ds.Configs[0].Experiments {
		s := &bucketing.Served{ID: e.ID, Salt: e.Salt, BucketCount: e.BucketCount, BucketMap: e.BucketMap, Sticky: e.Sticky, Control: e.Control}
		if e.Status != "running" {
			s.Closed = bucketing.ReasonNotRunning
		}
		if e.Status == "shipped" {
			s.Closed = bucketing.ReasonShipped
		}
		s.Holdouts, s.Layer = e.Holdouts, e.Layer
		if e.Targeting != nil {
			cond, errs := targeting.Compile(e.Targeting)
			if len(errs) > 0 {
				return fmt.Errorf("decisions: targeting of %s: %v", e.Name, errs)
			}
			s.Targeting = cond
		}
		served[e.Name] = s
	}
	seen := map[bucketing.ReasonCode]bool{}
	seenHoldout := map[string]bool{}
	for _, c := range ds.Cases {
		got, err := bucketing.Evaluate(served[c.Experiment], c.UserID, c.Attributes, "")
		if err != nil || got.Variant != c.Variant || got.InExperiment != c.InExperiment || got.Reason != c.ReasonCode {
			return fmt.Errorf("decisions: %s %s: Evaluate = %+v, %v; want %+v", c.Experiment, c.UserID, got, err, c)
		}
		if len(got.Holdouts) != len(c.HoldoutExposures) {
			return fmt.Errorf("decisions: %s %s: Evaluate's holdouts %+v, want %+v", c.Experiment, c.UserID, got.Holdouts, c.HoldoutExposures)
		}
		for i, m := range got.Holdouts {
			if w := c.HoldoutExposures[i]; m.HoldoutID != w.HoldoutID || m.Variant != w.Variant {
				return fmt.Errorf("decisions: %s %s: Evaluate's holdouts %+v, want %+v", c.Experiment, c.UserID, got.Holdouts, c.HoldoutExposures)
			}
			seenHoldout[m.Variant] = true
		}
		seen[c.ReasonCode] = true
	}
	for _, code := range []bucketing.ReasonCode{bucketing.ReasonNotRunning, bucketing.ReasonShipped, bucketing.ReasonHoldout, bucketing.ReasonLayer,
		bucketing.ReasonNotTargeted, bucketing.ReasonPinned, bucketing.ReasonBucketed} {
		if !seen[code] {
			return fmt.Errorf("decisions: no case of %s", code)
		}
	}
	if !seenHoldout[bucketing.HoldoutHeld] || !seenHoldout[bucketing.HoldoutExposed] {
		return fmt.Errorf("decisions: holdout exposures of both sides needed, got %v", seenHoldout)
	}
	return nil
}

// The layer and holdout of the layered cases: two experiments split the
// layer at 40 %, the holdout holds out 20 %.
var (
	decisionLayer   = bucketing.Slot{ID: "5a1d0c3e-00a0-4a7b-9c2d-3e4f5a6b7ca0", Salt: "layer-salt", BucketCount: 1000}
	decisionHoldout = bucketing.Slot{ID: "5a1d0c3e-00b0-4a7b-9c2d-3e4f5a6b7cb0", Salt: "holdout-salt", BucketCount: 1000, Start: 0, End: 200}
)

// addLayered adds the holdout and layer cases, every reason alone and
// combined: two experiments sharing a layer ([0, 0.4) and [0.4, 1)), one
// in the holdout's scope only, a stopped one in both (the lifecycle
// first), a targeted one in both, and a targeted one in both after a weight
// change whose assigned filter keeps assigned users in although the
// holdout (grown since) or the targeting would keep them out. Expected
// answers follow the rules (doc.go, "Decision") from Slot.Holds and the
// maps, not from Evaluate.
func addLayered(ds *Decisions) error {
	alloc := []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}}
	m, err := bucketing.InitialMap(alloc, decisionBuckets)
	if err != nil {
		return err
	}
	inLayer := func(start, end uint32) *bucketing.Slot {
		l := decisionLayer
		l.Start, l.End = start, end
		return &l
	}
	left := decisionExperiment("5a1d0c3e-0010-4a7b-9c2d-3e4f5a6b7c10", "layer-left", "running", alloc, m)
	left.Layer = inLayer(0, 400)
	right := decisionExperiment("5a1d0c3e-0011-4a7b-9c2d-3e4f5a6b7c11", "layer-right", "running", alloc, m)
	right.Layer = inLayer(400, 1000)
	held := decisionExperiment("5a1d0c3e-0012-4a7b-9c2d-3e4f5a6b7c12", "held", "running", alloc, m)
	held.Holdouts = []bucketing.Slot{decisionHoldout}
	stopped := decisionExperiment("5a1d0c3e-0013-4a7b-9c2d-3e4f5a6b7c13", "layered-stopped", "stopped", alloc,
		bucketing.Map{{Variant: "control", Start: 0, End: decisionBuckets}})
	stopped.Reason, stopped.Holdouts, stopped.Layer = "stopped", []bucketing.Slot{decisionHoldout}, inLayer(0, 400)
	all := decisionExperiment("5a1d0c3e-0014-4a7b-9c2d-3e4f5a6b7c14", "layered-targeted", "running", alloc, m)
	all.Holdouts, all.Layer, all.Targeting = []bucketing.Slot{decisionHoldout}, inLayer(400, 1000), proUsersInEurope
	ds.Configs[0].Experiments = append(ds.Configs[0].Experiments, left, right, held, stopped, all)

	type kind struct {
		exp                 string
		holdout, layer, tgt bool // held out, outside the range, not matching
	}
	taken := map[kind]int{}
	for i := range 2000 {
		u := fmt.Sprintf("layered-%d", i)
		a := targetedAttributes[i%len(targetedAttributes)]
		h := decisionHoldout.Holds(u)
		for _, e := range []Experiment{left, right, held, stopped, all} {
			out := e.Layer != nil && !e.Layer.Holds(u)
			k := kind{e.Name, h && e.Holdouts != nil, out, e.Targeting != nil && !a.match}
			if taken[k] == 2 {
				continue
			}
			taken[k]++
			c := DecisionCase{Experiment: e.Name, UserID: u, Attributes: a.attrs, Variant: "control",
				HoldoutExposures: holdoutExposures(e.Status == "running" && e.Holdouts != nil, u)}
			switch {
			case e.Status != "running":
				c.ReasonCode = bucketing.ReasonNotRunning
			case k.holdout:
				c.ReasonCode = bucketing.ReasonHoldout
			case k.layer:
				c.ReasonCode = bucketing.ReasonLayer
			case k.tgt:
				c.ReasonCode = bucketing.ReasonNotTargeted
			default:
				c.Variant, _ = m.Lookup(bucketing.Bucket(e.ID, e.Salt, u, decisionBuckets))
				c.InExperiment, c.ReasonCode = true, bucketing.ReasonBucketed
			}
			ds.Cases = append(ds.Cases, c)
		}
	}
	// Every combination the two layer experiments and the targeted one can
	// meet: in range or not, held out or not, matching or not.
	for _, b := range []bool{false, true} {
		for _, k := range []kind{{"layer-left", false, b, false}, {"layer-right", false, b, false}, {"held", b, false, false}} {
			if taken[k] == 0 {
				return fmt.Errorf("decisions: no layered user of kind %+v", k)
			}
		}
		for _, h := range []bool{false, true} {
			for _, t := range []bool{false, true} {
				if k := (kind{"layered-targeted", h, b, t}); taken[k] == 0 {
					return fmt.Errorf("decisions: no layered user of kind %+v", k)
				}
			}
		}
	}
	return addLayeredAssigned(ds, inLayer(400, 1000))
}

// addLayeredAssigned adds a targeted experiment of the layer and the
// holdout after a weight change: users assigned before (the assigned
// filter holds them) stay in whether held out or not matching; never when
// outside the range (a user the filter holds by a false positive is).
func addLayeredAssigned(ds *Decisions, layer *bucketing.Slot) error {
	sp := specs[0]
	id := "5a1d0c3e-0015-4a7b-9c2d-3e4f5a6b7c15"
	before, after, err := sp.maps(decisionBuckets)
	if err != nil {
		return err
	}
	e := decisionExperiment(id, "layered-reweighted", "running", sp.after, after)
	e.Version, e.Targeting, e.Holdouts, e.Layer = 2, proUsersInEurope, []bucketing.Slot{decisionHoldout}, layer
	pins := map[string]string{}
	var list []bucketing.PinnedUser
	for i := 0; len(list) < 100; i++ {
		u := fmt.Sprintf("assigned-%d", i)
		if !layer.Holds(u) {
			continue // assigned users are in the range: ranges never move
		}
		v, _ := before.Lookup(bucketing.Bucket(id, e.Salt, u, decisionBuckets))
		pins[u] = v
		list = append(list, bucketing.PinnedUser{UserID: u, Variant: v})
	}
	e.Sticky = bucketing.BuildStickySized(id, e.Salt, decisionBuckets, after, func(string) bool { return true }, list, 2)
	if e.Sticky == nil {
		e.Sticky = &bucketing.Sticky{}
	}
	e.Sticky.Assigned = bucketing.BuildAssigned(id, e.Salt, list, 2)
	ds.Configs[0].Experiments = append(ds.Configs[0].Experiments, e)
	type kind struct{ pinned, holdout, layer, match, in bool }
	taken := map[kind]int{}
	for i := range 600 {
		u := fmt.Sprintf("assigned-%d", i)
		if i >= 300 {
			u = fmt.Sprintf("newcomer-%d", i)
		}
		a := targetedAttributes[i%len(targetedAttributes)]
		d := bucketing.Digest(id, e.Salt, u)
		mapped, _ := after.Lookup(bucketing.BucketOfDigest(&d, decisionBuckets))
		variant, pinned := pins[u]
		assigned := pinned || e.Sticky.WasAssigned(&d)
		h, out := decisionHoldout.Holds(u), !layer.Holds(u)
		c := DecisionCase{Experiment: e.Name, UserID: u, Attributes: a.attrs, Variant: "control", HoldoutExposures: holdoutExposures(!assigned, u)}
		switch {
		case h && !assigned:
			c.ReasonCode = bucketing.ReasonHoldout
		case out:
			c.ReasonCode = bucketing.ReasonLayer
		case !a.match && !assigned:
			c.ReasonCode = bucketing.ReasonNotTargeted
		default:
			if !pinned {
				variant = e.Sticky.Resolve(&d, mapped)
			}
			c.Variant, c.InExperiment, c.ReasonCode = variant, true, bucketing.ReasonBucketed
			if variant != mapped {
				c.ReasonCode = bucketing.ReasonPinned
			}
		}
		k := kind{pinned, h, out, a.match, c.InExperiment}
		if taken[k] == 2 {
			continue
		}
		taken[k]++
		ds.Cases = append(ds.Cases, c)
	}
	// Assigned users kept in although held out, and although not matching.
	for _, k := range []kind{{true, true, false, true, true}, {true, false, false, false, true}, {true, true, false, false, true}} {
		if taken[k] == 0 {
			return fmt.Errorf("decisions: no layered assigned user of kind %+v", k)
		}
	}
	return nil
}
