package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/expd/expd/plans"
)

// unlimited is the rate of an "off" override.
var unlimited = Rate{PerSecond: math.Inf(1)}

// Overrides replace the plan table's rates for some plans.
type Overrides map[plans.Name]Rate

// ParseOverrides reads the EXPD_RATE_LIMITS syntax: comma-separated
// "<plan>=<per_second>:<burst>" or "<plan>=off", where plan "*" stands for
// every plan and named plans win over "*". Example:
// "free=20:40,enterprise=off". An empty spec overrides nothing.
func ParseOverrides(spec string) (Overrides, error) {
	out := Overrides{}
	var all *Rate
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("rate limit %q: want <plan>=<per_second>:<burst> or <plan>=off", item)
		}
		r, err := parseRate(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("rate limit %q: %w", item, err)
		}
		name = strings.TrimSpace(name)
		if name == "*" {
			all = &r
			continue
		}
		plan, err := plans.Parse(name)
		if err != nil {
			return nil, fmt.Errorf("rate limit %q: %w", item, err)
		}
		out[plan] = r
	}
	if all != nil {
		for _, l := range plans.All() {
			if _, named := out[l.Plan]; !named {
				out[l.Plan] = *all
			}
		}
	}
	return out, nil
}

func parseRate(s string) (Rate, error) {
	if s == "off" {
		return unlimited, nil
	}
	perSecond, burst, ok := strings.Cut(s, ":")
	if !ok {
		return Rate{}, fmt.Errorf("want <per_second>:<burst> or off")
	}
	ps, err := strconv.ParseFloat(perSecond, 64)
	if err != nil || ps <= 0 || ps > 1e9 {
		return Rate{}, fmt.Errorf("per_second must be a number in (0, 1e9]")
	}
	b, err := strconv.Atoi(burst)
	if err != nil || b < 1 {
		return Rate{}, fmt.Errorf("burst must be an integer >= 1")
	}
	return Rate{PerSecond: ps, Burst: b}, nil
}
