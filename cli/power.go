package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/expd/expd/power"
)

// experimentsPower is `expd experiments power NAME [--days N | --mde X]`.
func experimentsPower(ctx context.Context, e *env, args []string) error {
	fs := e.flags("power")
	days := fs.Int("days", 0, "the minimum detectable effect after this many more days (default 14)")
	mde := fs.Float64("mde", 0, "the further days needed to detect this relative change (0.05 is 5% of control)")
	metric := fs.String("metric", "", "one metric (default: every primary metric)")
	pos, c, err := e.setup(fs, args, 1, "EXPERIMENT: name or id")
	if err != nil {
		return err
	}
	q := url.Values{}
	// Flags given are sent as given (0 too), so the server names what it
	// refuses.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "days":
			q.Set("days", strconv.Itoa(*days))
		case "mde":
			q.Set("mde", strconv.FormatFloat(*mde, 'g', -1, 64))
		case "metric":
			q.Set("metric", *metric)
		}
	})
	path := experimentPath(pos[0]) + "/power"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return showGet(ctx, e, c, path, "power", pos[0], printPower)
}

// printPower writes one line per metric and arm: both inferences' answer
// and what sequential reading costs.
func printPower(w io.Writer, name string, p power.Answer) error {
	question := "MDE after " + strconv.Itoa(deref(p.Days)) + " more days"
	if p.MDE != nil {
		question = "days to detect a relative change of " + num(*p.MDE)
	}
	fmt.Fprintf(w, "%s: %s at %s users a day (%s data), N* %s (%s)\n\n", name, question, num(p.UsersPerDay), p.Source, num(p.NStar), p.NStarSource)
	tw := newTable(w, "METRIC", "VARIANT", "BASELINE", "FIXED HORIZON", "SEQUENTIAL", "SEQUENTIAL COST", "NOTE")
	for _, m := range p.Metrics {
		cost := "-"
		if m.SequentialCost != nil {
			cost = num(*m.SequentialCost) + "x users"
		}
		row(tw, m.Metric, m.Variant, num(m.Baseline), planCell(m.FixedHorizon, p.MDE != nil), planCell(m.Sequential, p.MDE != nil), cost, m.Problem)
	}
	return tw.Flush()
}

// planCell is a plan as the question wants it: days for an mde, the
// (relative) MDE for days.
func planCell(pl *power.Plan, wantDays bool) string {
	switch {
	case pl == nil:
		return "-"
	case wantDays && pl.Days != nil:
		return num(*pl.Days) + " days (" + num(pl.Users) + " users)"
	case wantDays:
		return num(pl.Users) + " users"
	case pl.MDERelative != nil:
		return num(pl.MDE) + " (" + num(100**pl.MDERelative) + "%)"
	}
	return num(pl.MDE)
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
