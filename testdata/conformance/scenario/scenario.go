// Package scenario builds testdata/conformance/scenario.json, the scripted
// scenario that every expd client's tests replay against a fake server of
// their own (README.md beside the file describes the steps). The expected
// variants come from the bucketing package, the server's own rules.
package scenario

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/expd/expd/bucketing"
)

// Sizes of the weight-change scenario of issue 15.
const (
	Users     = 10_000
	Pinned    = 3_000 // users 0..Pinned-1 are assigned before the change
	Tolerance = 0.015 // new users' split vs the new weights
)

// File is the whole scenario file.
type File struct {
	Format      int                 `json:"format"`
	Notes       []string            `json:"notes"`
	UserPrefix  string              `json:"user_prefix"`
	Users       int                 `json:"users"`
	Pinned      int                 `json:"pinned_before_change"`
	Tolerance   float64             `json:"tolerance"`
	Configs     []Config            `json:"configs"`
	Expected    map[string]Expected `json:"expected"`
	StickyCases []StickyCase        `json:"sticky_cases"`
	Decisions   Decisions           `json:"decisions"`
	Steps       []Step              `json:"steps"`
}

// Config is a GET /v1/config body.
type Config struct {
	ConfigVersion int64        `json:"config_version"`
	Experiments   []Experiment `json:"experiments"`
}

// Experiment is one experiment of a config body (the fields clients read).
type Experiment struct {
	ID          string                    `json:"id"`
	Name        string                    `json:"name"`
	Version     int                       `json:"version"`
	Status      string                    `json:"status"`
	Reason      string                    `json:"reason,omitempty"`
	Salt        string                    `json:"salt"`
	BucketCount uint32                    `json:"bucket_count"`
	Control     string                    `json:"control"`
	Allocation  []bucketing.Slice         `json:"allocation"`
	BucketMap   bucketing.Map             `json:"bucket_map"`
	Sticky      *bucketing.Sticky         `json:"sticky,omitempty"`
	Targeting   map[string]any            `json:"targeting,omitempty"`
	Holdouts    []bucketing.Slot          `json:"holdouts,omitempty"`
	Layer       *bucketing.Slot           `json:"layer,omitempty"`
	Variants    map[string]map[string]any `json:"variants"`
	Metrics     []any                     `json:"metrics"`
}

// Expected gives, per config, every user's variant as one digit per user:
// user i's variant is Variants[ByConfig[c][i] - '0'].
type Expected struct {
	Variants []string `json:"variants"`
	ByConfig []string `json:"by_config"`
	// Weights after the change, for the new users' split.
	WeightsAfter map[string]float64 `json:"weights_after"`
}

// StickyCase pins down Resolve with small filters (many false positives
// and exceptions): the user's variant under Sticky is Variant.
type StickyCase struct {
	ExperimentID string            `json:"experiment_id"`
	Salt         string            `json:"salt"`
	BucketCount  uint32            `json:"bucket_count"`
	Map          bucketing.Map     `json:"map"`
	Sticky       *bucketing.Sticky `json:"sticky"`
	Users        []string          `json:"users"`
	Variants     []string          `json:"variants"`
}

// Step is one scripted action; README.md lists the ops.
type Step struct {
	Op         string         `json:"op"`
	Config     *int           `json:"config,omitempty"`
	Experiment string         `json:"experiment,omitempty"`
	From       *int           `json:"from,omitempty"`
	To         *int           `json:"to,omitempty"`
	Version    int64          `json:"version,omitempty"`
	Type       string         `json:"type,omitempty"`
	Count      *int           `json:"count,omitempty"`
	Event      string         `json:"event,omitempty"`
	Payload    map[string]any `json:"payload,omitempty"`
	Expect     map[string]any `json:"expect,omitempty"`
}

// UserID is user i of the scenario.
func UserID(i int) string { return "user-" + strconv.Itoa(i) }

type experimentSpec struct {
	id, name, salt string
	before, after  []bucketing.Slice
}

var specs = []experimentSpec{
	{"7f3c2a10-5b1e-4d8a-9c3f-2e6b8d4a1f00", "two-arms", "conformance",
		slices2("control", 50, "treatment", 50), slices2("control", 60, "treatment", 40)},
	{"1d9e8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c60", "three-arms", "conformance-3",
		[]bucketing.Slice{{Variant: "control", Weight: 34}, {Variant: "short", Weight: 33}, {Variant: "long", Weight: 33}},
		[]bucketing.Slice{{Variant: "control", Weight: 20}, {Variant: "short", Weight: 30}, {Variant: "long", Weight: 50}}},
}

// maps are the experiment's bucket maps before and after its weight change.
func (sp experimentSpec) maps(buckets uint32) (before, after bucketing.Map, err error) {
	if before, err = bucketing.InitialMap(sp.before, buckets); err != nil {
		return nil, nil, err
	}
	after, err = bucketing.Rebalance(before, sp.after, buckets)
	return before, after, err
}

func slices2(a string, wa float64, b string, wb float64) []bucketing.Slice {
	return []bucketing.Slice{{Variant: a, Weight: wa}, {Variant: b, Weight: wb}}
}

// Build makes the scenario.
func Build() (*File, error) {
	f := &File{Format: 1, UserPrefix: "user-", Users: Users, Pinned: Pinned, Tolerance: Tolerance,
		Configs: []Config{{ConfigVersion: 1}, {ConfigVersion: 2}}, Expected: map[string]Expected{},
		Notes: []string{
			"Rules: bucketing/doc.go (bucket, map, sticky filters). Regenerate with `go generate ./bucketing`.",
			"configs[0] is every experiment before the weight change, configs[1] after it, with the sticky filters built from the pins of users 0..pinned_before_change-1 (assigned under configs[0]).",
			"expected[name].by_config[c][i] is the index into expected[name].variants of user i's variant under configs[c].",
			"decisions: each case is one user's decision (bucketing.Evaluate: variant, in_experiment, reason_code) in an experiment of decisions.configs[config], with the user's attributes; clients decide it by local assignment.",
			"steps: the script every client replays against its own fake server; testdata/conformance/README.md describes each op.",
		}}
	for _, sp := range specs {
		if err := addExperiment(f, sp); err != nil {
			return nil, err
		}
	}
	cases, err := stickyCases()
	if err != nil {
		return nil, err
	}
	f.StickyCases = cases
	if f.Decisions, err = decisions(); err != nil {
		return nil, err
	}
	f.Steps = steps()
	return f, nil
}

func addExperiment(f *File, sp experimentSpec) error {
	const buckets = 10_000
	before, after, err := sp.maps(buckets)
	if err != nil {
		return err
	}
	exp := Experiment{ID: sp.id, Name: sp.name, Version: 1, Status: "running", Salt: sp.salt, BucketCount: buckets,
		Control: sp.before[0].Variant, Allocation: sp.before, BucketMap: before, Variants: map[string]map[string]any{}, Metrics: []any{}}
	variants := make([]string, len(sp.before))
	for i, s := range sp.before {
		variants[i] = s.Variant
		exp.Variants[s.Variant] = map[string]any{"prompt": "You are the " + s.Variant + " assistant.", "variables": map[string]any{"arm": s.Variant}}
	}
	var pins []bucketing.PinnedUser
	digits := [2][]byte{}
	for i := range Users {
		v, _ := before.Lookup(bucketing.Bucket(sp.id, sp.salt, UserID(i), buckets))
		digits[0] = append(digits[0], digit(variants, v))
		if i < Pinned {
			pins = append(pins, bucketing.PinnedUser{UserID: UserID(i), Variant: v})
		}
	}
	changed := exp
	changed.Version, changed.Allocation, changed.BucketMap = 2, sp.after, after
	changed.Sticky = bucketing.BuildSticky(sp.id, sp.salt, buckets, after, func(string) bool { return true }, pins)
	counts := map[string]int{}
	for i := range Users {
		d := bucketing.Digest(sp.id, sp.salt, UserID(i))
		mapped, _ := after.Lookup(bucketing.BucketOfDigest(&d, buckets))
		v := changed.Sticky.Resolve(&d, mapped)
		if i < Pinned && v != pins[i].Variant {
			return fmt.Errorf("%s: pinned user %d moved", sp.name, i)
		}
		if i >= Pinned {
			counts[v]++
		}
		digits[1] = append(digits[1], digit(variants, v))
	}
	total, weights := 0.0, map[string]float64{}
	for _, s := range sp.after {
		total += s.Weight
	}
	for _, s := range sp.after {
		weights[s.Variant] = s.Weight / total
		share := float64(counts[s.Variant]) / float64(Users-Pinned)
		if share < weights[s.Variant]-Tolerance || share > weights[s.Variant]+Tolerance {
			return fmt.Errorf("%s: new users' share of %s is %.4f, want %.2f±%.3f", sp.name, s.Variant, share, weights[s.Variant], Tolerance)
		}
	}
	f.Configs[0].Experiments = append(f.Configs[0].Experiments, exp)
	f.Configs[1].Experiments = append(f.Configs[1].Experiments, changed)
	f.Expected[sp.name] = Expected{Variants: variants, ByConfig: []string{string(digits[0]), string(digits[1])}, WeightsAfter: weights}
	return nil
}

func digit(variants []string, v string) byte {
	for i, name := range variants {
		if name == v {
			return byte('0' + i)
		}
	}
	panic("unknown variant " + v)
}

// stickyCases use filters of 2 bits per member (a false-positive rate near
// 40 %), so that the filter order and the exceptions are exercised.
func stickyCases() ([]StickyCase, error) {
	var cases []StickyCase
	for n, sp := range specs {
		const buckets = 1000
		before, after, err := sp.maps(buckets)
		if err != nil {
			return nil, err
		}
		var pins []bucketing.PinnedUser
		c := StickyCase{ExperimentID: sp.id, Salt: sp.salt, BucketCount: buckets, Map: after}
		for i := range 600 {
			u := fmt.Sprintf("sticky-%d-%d", n, i)
			if i < 300 {
				v, _ := before.Lookup(bucketing.Bucket(sp.id, sp.salt, u, buckets))
				pins = append(pins, bucketing.PinnedUser{UserID: u, Variant: v})
			}
			c.Users = append(c.Users, u)
		}
		c.Sticky = bucketing.BuildStickySized(sp.id, sp.salt, buckets, after, func(string) bool { return true }, pins, 2)
		for i, u := range c.Users {
			d := bucketing.Digest(sp.id, sp.salt, u)
			mapped, _ := after.Lookup(bucketing.BucketOfDigest(&d, buckets))
			v := c.Sticky.Resolve(&d, mapped)
			if i < len(pins) && v != pins[i].Variant {
				return nil, fmt.Errorf("sticky case %d: pinned user %s moved", n, u)
			}
			c.Variants = append(c.Variants, v)
		}
		if len(c.Sticky.Exceptions) == 0 {
			return nil, fmt.Errorf("sticky case %d: no exceptions; pick a smaller filter", n)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

func intp(i int) *int { return &i }

// steps is the script; README.md beside the file explains each op.
func steps() []Step {
	return []Step{
		{Op: "serve_config", Config: intp(0)},
		{Op: "start_client"},
		{Op: "wait_config_version", Version: 1},
		{Op: "assign", Experiment: "two-arms", From: intp(0), To: intp(Pinned), Config: intp(0)},
		{Op: "assign", Experiment: "three-arms", From: intp(0), To: intp(Pinned), Config: intp(0)},
		{Op: "assign", Experiment: "two-arms", From: intp(0), To: intp(Pinned), Config: intp(0)},
		{Op: "flush"},
		{Op: "expect_events", Type: "exposure", Count: intp(2 * Pinned)},
		{Op: "get_prompt", Experiment: "two-arms", From: intp(0), To: intp(10), Config: intp(0)},
		{Op: "flush"},
		{Op: "expect_events", Type: "exposure", Count: intp(0)},
		{Op: "serve_config", Config: intp(1)},
		{Op: "ack_config_version", Version: 2},
		{Op: "track", Event: "purchase", Payload: map[string]any{"experiment_id": "two-arms", "user_id": UserID(7), "value": 9.5},
			Expect: map[string]any{"type": "business_event", "business_metric": "purchase", "experiment_id": specs[0].id, "user_id": UserID(7), "value": 9.5}},
		{Op: "flush"},
		{Op: "expect_events", Type: "business_event", Count: intp(1)},
		{Op: "wait_config_version", Version: 2},
		{Op: "assign", Experiment: "two-arms", From: intp(0), To: intp(Users), Config: intp(1)},
		{Op: "assign", Experiment: "three-arms", From: intp(0), To: intp(Users), Config: intp(1)},
		{Op: "flush"},
		{Op: "expect_events", Type: "exposure", Count: intp(2 * (Users - Pinned))},
		{Op: "server_down"},
		{Op: "track_many", Event: "conversion", Experiment: "two-arms", From: intp(0), To: intp(50)},
		{Op: "close_client"},
		{Op: "expect_spilled", Count: intp(50)},
		{Op: "server_up"},
		{Op: "start_client"},
		{Op: "wait_config_version", Version: 2},
		{Op: "flush"},
		{Op: "expect_events", Type: "business_event", Count: intp(50), Expect: map[string]any{"same_as_spilled": true}},
		{Op: "close_client"},
	}
}

// Marshal encodes the file with two-space indentation and raw UTF-8.
func (f *File) Marshal() ([]byte, error) {
	raw, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return nil, err
	}
	return append(raw, '\n'), nil
}
